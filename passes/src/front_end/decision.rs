//! `> Decision: … {#id}` blockquotes, with an optional `Rationale:` line.
//! design: spec.decisions

use super::text::normalize_ws;

pub(crate) struct ParsedDecision {
    pub(crate) id: Option<String>,
    pub(crate) text: String,
    pub(crate) rationale: Option<String>,
}

/// Parses a blockquote's text; `None` when it does not start with `Decision:`.
pub(crate) fn parse(quote: &str) -> Option<ParsedDecision> {
    let body = quote.trim_start().strip_prefix("Decision:")?;
    let (decision, rationale) = match find_line_starting(body, "Rationale:") {
        Some(at) => {
            let r = normalize_ws(&body[at + "Rationale:".len()..]);
            (
                &body[..at - leading_ws(&body[..at])],
                (!r.is_empty()).then_some(r),
            )
        }
        None => (body, None),
    };
    let (id, decision) = take_id(decision);
    Some(ParsedDecision {
        id,
        text: normalize_ws(&decision),
        rationale,
    })
}

fn leading_ws(s: &str) -> usize {
    s.len() - s.trim_end().len()
}

/// Byte offset of the first line (after the first) whose trimmed text starts with `prefix`.
fn find_line_starting(s: &str, prefix: &str) -> Option<usize> {
    let mut at = 0;
    for line in s.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if at > 0 && trimmed.starts_with(prefix) {
            return Some(at + (line.len() - trimmed.len()));
        }
        at += line.len();
    }
    None
}

/// Removes the first `{#id}` from `s`, returning the id and the rest.
fn take_id(s: &str) -> (Option<String>, String) {
    if let Some(open) = s.find("{#") {
        if let Some(close) = s[open..].find('}') {
            let id = s[open + 2..open + close].trim();
            if !id.is_empty() && !id.contains(char::is_whitespace) {
                let rest = format!("{}{}", &s[..open], &s[open + close + 1..]);
                return (Some(id.to_owned()), rest);
            }
        }
    }
    (None, s.to_owned())
}
