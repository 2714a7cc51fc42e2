//! `+++` TOML front matter at the very start of a spec.
//! design: spec.front-matter

use specc_ir::{Diagnostic, FileId, FrontMatter, Span, codes};

/// Splits off a UTF-8 byte-order mark and the front matter. Returns the front matter (when
/// present and valid) and the byte offset where the Markdown body starts. An unclosed or
/// invalid block is diagnosed; the body then starts after the block if it was closed, or
/// where the block opened if it never was.
pub(crate) fn split(
    file: FileId,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Option<FrontMatter>, usize) {
    let bom = if text.starts_with('\u{feff}') {
        '\u{feff}'.len_utf8()
    } else {
        0
    };
    let Some(open_len) = delimiter_line(text, bom) else {
        return (None, bom);
    };
    let content_start = bom + open_len;
    let mut at = content_start;
    let close = loop {
        if at >= text.len() {
            break None;
        }
        if let Some(len) = delimiter_line(text, at) {
            break Some((at, at + len));
        }
        at = text[at..].find('\n').map_or(text.len(), |p| at + p + 1);
    };
    let Some((close_start, body_start)) = close else {
        diagnostics.push(
            Diagnostic::new(codes::INVALID_FRONT_MATTER, "front matter is never closed")
                .with_primary(Span::new(file, bom..bom + 3), "opened here")
                .with_help("end the TOML front matter with a line holding only `+++`"),
        );
        return (None, bom);
    };
    let toml_text = &text[content_start..close_start];
    match toml::from_str::<toml::Table>(toml_text) {
        Ok(table) => {
            let table = table.into_iter().map(|(k, v)| (k, to_json(v))).collect();
            (
                Some(FrontMatter {
                    span: Span::new(file, bom..body_start),
                    table,
                }),
                body_start,
            )
        }
        Err(err) => {
            let range = err.span().unwrap_or(0..toml_text.len());
            let span = Span::new(file, content_start + range.start..content_start + range.end);
            let message = first_line(err.message());
            diagnostics.push(
                Diagnostic::new(
                    codes::INVALID_FRONT_MATTER,
                    "front matter is not valid TOML",
                )
                .with_primary(span, message)
                .with_secondary(Span::new(file, bom..bom + 3), "front matter starts here")
                .with_help(
                    "fix the TOML between the `+++` lines; the rest of the spec was still read",
                ),
            );
            (None, body_start)
        }
    }
}

/// If a line consisting of `+++` (and optional trailing white space) starts at `at`,
/// its length including the line break.
fn delimiter_line(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    let line_end = rest.find('\n').map_or(rest.len(), |p| p + 1);
    (rest[..line_end].trim_end() == "+++").then_some(line_end)
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").trim().to_owned()
}

fn to_json(v: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.into_iter().map(to_json).collect()),
        toml::Value::Table(t) => J::Object(t.into_iter().map(|(k, v)| (k, to_json(v))).collect()),
    }
}
