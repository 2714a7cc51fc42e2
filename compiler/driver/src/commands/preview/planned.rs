//! What planning left for the preview, and what else it reads.

use specc_ir::IntentTree;
use specc_ir::plan::{PlannedDecision, TaskNode};
use specc_llm::LlmConfig;
use std::path::Path;

/// What planning left for the preview.
pub(in crate::commands) struct PreviewPlan<'a> {
    pub(in crate::commands) tree: &'a IntentTree,
    pub(in crate::commands) tasks: &'a [TaskNode],
    pub(in crate::commands) decisions: &'a [PlannedDecision],
    /// Planner calls made now (cache hits are not calls).
    pub(in crate::commands) calls: usize,
    /// The outline planner answered: no model was asked.
    pub(in crate::commands) outline: bool,
}

/// What the preview reads besides the plan: the spec's directory (specc.toml, `.specc/`),
/// the models, `[limits] steps` and the field guide.
pub(in crate::commands) struct Context<'a> {
    pub(in crate::commands) dir: &'a Path,
    pub(in crate::commands) llm: &'a LlmConfig,
    pub(in crate::commands) steps: u32,
    pub(in crate::commands) field_guide: &'a str,
}
