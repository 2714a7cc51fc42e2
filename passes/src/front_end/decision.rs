//! `> Decision: … {#id}` blockquotes, with an optional `Rationale:` line.
//! design: spec.decisions

use super::text::{normalize_ws, push_normalized};

pub(crate) struct ParsedDecision {
    pub(crate) id: Option<String>,
    pub(crate) text: String,
    pub(crate) rationale: Option<String>,
}

/// Parses a blockquote's text; `None` when it does not start with `Decision:`.
/// `line_starts` are the offsets in `quote` where a source line starts.
pub(crate) fn parse(quote: &str, line_starts: &[u32]) -> Option<ParsedDecision> {
    let lead = quote.len() - quote.trim_start().len();
    let body = quote[lead..].strip_prefix("Decision:")?;
    let body_start = lead + "Decision:".len();
    let rationale_at = line_starts.iter().map(|&l| l as usize).find_map(|l| {
        let line = quote.get(l..)?;
        let skip = line.len() - line.trim_start().len();
        (l >= body_start && line[skip..].starts_with("Rationale:")).then_some(l + skip - body_start)
    });
    let (decision, rationale) = match rationale_at {
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
        text: decision,
        rationale,
    })
}

fn leading_ws(s: &str) -> usize {
    s.len() - s.trim_end().len()
}

/// Removes the first `{#id}` from `s` and normalises white space, returning the id and
/// the rest.
fn take_id(s: &str) -> (Option<String>, String) {
    if let Some(open) = s.find("{#")
        && let Some(close) = s[open..].find('}')
    {
        let id = s[open + 2..open + close].trim();
        if !id.is_empty() && !id.contains(char::is_whitespace) {
            let mut rest = String::with_capacity(s.len());
            push_normalized(&mut rest, &s[..open]);
            let after = &s[open + close + 1..];
            if !rest.is_empty() && !after.trim().is_empty() {
                rest.push(' ');
            }
            push_normalized(&mut rest, after);
            return (Some(id.to_owned()), rest);
        }
    }
    (None, normalize_ws(s))
}
