//! A decision while its section is read: the fields found so far, and what it becomes when
//! the section ends (with the diagnostics of a missing or unknown field).

use specc_ir::{DecisionStatus, DesignDecision, Diagnostic, FileId, Span, codes};

use crate::front_end::text::normalize_ws;

/// The pin of a decision text: the first 8 hex digits of blake3 over it, normalised.
pub fn pin(decision: &str) -> String {
    let hash = blake3::hash(normalize_ws(decision).as_bytes());
    hash.to_hex()[..8].to_owned()
}

/// A decision whose section has not ended yet.
pub(super) struct Open {
    id: String,
    title: String,
    heading: Span,
    pub(super) decision: Option<(String, Span)>,
    pub(super) rationale: Option<String>,
    pub(super) status: Option<(String, Span)>,
    pub(super) supersedes: Vec<String>,
}

impl Open {
    pub(super) fn new(id: String, title: String, heading: Span) -> Open {
        Open {
            id,
            title,
            heading,
            decision: None,
            rationale: None,
            status: None,
            supersedes: Vec::new(),
        }
    }

    pub(super) fn finish(
        self,
        file: FileId,
        end: usize,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> DesignDecision {
        if self.decision.is_none() {
            diagnostics.push(malformed(&self.id, self.heading));
        }
        let status = match &self.status {
            None => DecisionStatus::Accepted,
            Some((text, span)) => status(text).unwrap_or_else(|| {
                diagnostics.push(unknown_status(text, *span));
                DecisionStatus::Accepted
            }),
        };
        let (decision, decision_span) = match self.decision {
            Some((text, span)) => (text, Some(span)),
            None => (String::new(), None),
        };
        DesignDecision {
            pin: pin(&decision),
            id: self.id,
            title: self.title,
            decision,
            rationale: self.rationale,
            status,
            supersedes: self.supersedes,
            span: Span::new(file, self.heading.start as usize..end),
            heading: self.heading,
            decision_span,
        }
    }
}

#[cold]
fn malformed(id: &str, heading: Span) -> Diagnostic {
    Diagnostic::new(codes::MALFORMED_DECISION, format!("decision `{id}` has no `Decision:` line"))
        .with_primary(heading, "this heading's {#id} makes it a decision")
        .with_help("write what was decided on a line starting `Decision:`, or drop the {#id} if this heading is not a decision")
}

#[cold]
pub(super) fn repeated_field(field: &str, span: Span) -> Diagnostic {
    let field = field.trim().trim_matches(['*', '_']).trim();
    Diagnostic::new(codes::REPEATED_FIELD, format!("`{field}` appears twice in one decision"))
        .with_primary(span, "the first one counts; this one is ignored")
        .with_help("one decision has one Decision, Rationale and Status; record another decision under its own heading with its own {#id}")
}

#[cold]
fn unknown_status(text: &str, span: Span) -> Diagnostic {
    Diagnostic::new(codes::UNKNOWN_STATUS, format!("unknown status `{text}`"))
        .with_primary(span, "this status")
        .with_help("a status is `accepted`, `proposed`, `deprecated` or `superseded by <id>`")
}

/// A `Status:` value: `accepted`, `proposed`, `deprecated` or `superseded by <id>`.
fn status(text: &str) -> Option<DecisionStatus> {
    let t = text.trim().trim_end_matches('.');
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "accepted" => Some(DecisionStatus::Accepted),
        "proposed" => Some(DecisionStatus::Proposed),
        "deprecated" => Some(DecisionStatus::Deprecated),
        _ => {
            let rest = lower.strip_prefix("superseded by ")?;
            let id = t[t.len() - rest.len()..].trim().trim_matches('`');
            (!id.is_empty() && !id.contains(char::is_whitespace))
                .then(|| DecisionStatus::SupersededBy(id.to_owned()))
        }
    }
}
