//! RFC 2119 keywords, EARS forms and `[R-12]` tags.
//! design: spec.requirements

use specc_ir::{Level, RequirementForm};

/// Runners an acceptance check may name (the first word of its info string).
/// design: spec.test-runners
pub const KNOWN_RUNNERS: &[&str] = &[
    "sh",
    "bash",
    "python",
    "python3",
    "rust",
    "node",
    "js",
    "javascript",
];

/// The first RFC 2119 keyword in `text` (capitals, whole word) and its byte range: all
/// eleven forms. `MUST NOT`, `SHALL NOT`, `SHOULD NOT` and `NOT RECOMMENDED` are one keyword
/// each; `REQUIRED` binds as `MUST`, `RECOMMENDED` as `SHOULD`, `NOT RECOMMENDED` as `SHOULD
/// NOT` and `OPTIONAL` as `MAY`, as RFC 2119 defines them.
pub fn find_keyword(text: &str) -> Option<(Level, std::ops::Range<usize>)> {
    let bytes = text.as_bytes();
    // Candidates start with `M`, `S`, `R`, `N` or `O`; memchr skips the text between them
    // many bytes at a time, which matters: this runs over every byte of prose.
    // The next candidate of each search, kept so that each is searched again only once it
    // is used: linear in the text.
    let (mut next3, mut next2) = (
        memchr::memchr3(b'M', b'S', b'R', bytes),
        memchr::memchr2(b'N', b'O', bytes),
    );
    while let Some(i) = next3.into_iter().chain(next2).min() {
        let after = |p: usize| i + 1 + p;
        if next3 == Some(i) {
            next3 = memchr::memchr3(b'M', b'S', b'R', &bytes[i + 1..]).map(after);
        } else {
            next2 = memchr::memchr2(b'N', b'O', &bytes[i + 1..]).map(after);
        }
        if ends_word(&text[..i]) {
            continue;
        }
        // The first two letters tell the keywords apart; comparing a handful of bytes
        // inline is much cheaper than a `memcmp` call per keyword.
        let candidates: &[_] = match (bytes[i], bytes.get(i + 1)) {
            (b'M', Some(b'U')) => &KEYWORDS[0..1],
            (b'S', Some(b'H')) => &KEYWORDS[1..3],
            (b'M', Some(b'A')) => &KEYWORDS[3..4],
            (b'R', Some(b'E')) => &KEYWORDS[4..6],
            (b'N', Some(b'O')) => &KEYWORDS[6..8],
            (b'O', Some(b'P')) => &KEYWORDS[8..9],
            _ => &[],
        };
        for (word, level, negated) in candidates {
            let Some(end) = keyword_at(text, i, word) else {
                continue;
            };
            if let Some(negated) = negated
                && let Some(not_end) = not_after(text, end)
            {
                return Some((*negated, i..not_end));
            }
            return Some((*level, i..end));
        }
    }
    None
}

/// The end of `word` at `i` in `text`, if it stands there as a whole word; a `word` with a
/// space (`NOT RECOMMENDED`) takes any white space there.
fn keyword_at(text: &str, i: usize, word: &str) -> Option<usize> {
    let mut end = i;
    for (n, part) in word.split(' ').enumerate() {
        if n > 0 {
            let rest = &text[end..];
            let gap = rest.len() - rest.trim_start().len();
            if gap == 0 {
                return None;
            }
            end += gap;
        }
        if text.as_bytes().get(end..end + part.len()) != Some(part.as_bytes()) {
            return None;
        }
        end += part.len();
    }
    (!starts_word(&text[end..])).then_some(end)
}

const KEYWORDS: &[(&str, Level, Option<Level>)] = &[
    ("MUST", Level::Must, Some(Level::MustNot)),
    ("SHALL", Level::Shall, Some(Level::ShallNot)),
    ("SHOULD", Level::Should, Some(Level::ShouldNot)),
    ("MAY", Level::May, None),
    ("REQUIRED", Level::Must, None),
    ("RECOMMENDED", Level::Should, None),
    ("NOT RECOMMENDED", Level::ShouldNot, None),
    // Not one of RFC 2119's forms, but it must not read as `REQUIRED`: it says optional.
    ("NOT REQUIRED", Level::May, None),
    ("OPTIONAL", Level::May, None),
];

