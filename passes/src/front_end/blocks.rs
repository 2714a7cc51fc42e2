//! Fenced code blocks: acceptance checks and examples.
//! design: spec.test-runners

use specc_ir::{AcceptanceCheck, Diagnostic, Example, FileId, Span, codes};

use super::requirements::KNOWN_RUNNERS;

/// What a fenced block's info string makes of it.
pub(crate) enum Block {
    Check(AcceptanceCheck),
    Example(Example),
}

/// The info string's words: split on white space, commas and braces (`sh test`, `sh,test`,
/// `{.sh .test}`), with a leading `.` dropped.
fn words(info: &str) -> impl Iterator<Item = &str> {
    info.split(|c: char| c.is_whitespace() || matches!(c, ',' | '{' | '}'))
        .map(|w| w.trim_start_matches('.'))
        .filter(|w| !w.is_empty())
}

/// Classifies a fenced block. `fence` is the span of the fence line, used for diagnostics.
pub(crate) fn classify(
    file: FileId,
    info: &str,
    code: String,
    span: Span,
    fence: Span,
    diagnostics: &mut Vec<Diagnostic>,
) -> Block {
    if !words(info).any(|w| w == "test") {
        let lang = words(info).next().map(str::to_owned);
        return Block::Example(Example { lang, code, span });
    }
    let runner = words(info).find(|w| *w != "test").unwrap_or("").to_owned();
    if !KNOWN_RUNNERS.contains(&runner.as_str()) {
        diagnostics.push(unknown_runner(file, &runner, fence));
    }
    Block::Check(AcceptanceCheck { runner, code, span })
}

#[cold]
fn unknown_runner(_file: FileId, runner: &str, fence: Span) -> Diagnostic {
    let known = KNOWN_RUNNERS.join(", ");
    let (message, label) = if runner.is_empty() {
        (
            "acceptance check names no runner".to_owned(),
            "no language before `test`".to_owned(),
        )
    } else {
        (
            format!("unknown test runner `{runner}`"),
            format!("`{runner}` is not a runner specc knows"),
        )
    };
    Diagnostic::new(codes::UNKNOWN_TEST_RUNNER, message)
        .with_primary(fence, label)
        .with_help(format!(
            "write the runner before `test`, e.g. ```sh test; known runners: {known}; or declare one in specc.toml: [runners] sql = \"sqlite3 :memory: < {{file}}\""
        ))
}
