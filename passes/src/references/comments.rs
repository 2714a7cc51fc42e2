//! The reference syntax inside a comment's text, and the line-comment fallback for files no
//! tree-sitter grammar covers.
//! design: design-docs.references

use specc_ir::{FileId, Span};

/// One reference found in a comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// The decision id referred to.
    pub id: String,
    /// The 8-hex pin after `@`, when the reference is pinned.
    pub pin: Option<String>,
    /// The reference as written: `design:`, the id and the pin.
    pub span: Span,
}

/// The references in `comment`, a comment's text that starts at byte `base` of the file.
pub fn in_comment(file: FileId, comment: &str, base: usize, out: &mut Vec<Reference>) {
    let mut from = 0;
    while let Some(rel) = comment[from..].find("design:") {
        let start = from + rel;
        from = start + "design:".len();
        // `mydesign:` is not the keyword.
        if comment[..start]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &comment[from..];
        let lead = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let id_start = from + lead;
        let id_len = comment[id_start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
            .unwrap_or(comment.len() - id_start);
        // A trailing `.` ends the sentence, not the id.
        let id = comment[id_start..id_start + id_len].trim_end_matches('.');
        if id.is_empty() || !id.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            continue;
        }
        let mut end = id_start + id.len();
        let pin = comment[end..].strip_prefix('@').and_then(|p| {
            let hex = p.get(..8)?;
            let whole = hex.chars().all(|c| c.is_ascii_hexdigit())
                && !p[8..].starts_with(|c: char| c.is_ascii_alphanumeric());
            whole.then(|| hex.to_ascii_lowercase())
        });
        if pin.is_some() {
            end += 9;
        }
        out.push(Reference {
            id: id.to_owned(),
            pin,
            span: Span::new(file, base + start..base + end),
        });
        from = end;
    }
}

/// Line-comment markers for a file, by extension; `None` when specc knows no comment syntax
/// for it (the file is then not searched).
pub fn line_comment_markers(extension: &str) -> Option<&'static [&'static str]> {
    Some(match extension {
        "rs" | "c" | "h" | "cc" | "cpp" | "hpp" | "go" | "js" | "mjs" | "ts" | "tsx" | "jsx"
        | "java" | "kt" | "swift" | "scala" | "cs" | "proto" => &["//"],
        "py" | "sh" | "bash" | "rb" | "pl" | "toml" | "yaml" | "yml" | "r" | "mk" | "cmake"
        | "dockerfile" | "conf" | "ini" => &["#"],
        "sql" | "lua" | "hs" | "elm" => &["--"],
        "lisp" | "el" | "clj" | "scm" | "asm" | "s" => &[";"],
        "tex" | "erl" => &["%"],
        _ => return None,
    })
}

/// The fallback: references in the line comments of `text`, found line by line. A marker
/// inside a string literal (`"…"`, `'…'`, with `\` escapes) starts no comment.
pub fn in_line_comments(file: FileId, text: &str, markers: &[&str]) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        if line.contains("design:")
            && let Some(at) = comment_start(line, markers)
        {
            in_comment(file, &line[at..], line_start + at, &mut out);
        }
        line_start += line.len();
    }
    out
}

/// Where the first line comment of `line` starts, skipping string literals.
fn comment_start(line: &str, markers: &[&str]) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) => {
                if b == b'\\' {
                    i += 1;
                } else if b == q {
                    quote = None;
                }
            }
            None if b == b'"' || b == b'\'' => {
                // `'` is also Rust's lifetime and a char literal; a quote with no partner on
                // the line opens no string.
                if line[i + 1..].contains(b as char) {
                    quote = Some(b);
                }
            }
            None => {
                if markers.iter().any(|m| line[i..].starts_with(m)) {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}
