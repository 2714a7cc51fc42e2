//! Design decisions as `design-docs/*.md` records them (see the shared design, "Design
//! decisions"): one heading with an explicit id per decision.
//! design: ir.pure-data

use serde::{Deserialize, Serialize};

use crate::Span;

/// One recorded decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DesignDecision {
    /// The heading's explicit id, naming the question the decision answers
    /// (`storage.page-size`).
    pub id: String,
    pub title: String,
    /// The text after `Decision:`, white space normalised; empty when the line is missing.
    pub decision: String,
    pub rationale: Option<String>,
    pub status: DecisionStatus,
    /// Ids named by a `Supersedes:` line.
    pub supersedes: Vec<String>,
    /// The first 8 hex digits of blake3 over `decision`: what code references pin.
    pub pin: String,
    /// The heading through the end of the decision's section.
    pub span: Span,
    /// The heading alone.
    pub heading: Span,
    /// The `Decision:` line, when there is one.
    pub decision_span: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "by")]
pub enum DecisionStatus {
    Accepted,
    Proposed,
    Deprecated,
    /// `superseded by <id>`.
    SupersededBy(String),
}
