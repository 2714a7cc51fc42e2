//! Parsing less: when the lines holding `design:` are known to begin in plain code, each such
//! line is parsed alone, instead of the whole file.
//!
//! Whether an occurrence is in a comment depends on everything before it, and a line parsed
//! alone is only faithful if its first byte is outside every string, comment and other
//! multi-line construct. This module answers that one question with a conservative scan: it
//! models the constructs that can span lines in each language (block comments, nested in
//! Rust; multi-line, raw and template strings; triple-quoted Python strings), and whenever it
//! meets something it does not model exactly (a `/` that may start a JavaScript regex, any
//! `<` in JavaScript (JSX), an f-string with a replacement field, a line continuation in C, a
//! digit separator) it says "not sure", and the caller parses the whole file. Tree-sitter still decides every
//! occurrence; this only picks how much text it sees. A test checks that both ways give the
//! same references on every file of the corpus with `design:` inserted at every line.
//! design: design-docs.tree-sitter

use super::language::Syntax;

/// Whether every offset in `targets` (ascending line starts) is surely in plain code.
pub(super) fn starts_in_code(syntax: Syntax, text: &[u8], targets: &[usize]) -> bool {
    let Some(&last) = targets.last() else {
        return true;
    };
    let scanned = &text[..last.min(text.len())];
    match syntax {
        Syntax::Python => scan(scanned, targets, python_step),
        Syntax::Tsx => false,
        // A line continuation (`\` before LF or CRLF) extends comments and directives.
        Syntax::C | Syntax::Cpp
            if memchr::memmem::find(scanned, b"\\\n").is_some()
                || memchr::memmem::find(scanned, b"\\\r\n").is_some() =>
        {
            false
        }
        // HTML-like comments (`<!--`, `-->`) open line comments wherever the parser is not
        // in the middle of an expression: only a parse tells.
        Syntax::JavaScript | Syntax::TypeScript
            if memchr::memmem::find(scanned, b"<!--").is_some()
                || memchr::memmem::find(scanned, b"-->").is_some() =>
        {
            false
        }
        _ => scan(scanned, targets, |text, i| c_like_step(syntax, text, i)),
    }
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The offset of the next `\n` at or after `from`, or the end.
fn line_end(text: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &text[from.min(text.len())..]).map_or(text.len(), |p| from + p)
}

/// Walks `text` in plain code, one construct at a time (`step` gives the offset after the
/// construct starting at an offset, or "not sure"), and says whether every target was reached
/// in plain code rather than skipped over inside a construct.
fn scan(
    text: &[u8],
    targets: &[usize],
    mut step: impl FnMut(&[u8], usize) -> Result<usize, ()>,
) -> bool {
    let mut next = 0;
    let mut i = 0;
    loop {
        while let Some(&t) = targets.get(next) {
            if t > i {
                break;
            }
            if t < i {
                return false;
            }
            next += 1;
        }
        if next == targets.len() {
            return true;
        }
        if i >= text.len() {
            return false;
        }
        match step(text, i) {
            Ok(after) => i = after,
            Err(()) => return false,
        }
    }
}

