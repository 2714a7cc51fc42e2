//! `specc check` and `specc pin` as the runtime sees them: the driver implements them, the
//! runtime calls them on a checkout (a deliberate break's revisits, the `pin` tool).
//! design: runtime.deliberate-breaking

use std::path::Path;

/// `specc check` and `specc pin` as the driver implements them, for the runtime to use on a
/// checkout.
pub trait Pins: Send + Sync {
    /// The references under `root` pinned to an older text of their decision, or to a
    /// superseded one.
    fn stale(&self, root: &Path) -> Vec<StaleRef>;
    /// Pins the references of `path` (relative to `root`) on `line` to their decisions'
    /// current text; what it did, in words.
    fn pin(&self, root: &Path, path: &str, line: usize) -> Result<String, PinError>;
}

/// Why `specc pin` left a line as it was: the problems it reported (an unknown decision,
/// no reference on the line, a file it could not rewrite).
#[derive(Clone, Debug, PartialEq)]
pub struct PinError {
    pub problems: Vec<specc_ir::Diagnostic>,
}

impl std::fmt::Display for PinError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let messages: Vec<&str> = self.problems.iter().map(|d| d.message.as_str()).collect();
        write!(f, "{}", messages.join("; "))
    }
}

impl std::error::Error for PinError {}

/// A reference `specc check` reports as stale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleRef {
    pub path: String,
    pub line: usize,
    pub decision: String,
    pub message: String,
}
