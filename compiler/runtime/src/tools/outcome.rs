//! What a tool call answers the model, and what it means for the attempt.
//! design: runtime.tools

/// What a tool call means for the attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// The worker says it is finished.
    Done(String),
    GiveUp(String),
    /// The worker says one of its checks is wrong: the planner that wrote it decides.
    Dispute(Box<Dispute>),
}

/// A worker's case against one of its task's checks (design: runtime.disputes).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Dispute {
    /// The check's name as the task lists it: `acceptance #2`, `spec cli check 1`.
    pub check: String,
    /// Why the check is wrong: what it demands against what the task and the spec ask.
    pub evidence: String,
    /// The check's output that shows it, if it ran.
    #[serde(default)]
    pub output: String,
}

/// A tool's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutcome {
    pub text: String,
    pub failed: bool,
    pub control: Control,
    /// A file the worker flagged as too big.
    pub flagged: Option<String>,
}

impl ToolOutcome {
    pub(crate) fn ok(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            failed: false,
            control: Control::Continue,
            flagged: None,
        }
    }

    pub(crate) fn error(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: format!("error: {}", text.into()),
            failed: true,
            control: Control::Continue,
            flagged: None,
        }
    }
}