/// One step of the scan in Rust, Go, C, C++, JavaScript and TypeScript.
fn c_like_step(syntax: Syntax, text: &[u8], i: usize) -> Result<usize, ()> {
    let js = matches!(syntax, Syntax::JavaScript | Syntax::TypeScript);
    let b = text[i];
    let next = text.get(i + 1).copied().unwrap_or(0);
    let prev = if i > 0 { text[i - 1] } else { b'\n' };
    Ok(match b {
        b'/' if next == b'/' => {
            let end = line_end(text, i);
            // JavaScript ends a line comment at a lone CR and at U+2028 / U+2029 too.
            let odd_break = |c: &[u8]| {
                c.windows(3)
                    .any(|w| w == [0xE2, 0x80, 0xA8] || w == [0xE2, 0x80, 0xA9])
            };
            let body = &text[i..end];
            let lone_cr = body
                .iter()
                .enumerate()
                .any(|(k, &c)| c == b'\r' && body.get(k + 1).is_some_and(|&n| n != b'\n'));
            if js && (lone_cr || odd_break(body)) {
                return Err(());
            }
            end
        }
        // A preprocessor directive's value is raw text to the end of the line: quotes and `//`
        // mean nothing there, but `/*` still opens a comment and a final `/` joins lines.
        b'#' if matches!(syntax, Syntax::C | Syntax::Cpp) => {
            let end = line_end(text, i);
            let value = &text[i..end];
            if memchr::memmem::find(value, b"/*").is_some()
                || value.trim_ascii_end().ends_with(b"/")
            {
                return Err(());
            }
            end
        }
        b'/' if next == b'*' => block_comment_end(text, i + 2, syntax == Syntax::Rust)?,
        b'/' if js => {
            // Division or a regular expression: sure only if nothing on the rest of the
            // line could open a string, a comment, a regex or JSX either way.
            let end = line_end(text, i + 1);
            if text[i + 1..end].iter().any(|c| b"\"'`/<".contains(c)) {
                return Err(());
            }
            end
        }
        // JSX (`<p>`, `<_Row>`, `< p>`) or an HTML comment: text there follows other
        // rules, and only a parse tells a JSX tag from a comparison.
        b'<' if syntax == Syntax::JavaScript => return Err(()),
        b'"' if syntax == Syntax::Cpp && prev == b'R' && raw_prefix_starts_token(text, i - 1) => {
            cpp_raw_string_end(text, i)?
        }
        b'"' => quoted_end(text, i, b'"', syntax == Syntax::Rust)?,
        b'\'' => match syntax {
            Syntax::Rust => rust_quote_end(text, i)?,
            // C++14 and C23 digit separators (`1'000`), and prefixes (`u8'a'`).
            Syntax::C | Syntax::Cpp if is_ident(prev) => return Err(()),
            _ => quoted_end(text, i, b'\'', false)?,
        },
        b'`' if syntax == Syntax::Go => memchr::memchr(b'`', &text[i + 1..])
            .map(|p| i + 1 + p + 1)
            .ok_or(())?,
        b'`' if js => template_end(text, i)?,
        b'r' if syntax == Syntax::Rust && rust_raw_starts_token(text, i) => {
            match rust_raw_string_end(text, i) {
                Some(end) => end?,
                None => i + 1,
            }
        }
        _ => i + 1,
    })
}

/// The end of a `/* … */` comment whose body starts at `from` (nested in Rust).
fn block_comment_end(text: &[u8], from: usize, nested: bool) -> Result<usize, ()> {
    let mut depth = 1;
    let mut i = from;
    while i + 1 < text.len() {
        match (text[i], text[i + 1]) {
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Ok(i);
                }
            }
            (b'/', b'*') if nested => {
                depth += 1;
                i += 2;
            }
            // tree-sitter-rust reads `//` inside a block comment as a pair, so `//*` opens
            // nothing.
            (b'/', b'/') if nested => i += 2,
            _ => i += 1,
        }
    }
    Err(())
}

