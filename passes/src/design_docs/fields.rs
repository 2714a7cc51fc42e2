//! Field lines of a decision: `Decision:`, `Rationale:`, `Status:`, `Supersedes:`.

use specc_ir::{Diagnostic, FileId, Span};

use super::open::Open;
use crate::front_end::text::normalize_ws;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Decision,
    Rationale,
    Status,
    Supersedes,
}

const FIELDS: &[(&str, Field)] = &[
    ("Decision:", Field::Decision),
    ("Rationale:", Field::Rationale),
    ("Status:", Field::Status),
    ("Supersedes:", Field::Supersedes),
];

/// If `line` starts a field (optionally in bold: `**Decision:**`), the field and the byte
/// offset in `line` where its text starts.
fn field_of(line: &str) -> Option<(Field, usize)> {
    let lead = line.len() - line.trim_start().len();
    let mut rest = &line[lead..];
    let mut at = lead;
    for marker in ["**", "__"] {
        if let Some(r) = rest.strip_prefix(marker) {
            rest = r;
            at += marker.len();
        }
    }
    let (name, field) = FIELDS.iter().find(|(name, _)| rest.starts_with(name))?;
    at += name.len();
    rest = &rest[name.len()..];
    for marker in ["**", "__"] {
        if rest.starts_with(marker) {
            at += marker.len();
            rest = &rest[marker.len()..];
        }
    }
    Some((*field, at))
}

/// Reads the field lines of the paragraph at `range` of `text` into `d`.
pub(super) fn read(
    file: FileId,
    text: &str,
    range: std::ops::Range<usize>,
    d: &mut Open,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let para = &text[range.clone()];
    let mut current: Option<(Field, usize, usize)> = None; // field, text start, line start
    let mut at = range.start;
    for line in para.split_inclusive('\n') {
        if let Some((field, offset)) = field_of(line) {
            if let Some(cur) = current.take() {
                store(file, text, cur, at, d, diagnostics);
            }
            let lead = line.len() - line.trim_start().len();
            current = Some((field, at + offset, at + lead));
        }
        at += line.len();
    }
    if let Some(cur) = current {
        store(file, text, cur, range.end, d, diagnostics);
    }
}

/// Stores one field whose text runs from `start` to `end`. The first occurrence of a field
/// counts; a second is reported and never silently changes a decision's text (and pin).
fn store(
    file: FileId,
    text: &str,
    (field, start, line_start): (Field, usize, usize),
    end: usize,
    d: &mut Open,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let value = normalize_ws(&text[start..end]);
    let span = Span::new(
        file,
        line_start..text[..end].trim_end().len().max(line_start),
    );
    let taken = match field {
        Field::Decision => d.decision.is_some(),
        Field::Rationale => d.rationale.is_some(),
        Field::Status => d.status.is_some(),
        Field::Supersedes => false,
    };
    if taken {
        diagnostics.push(super::open::repeated_field(&text[line_start..start], span));
        return;
    }
    match field {
        // An empty `Decision:` decides nothing: left unset, it is reported as E0201.
        Field::Decision => d.decision = (!value.is_empty()).then_some((value, span)),
        Field::Rationale => d.rationale = (!value.is_empty()).then_some(value),
        Field::Status => d.status = Some((value, span)),
        Field::Supersedes => d.supersedes.extend(
            value
                .split([',', ' '])
                .map(|s| s.trim_matches('`'))
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        ),
    }
}
