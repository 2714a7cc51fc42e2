//! Sentence boundaries in prose.
//!
//! A sentence ends at `.`, `!` or `?` (and any closing quotes or brackets after it) followed by
//! white space and then something that is not a lower-case letter; a paragraph break always
//! ends one. Common abbreviations ("e.g.", "i.e.", "etc.", "vs.") do not end a sentence.
//! design: spec.requirements

const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "fig.", "no.", "mr.", "dr.", "st.",
];

/// Byte ranges of the sentences of `text`, trimmed, in order. Empty sentences are skipped.
pub(crate) fn split(text: &str) -> Vec<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    super::scan::for_each_byte_of(bytes, b".!?\n", |i| {
        if i < start {
            return true;
        }
        let end = if bytes[i] == b'\n' {
            (bytes.get(i + 1) == Some(&b'\n')).then_some(i)
        } else {
            let mut j = i + 1;
            while j < bytes.len() && matches!(bytes[j], b'"' | b'\'' | b')' | b']' | b'*' | b'_') {
                j += 1;
            }
            let followed_by_space = j >= bytes.len() || bytes[j].is_ascii_whitespace();
            (followed_by_space && !next_starts_lowercase(text, j) && !is_abbreviation(text, i))
                .then_some(j)
        };
        if let Some(end) = end {
            push_trimmed(text, start..end, &mut out);
            start = end;
        }
        true
    });
    push_trimmed(text, start..text.len(), &mut out);
    out
}

fn push_trimmed(text: &str, r: std::ops::Range<usize>, out: &mut Vec<std::ops::Range<usize>>) {
    let s = &text[r.clone()];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    if lead + trail < s.len() {
        out.push(r.start + lead..r.end - trail);
    }
}

fn next_starts_lowercase(text: &str, from: usize) -> bool {
    text[from..]
        .trim_start()
        .chars()
        .next()
        .is_some_and(char::is_lowercase)
}

fn is_abbreviation(text: &str, dot: usize) -> bool {
    let word_start = text[..dot]
        .rfind(|c: char| c.is_whitespace() || c == '(')
        .map_or(0, |p| p + 1);
    let word = &text[word_start..=dot];
    ABBREVIATIONS.iter().any(|a| word.eq_ignore_ascii_case(a))
}
