//! What each role spent on a task.

/// What one role spent on the task.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub(in crate::commands) struct RoleCost {
    pub(in crate::commands) calls: u64,
    pub(in crate::commands) input: u64,
    pub(in crate::commands) output: u64,
    pub(in crate::commands) dollars: f64,
}
