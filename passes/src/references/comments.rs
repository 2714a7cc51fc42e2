//! The reference syntax inside a comment's text, and the line-comment fallback for files no
//! tree-sitter grammar covers. Two kinds: `design: <id>[@pin][, <id>…]` names design decisions,
//! `req: <id>[, <id>…]` the spec's requirements (a tag such as `R-3`, or a full id such as
//! `storage/pages#2`).
//! design: design-docs.references
//! design: passes.requirement-references

use specc_ir::{FileId, Span};

/// What a reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefKind {
    /// `design: <id>`: a design decision.
    Decision,
    /// `req: <id>`: a requirement of the spec.
    Requirement,
}

/// One reference found in a comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub kind: RefKind,
    /// The decision or requirement id referred to.
    pub id: String,
    /// The 8-hex pin after `@`, when a decision reference is pinned.
    pub pin: Option<String>,
    /// The reference as written: `design:` (or `req:`), the id and the pin.
    pub span: Span,
}

const DESIGN: &[u8] = b"design:";
const REQ: &[u8] = b"req:";

/// Whether `text` may hold a reference: a `design:`, or a `req:` followed by something
/// shaped like a requirement id (so `fn f(req: Request)` does not count). The cheap test
/// that spares most files a parse.
pub fn may_hold_references(text: &[u8]) -> bool {
    memchr::memmem::find(text, DESIGN).is_some()
        || memchr::memmem::find_iter(text, REQ).any(|at| plausible_req(text, at))
}

/// Where the keywords of possible references start in `text`, in order.
pub(crate) fn keyword_positions(text: &[u8]) -> Vec<usize> {
    let mut at: Vec<usize> = memchr::memmem::find_iter(text, DESIGN).collect();
    at.extend(memchr::memmem::find_iter(text, REQ).filter(|&p| plausible_req(text, p)));
    at.sort_unstable();
    at
}

/// The length of the keyword at `at` (`design:` or `req:`).
pub(crate) fn keyword_len(text: &[u8], at: usize) -> usize {
    if text[at..].starts_with(DESIGN) {
        DESIGN.len()
    } else {
        REQ.len()
    }
}

/// Whether the `req:` at `at` is followed by a requirement id.
fn plausible_req(text: &[u8], at: usize) -> bool {
    let rest = &text[at + REQ.len()..];
    let lead = rest
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count();
    std::str::from_utf8(&rest[lead..rest.len().min(lead + 200)])
        .or_else(|e| std::str::from_utf8(&rest[lead..lead + e.valid_up_to()]))
        .is_ok_and(|s| requirement_id_len(s).is_some())
}

