//! Sentence boundaries in prose.
//!
//! A sentence ends at `.`, `!` or `?` (and any closing quotes or brackets after it) followed by
//! white space and then something that is not a lower-case letter; a paragraph break always
//! ends one. Common abbreviations ("e.g.", "i.e.", "etc.", "vs.") do not end a sentence.
//! design: spec.requirements

const ABBREVIATIONS: &[&str] = &[
    "e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "fig.", "no.", "mr.", "dr.", "st.",
];

/// Appends to `out` the byte ranges of the sentences of `text`, trimmed, in order. Empty
/// sentences are skipped. A tag standing after a sentence's end, alone up to the end of its
/// line (`line_starts`: offsets where source lines start), belongs to that sentence:
/// "The server MUST reply. [R-1]".
pub(crate) fn split(text: &str, line_starts: &[u32], out: &mut Vec<std::ops::Range<usize>>) {
    let bytes = text.as_bytes();
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
        if let Some(mut end) = end {
            end = trailing_tag_end(text, line_starts, end).unwrap_or(end);
            push_trimmed(text, start..end, out);
            start = end;
        }
        true
    });
    push_trimmed(text, start..text.len(), out);
}

/// If a tag follows `end` (after spaces) and nothing but white space and sentence
/// punctuation follows it up to the next line start or the end of the text, the offset
/// after the tag and that punctuation.
fn trailing_tag_end(text: &str, line_starts: &[u32], end: usize) -> Option<usize> {
    let rest = &text[end..];
    let skip = rest.len() - rest.trim_start_matches(' ').len();
    let tag_end = end + skip + super::requirements::tag_at_start(&rest[skip..])?;
    let after = &text[tag_end..];
    let next_line = line_starts.partition_point(|&l| l as usize <= tag_end);
    let line_end = line_starts
        .get(next_line)
        .map_or(after.len(), |&l| l as usize - tag_end);
    let to_line_end = &after[..line_end.min(after.len())];
    let rest_of_line = to_line_end.trim_start_matches(super::requirements::is_closing);
    let punct = to_line_end.len() - rest_of_line.len();
    let closing_only = rest_of_line.is_empty();
    (closing_only || after.starts_with("\n\n")).then_some(tag_end + punct)
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
    // The character found may be several bytes long (a no-break space): start after it.
    let word_start = text[..dot]
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || c == '(')
        .map_or(0, |(p, c)| p + c.len_utf8());
    let word = &text[word_start..=dot];
    ABBREVIATIONS.iter().any(|a| word.eq_ignore_ascii_case(a))
}
