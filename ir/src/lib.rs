//! specc-ir: the data every stage of specc shares.
//!
//! This crate holds data only: source spans, ids, the Intent IR produced by the front end,
//! and the one `Diagnostic` model. It does no I/O, knows nothing of salsa, Markdown or
//! models, and every type serialises with serde so the IR can be emitted as JSON.
//! design: ir.pure-data

pub mod codes;
mod design;
mod diagnostic;
mod fingerprint;
mod intent;
pub mod plan;
mod severity;
mod span;

pub use design::{DecisionStatus, DesignDecision};
pub use diagnostic::{Diagnostic, Label};
pub use fingerprint::Fingerprint;
pub use intent::{
    AcceptanceCheck, Example, FrontMatter, IntentNode, IntentTree, Level, NodeId, NonGoal,
    Requirement, RequirementForm, RequirementId, SpecDecision,
};
pub use severity::Severity;
pub use span::{FileId, LineCol, LineIndex, Span};
