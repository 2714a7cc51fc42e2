//! Why planning (or any forced tool call of the planner protocol) failed.
//! design: runtime.errors

use specc_ir::Diagnostic;
use specc_llm::LlmError;

/// Why planning a node failed.
#[derive(Debug)]
pub enum PlanError {
    Model(LlmError),
    /// Still invalid after the repairs: the task asked, and the last answer's problems (an
    /// answer that does not parse is one E0309).
    Invalid {
        task: String,
        problems: Vec<Diagnostic>,
    },
    /// The coordinator's merges did not settle the plan: the ids merged, in order.
    Unsettled(Vec<String>),
    /// Planning would pass `[limits] planner_calls` (the limit).
    CallLimit(usize),
}

impl PlanError {
    /// The budget cap or a halt stopped it: the build stops, resumable.
    pub fn is_stop(&self) -> bool {
        matches!(self, PlanError::Model(e) if e.is_stop())
    }
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlanError::Model(e) => write!(f, "{e}"),
            PlanError::Invalid { problems, .. } => write!(
                f,
                "{}",
                problems
                    .iter()
                    .map(|d| d.message.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            PlanError::Unsettled(ids) => write!(f, "unsettled: {}", ids.join(", ")),
            PlanError::CallLimit(n) => write!(f, "over the limit of {n} planner calls"),
        }
    }
}

impl std::error::Error for PlanError {}