/// The end of a string or character literal opened by `quote` at `at`, with `\` escapes. A
/// newline inside is allowed only where the language allows it (`multi_line`).
fn quoted_end(text: &[u8], at: usize, quote: u8, multi_line: bool) -> Result<usize, ()> {
    let mut i = at + 1;
    while let Some(&b) = text.get(i) {
        match b {
            b'\\' => i += 2,
            b'\n' if !multi_line => return Err(()),
            _ if b == quote => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err(())
}

/// Rust's `'`: a character literal (`'a'`, `'\n'`, `'é'`) or a lifetime (`'a`).
fn rust_quote_end(text: &[u8], at: usize) -> Result<usize, ()> {
    match text.get(at + 1) {
        Some(b'\\') => quoted_end(text, at, b'\'', false),
        Some(&lead) => {
            let len = match lead {
                0xF0..=0xFF => 4,
                0xE0..=0xEF => 3,
                0xC0..=0xDF => 2,
                _ => 1,
            };
            if text.get(at + 1 + len) == Some(&b'\'') {
                Ok(at + 2 + len)
            } else {
                Ok(at + 1) // a lifetime or a label
            }
        }
        None => Err(()),
    }
}

/// Whether the `r` at `at` can begin a raw string: `r`, `br` or `cr` at the start of a token.
fn rust_raw_starts_token(text: &[u8], at: usize) -> bool {
    let before = |k: usize| if at >= k { text[at - k] } else { b' ' };
    !is_ident(before(1)) || (matches!(before(1), b'b' | b'c') && !is_ident(before(2)))
}

/// After `r` at `at`: `None` if no raw string starts here (`r#ident`, a plain `r`),
/// otherwise its end (or "not sure" if it never ends).
fn rust_raw_string_end(text: &[u8], at: usize) -> Option<Result<usize, ()>> {
    let hashes = text[at + 1..].iter().take_while(|&&b| b == b'#').count();
    if text.get(at + 1 + hashes) != Some(&b'"') {
        return None;
    }
    let body = at + 2 + hashes;
    let mut closing = vec![b'"'];
    closing.extend(std::iter::repeat_n(b'#', hashes));
    Some(
        memchr::memmem::find(&text[body..], &closing)
            .map(|p| body + p + closing.len())
            .ok_or(()),
    )
}

/// Whether the `R` at `at` begins a C++ raw-string prefix (`R`, `LR`, `uR`, `UR`, `u8R`).
fn raw_prefix_starts_token(text: &[u8], at: usize) -> bool {
    let mut start = at;
    for prefix in [&b"u8"[..], b"L", b"u", b"U"] {
        if text[..at].ends_with(prefix) {
            start = at - prefix.len();
            break;
        }
    }
    start == 0 || !is_ident(text[start - 1])
}

/// The end of a C++ raw string `R"delim( … )delim"` whose quote is at `at`.
fn cpp_raw_string_end(text: &[u8], at: usize) -> Result<usize, ()> {
    let open = text[at + 1..]
        .iter()
        .take(17)
        .position(|&b| b == b'(')
        .ok_or(())?;
    let delim = &text[at + 1..at + 1 + open];
    if delim.iter().any(|b| b" \\)\t\n".contains(b)) {
        return Err(());
    }
    let mut closing = vec![b')'];
    closing.extend_from_slice(delim);
    closing.push(b'"');
    let body = at + 2 + open;
    memchr::memmem::find(&text[body..], &closing)
        .map(|p| body + p + closing.len())
        .ok_or(())
}

/// The end of a JavaScript template literal without substitutions; one with `${` is "not
/// sure" (its expressions may hold anything).
fn template_end(text: &[u8], at: usize) -> Result<usize, ()> {
    let mut i = at + 1;
    while let Some(&b) = text.get(i) {
        match b {
            b'\\' => i += 2,
            b'`' => return Ok(i + 1),
            b'$' if text.get(i + 1) == Some(&b'{') => return Err(()),
            _ => i += 1,
        }
    }
    Err(())
}

/// One step of the scan in Python.
fn python_step(text: &[u8], i: usize) -> Result<usize, ()> {
    Ok(match text[i] {
        b'#' => line_end(text, i),
        b'"' | b'\'' => python_string_end(text, i)?,
        // tree-sitter-python reads backticks as string delimiters (Python 2's repr).
        b'`' => return Err(()),
        _ => i + 1,
    })
}

/// The end of a Python string whose opening quote is at `at`, prefix included in the check:
/// an f-string (or t-string) with a replacement field is "not sure".
fn python_string_end(text: &[u8], at: usize) -> Result<usize, ()> {
    let quote = text[at];
    let prefix_len = text[..at]
        .iter()
        .rev()
        .take_while(|&&b| b"rRbBuUfFtT".contains(&b))
        .count();
    let prefix = &text[at - prefix_len..at];
    if at > prefix_len && is_ident(text[at - prefix_len - 1]) {
        return Err(()); // an identifier glued to a quote: not a form this scan knows
    }
    let formatted = prefix.iter().any(|b| b"fFtT".contains(b));
    let triple = text[at..].starts_with(&[quote; 3]);
    let mut i = at + if triple { 3 } else { 1 };
    while let Some(&b) = text.get(i) {
        match b {
            // tree-sitter still opens a replacement field at `\{` in an f-string.
            b'\\' if formatted && text.get(i + 1) == Some(&b'{') => return Err(()),
            b'\\' => i += 2,
            b'{' if formatted => {
                if text.get(i + 1) == Some(&b'{') {
                    i += 2;
                } else {
                    return Err(());
                }
            }
            b'\n' if !triple => return Err(()),
            _ if b == quote && (!triple || text[i..].starts_with(&[quote; 3])) => {
                return Ok(i + if triple { 3 } else { 1 });
            }
            _ => i += 1,
        }
    }
    Err(())
}