/// The length in bytes of the requirement id `s` starts with: a tag (`R-12`: capitals, `-`,
/// digits) or a full id (`node/path#3`, `#1` for the spec's root; a node path is letters and
/// digits of any script with `-`, `_`, `.` and `/`, as the front end makes them), not
/// followed by more of an id.
pub fn requirement_id_len(s: &str) -> Option<usize> {
    let id_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '/' | '#');
    let b = s.as_bytes();
    let caps = b.iter().take_while(|c| c.is_ascii_uppercase()).count();
    if caps > 0 && b.get(caps) == Some(&b'-') {
        let digits = b[caps + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let len = caps + 1 + digits;
        if digits > 0 && !s[len..].starts_with(id_char) {
            return Some(len);
        }
    }
    // A full id: a node path (possibly one that looks like a tag, `API-2/list`), `#`, digits.
    let path: usize = s
        .char_indices()
        .take_while(|&(_, c)| c.is_alphanumeric() || matches!(c, '.' | '_' | '/' | '-'))
        .last()
        .map_or(0, |(i, c)| i + c.len_utf8());
    if !s[path..].starts_with('#') {
        return None;
    }
    let digits = b[path + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let len = path + 1 + digits;
    (digits > 0 && !s[len..].starts_with(id_char)).then_some(len)
}

/// The references in `comment`, a comment's text that starts at byte `base` of the file.
pub fn in_comment(file: FileId, comment: &str, base: usize, out: &mut Vec<Reference>) {
    for at in keyword_positions(comment.as_bytes()) {
        // `mydesign:` and `prereq:` are not the keywords.
        if comment[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        if comment.as_bytes()[at..].starts_with(DESIGN) {
            decision_at(file, comment, base, at, out);
        } else {
            requirements_at(file, comment, base, at, out);
        }
    }
}

/// The `design: <id>[@pin][, <id>[@pin]…]` whose keyword is at `start`. An id after a comma
/// counts only if it looks like a decision's (dotted, a part of two characters or more), so
/// prose after a comma (`design: <id>, e.g. …`) names nothing.
fn decision_at(file: FileId, comment: &str, base: usize, start: usize, out: &mut Vec<Reference>) {
    let Some((_, mut end, id, pin)) = decision_id(comment, start + DESIGN.len()) else {
        return;
    };
    out.push(Reference {
        kind: RefKind::Decision,
        id,
        pin,
        span: Span::new(file, base + start..base + end),
    });
    loop {
        let rest = &comment[end..];
        let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if !rest[gap..].starts_with(',') {
            return;
        }
        let Some((id_start, next_end, id, pin)) = decision_id(comment, end + gap + 1) else {
            return;
        };
        let looks_like_one = id.contains('.') && id.split(['.', '/']).any(|part| part.len() >= 2);
        if !looks_like_one || !crate::plan::is_valid_decision_id(&id) {
            return;
        }
        out.push(Reference {
            kind: RefKind::Decision,
            id,
            pin,
            span: Span::new(file, base + id_start..base + next_end),
        });
        end = next_end;
    }
}

/// The decision id (and pin) after white space from `from`: where it starts and ends (the
/// pin included), the id and the pin.
fn decision_id(comment: &str, from: usize) -> Option<(usize, usize, String, Option<String>)> {
    let rest = &comment[from..];
    let lead = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    let id_start = from + lead;
    let id_len = comment[id_start..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
        .unwrap_or(comment.len() - id_start);
    // A trailing `.` ends the sentence, not the id; a `--` before `>` ends an HTML comment.
    let mut id = comment[id_start..id_start + id_len].trim_end_matches('.');
    if comment[id_start + id_len..].starts_with('>') {
        id = id.trim_end_matches('-');
    }
    if id.is_empty() || !id.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
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
    Some((id_start, end, id.to_owned(), pin))
}

/// The `req: <id>[, <id>…]` whose keyword is at `start`: one reference per id.
fn requirements_at(
    file: FileId,
    comment: &str,
    base: usize,
    start: usize,
    out: &mut Vec<Reference>,
) {
    let mut at = start + REQ.len();
    loop {
        let rest = &comment[at..];
        let lead = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let id_start = at + lead;
        let Some(len) = requirement_id_len(&comment[id_start..]) else {
            return;
        };
        out.push(Reference {
            kind: RefKind::Requirement,
            id: comment[id_start..id_start + len].to_owned(),
            pin: None,
            span: Span::new(file, base + id_start..base + id_start + len),
        });
        at = id_start + len;
        let rest = &comment[at..];
        let gap = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if !rest[gap..].starts_with(',') {
            return;
        }
        at += gap + 1;
    }
}

/// Line-comment markers for a file, by extension; `None` when specc knows no comment syntax
/// for it (the file is then not searched).
pub fn line_comment_markers(extension: &str) -> Option<&'static [&'static str]> {
    Some(match extension {
        "rs" | "c" | "h" | "cc" | "cpp" | "hpp" | "go" | "js" | "mjs" | "ts" | "tsx" | "jsx"
        | "java" | "kt" | "swift" | "scala" | "cs" | "proto" => &["//"],
        "py" | "sh" | "bash" | "zsh" | "rb" | "pl" | "toml" | "yaml" | "yml" | "r" | "mk"
        | "cmake" | "dockerfile" | "containerfile" | "conf" | "ini" | "just" | "bzl" | "bazel"
        | "star" | "nix" | "tf" | "hcl" => &["#"],
        "sql" | "lua" | "hs" | "elm" => &["--"],
        "lisp" | "el" | "clj" | "scm" | "asm" | "s" => &[";"],
        "tex" | "erl" => &["%"],
        // Prose and markup: HTML comments (`<!-- req: R-8 -->` in a README).
        "md" | "markdown" | "html" | "htm" | "xml" | "svg" => &["<!--"],
        _ => return None,
    })
}

/// The fallback: references in the line comments of `text`, found line by line. A marker
/// inside a string literal (`"…"`, `'…'`, with `\` escapes) starts no comment.
pub fn in_line_comments(file: FileId, text: &str, markers: &[&str]) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        if may_hold_references(line.as_bytes())
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
