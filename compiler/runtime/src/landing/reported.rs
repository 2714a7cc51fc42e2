//! What a worker's tools report that outlives its attempt: the deliberate breaks it made
//! (`break_scope`) and the decisions it found contradicting each other
//! (`report_contradiction`), each acted on once its task lands.
//! design: runtime.deliberate-breaking
//! design: runtime.decision-conflicts

/// Lines one attempt may change outside its write scope.
pub(crate) const BREAK_LINES: usize = 20;

/// A deliberate break one attempt made.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Break {
    /// The file patched outside the write scope, and the design document updated.
    pub path: String,
    pub doc: String,
    pub decision: String,
    pub old_text: String,
    pub new_text: String,
    pub why: String,
    /// Lines it changed (of the attempt's budget).
    pub lines: usize,
}

/// Two decisions a worker found contradicting each other.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Contradiction {
    pub a: String,
    pub b: String,
    pub explanation: String,
}
