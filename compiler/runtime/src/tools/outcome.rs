//! What a tool call answers the model, and what it means for the attempt.
//! design: runtime.tools

/// What a tool call means for the attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// The worker says it is finished.
    Done(String),
    GiveUp(String),
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