/// A letter, digit or `_` of any script: what a keyword may not touch. Punctuation such as
/// an em dash or a curly quote may.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn ends_word(before: &str) -> bool {
    before.chars().next_back().is_some_and(is_word_char)
}

fn starts_word(after: &str) -> bool {
    after.chars().next().is_some_and(is_word_char)
}

/// If `text[at..]` is white space (any, a no-break space included) then the whole word
/// `NOT`, the offset after `NOT`.
fn not_after(text: &str, at: usize) -> Option<usize> {
    let rest = &text[at..];
    let trimmed = rest.trim_start();
    let j = at + (rest.len() - trimmed.len());
    (j > at && trimmed.starts_with("NOT") && !starts_word(&trimmed[3..])).then_some(j + 3)
}

/// The EARS form of a requirement sentence, judged by its first word; RFC 2119 otherwise.
/// EARS keywords are written in capitals, as the spec format asks.
pub(crate) fn classify(sentence: &str) -> RequirementForm {
    let s = strip_tag(sentence.trim_start());
    let s = s.trim_start_matches(|c: char| !c.is_alphanumeric());
    let first = s.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
    match first {
        "WHEN" => RequirementForm::EarsEvent,
        "WHILE" => RequirementForm::EarsState,
        "IF" => RequirementForm::EarsUnwanted,
        "WHERE" => RequirementForm::EarsOptional,
        "THE" if contains_word(s, "SHALL") => RequirementForm::EarsUbiquitous,
        _ => RequirementForm::Rfc2119,
    }
}

fn strip_tag(s: &str) -> &str {
    match tag_at_start(s) {
        Some(end) => s[end..].trim_start(),
        None => s,
    }
}

fn contains_word(s: &str, word: &str) -> bool {
    s.split(|c: char| !c.is_alphanumeric()).any(|w| w == word)
}

/// The tag that names the requirement `text`: one that leads it (nothing but white space
/// before it) or trails it (nothing but white space and sentence punctuation after it). A
/// tag anywhere else ("retry when fails", "(see )") refers to another
/// requirement and is not an id. Looks only at the two ends: this runs per requirement.
/// The flag is true when the tag is surely a label: it leads, or it trails with nothing
/// after it, or it stands after the sentence's own punctuation ("reply. ."). A tag just
/// before the final punctuation ("behave as in .") may also be a citation.
pub(crate) fn own_tag(text: &str) -> Option<(&str, std::ops::Range<usize>, bool)> {
    let lead = text.len() - text.trim_start().len();
    if let Some(end) = tag_at(text, lead) {
        return Some((&text[lead + 1..end - 1], lead..end, true));
    }
    let body = text.trim_end_matches(is_closing);
    if !body.ends_with(']') {
        return None;
    }
    let open = body.rfind('[')?;
    let end = tag_at(text, open).filter(|&end| end == body.len())?;
    let after_is_space = text[end..].trim().is_empty();
    let after_punctuation = text[..open].trim_end().ends_with(['.', '!', '?']);
    Some((
        &text[open + 1..end - 1],
        open..end,
        after_is_space || after_punctuation,
    ))
}

/// What may follow a trailing tag: white space and sentence punctuation.
pub(crate) fn is_closing(c: char) -> bool {
    c.is_whitespace() || matches!(c, '.' | '!' | '?' | ';' | ':' | ',')
}

/// Whether a tag starts at the beginning of `text`; its length if so.
pub(crate) fn tag_at_start(text: &str) -> Option<usize> {
    tag_at(text, 0)
}

/// If a tag `[A-Z]+-[0-9]+]` starts at byte `open` of `text`, the offset after its `]`.
fn tag_at(text: &str, open: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(open) != Some(&b'[') {
        return None;
    }
    let mut j = open + 1;
    let letters = j;
    while j < bytes.len() && bytes[j].is_ascii_uppercase() {
        j += 1;
    }
    if j == letters || bytes.get(j) != Some(&b'-') {
        return None;
    }
    j += 1;
    let digits = j;
    while j < bytes.len() && bytes[j].is_ascii_digit() {
        j += 1;
    }
    (j > digits && bytes.get(j) == Some(&b']')).then_some(j + 1)
}
