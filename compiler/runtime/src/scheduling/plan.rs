//! What a build runs and what it reports: the plan's tasks and work orders with the seed,
//! and each leaf's result.
//! design: runtime.scheduler

use std::collections::BTreeMap;

use specc_ir::plan::TaskNode;
use specc_state::TaskState;
use specc_vcs::object::ObjectId;

use crate::attempt::WorkOrder;

/// What the build runs.
pub struct Plan {
    /// Every task of the Task IR (plan nodes too: dependencies may name them).
    pub tasks: Vec<TaskNode>,
    /// The work leaves, ready to run.
    pub orders: Vec<WorkOrder>,
    /// Files the repository must hold before any leaf runs (the planned design documents,
    /// the field guide's first text): path → content.
    pub seed: BTreeMap<String, String>,
    /// Leaves to run again even if up to date (`--force`).
    pub force: Vec<String>,
    /// The spec and the plan's decisions, for the workers' `read_spec` and
    /// `read_decision` (design: spec.node-text).
    pub spec: std::sync::Arc<crate::attempt::SpecIndex>,
}

/// A leaf's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskReport {
    pub id: String,
    pub title: String,
    pub state: TaskState,
    pub reason: Option<String>,
    pub attempts: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildReport {
    pub tasks: Vec<TaskReport>,
    /// Commits landed by this build (the seed included).
    pub commits: usize,
    pub conflicts: usize,
    /// Paths that needed a 3-way merge when they landed.
    pub merged: Vec<String>,
    pub head: Option<ObjectId>,
    /// Leaves that landed before and are no longer in the plan (their code stays).
    pub no_longer_planned: Vec<String>,
    /// Why the build stopped early (budget, journal), if it did.
    pub stopped: Option<String>,
}

impl BuildReport {
    pub fn count(&self, state: TaskState) -> usize {
        self.tasks.iter().filter(|t| t.state == state).count()
    }
}
