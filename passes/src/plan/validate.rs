//! What a planner's answer names must be safe to use as a name: child keys become task ids
//! and directory names, decision ids become file names and headings, scopes become globs
//! the tools enforce. A model (a sloppy one, or a hostile one) can answer anything, so each
//! is checked before it is used, and a work leaf must say what to do and where.
//! design: passes.plan-validation

use specc_ir::plan::{ChildKind, PlannerAnswer};
use specc_ir::{Diagnostic, codes};

use super::words::task_name;

/// Longest child key and decision id accepted.
const MAX_NAME: usize = 64;

/// A child key: letters, digits, `.`, `_`, `-`, starting with a letter or digit, no `..`.
pub fn is_valid_key(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && key.len() <= MAX_NAME
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !key.contains("..")
}

/// A decision id: dot-separated parts of letters, digits, `_` and `-`, each starting with a
/// letter or digit (`storage.page-size`); a part may hold `/`-separated segments of the same
/// kind, as a spec's own `{#storage/format}` may (never an empty segment, so never `..`).
pub fn is_valid_decision_id(id: &str) -> bool {
    id.len() <= 2 * MAX_NAME
        && id.split(['.', '/']).all(|segment| {
            segment
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        })
}

/// Why `scope` is not a relative, normalised path or glob inside the repository, if it is not.
pub fn scope_problem(scope: &str) -> Option<&'static str> {
    if scope.trim().is_empty() {
        return Some("is empty");
    }
    if scope.starts_with('/') || scope.starts_with('~') {
        return Some("is absolute");
    }
    if scope.trim() != scope {
        return Some("starts or ends with white space");
    }
    if scope.contains('\\') || scope.chars().any(|c| c.is_control() || invisible(c)) {
        return Some("holds a backslash, a control character or an invisible one");
    }
    let b = scope.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return Some("is absolute");
    }
    for part in scope.split('/') {
        match part {
            "" => return Some("has an empty part (`//` or a trailing `/`)"),
            "." => return Some("has a `.` part"),
            ".." => return Some("leaves the repository (`..`)"),
            _ => {}
        }
    }
    None
}

/// Characters that change how a text reads without showing: zero widths, joiners, bidi
/// controls, the byte-order mark.
fn invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

/// Work leaves with no instructions or no write scope, keys and decision ids that are not
/// names, and scopes that are not relative paths inside the repository.
pub fn check_names_and_scopes(node: &str, answer: &PlannerAnswer) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let at = task_name(node);
    for d in &answer.decisions {
        if !is_valid_decision_id(&d.id) {
            out.push(
                Diagnostic::new(
                    codes::INVALID_DECISION_ID,
                    format!("the decision id `{}` decided under {at} is not a dotted name", short(&d.id)),
                )
                .with_help("use dot-separated parts of letters, digits, `_` and `-`, like `storage.page-size`"),
            );
        }
    }
    for c in &answer.children {
        if !c.key.is_empty() && !c.key.contains('/') && !is_valid_key(&c.key) {
            out.push(
                Diagnostic::new(
                    codes::INVALID_CHILD_KEY,
                    format!("the key `{}` of a child under {at} is not a short name", short(&c.key)),
                )
                .with_help("a key is up to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit: it names the task"),
            );
        }
        let scopes = c
            .write_scope
            .iter()
            .map(|s| ("write", s))
            .chain(c.read_scope.iter().map(|s| ("read", s)));
        for (kind, scope) in scopes {
            if let Some(problem) = scope_problem(scope) {
                out.push(
                    Diagnostic::new(
                        codes::INVALID_SCOPE,
                        format!("the {kind} scope `{}` of `{}` under {at} {problem}", short(scope), short(&c.key)),
                    )
                    .with_help("a scope is a path or glob relative to the repository's root, like `src/store/**`"),
                );
            }
        }
        if c.kind == ChildKind::Work {
            let missing = match (c.instructions.trim().is_empty(), c.write_scope.is_empty()) {
                (true, true) => Some("no instructions and no write scope"),
                (true, false) => Some("no instructions"),
                (false, true) => Some("no write scope"),
                (false, false) => None,
            };
            if let Some(missing) = missing {
                out.push(
                    Diagnostic::new(
                        codes::EMPTY_WORK_LEAF,
                        format!("the work leaf `{}` under {at} has {missing}", short(&c.key)),
                    )
                    .with_help("a work leaf says what to do (`instructions`) and which files it may write (`write_scope`)"),
                );
            }
        }
    }
    out
}

/// A model's string, cut for a message.
fn short(s: &str) -> String {
    super::words::cut(s, 80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["scaffold", "cli-tests", "v2.parser", "a_b", "X1"] {
            assert!(is_valid_key(ok), "{ok}");
        }
        for bad in [
            "workflow is not the most precise term for it.",
            "x/../../specc-pwned.y",
            "..",
            ".hidden",
            "-flag",
            "a..b",
            "",
        ] {
            assert!(!is_valid_key(bad), "{bad}");
        }
        for ok in [
            "storage.page-size",
            "textstats.cli",
            "a",
            "raft.log_2",
            "storage/format",
        ] {
            assert!(is_valid_decision_id(ok), "{ok}");
        }
        for bad in [
            "x/../../specc-pwned.y",
            "a..b",
            ".a",
            "a.",
            "a b",
            "",
            "é.x",
        ] {
            assert!(!is_valid_decision_id(bad), "{bad}");
        }
    }

    #[test]
    fn scopes() {
        for ok in [
            "src/**",
            "Cargo.toml",
            "tests/*.rs",
            ".gitignore",
            "a/.github/x.yml",
        ] {
            assert_eq!(scope_problem(ok), None, "{ok}");
        }
        for bad in [
            "/etc/shadow",
            "../../../etc/passwd",
            "/root/.ssh",
            "~/.ssh",
            "src/../..",
            "./src",
            "src//a",
            "src/",
            "C:\\x",
            "c:/x",
            "",
            " ",
            " /etc/shadow",
            "src/\u{202E}sr.txt",
            "src/a\u{200B}",
        ] {
            assert!(scope_problem(bad).is_some(), "{bad}");
        }
    }
}
