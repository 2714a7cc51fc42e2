//! How a work task ended, as the scheduler (or serve, for a remote worker's task) learns it.
//! design: runtime.escalation

use specc_state::JournalError;
use specc_vcs::object::ObjectId;

use crate::landing::{FollowUp, SplitNeed};

/// How a task ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskEnd {
    /// Landed (`None`: the task changed nothing).
    Landed {
        commit: Option<ObjectId>,
        merged: Vec<String>,
        attempts: u32,
        /// Tasks the reviewers' findings call for.
        followups: Vec<FollowUp>,
        /// Files flagged for the megafile guard (by this task or before): each needs a split.
        flagged: Vec<SplitNeed>,
    },
    /// The VCS refused to let a file grow past its line budget: the task waits for the
    /// file's split and runs again on top of it.
    Blocked {
        need: SplitNeed,
        attempts: u32,
    },
    Failed {
        reason: String,
        attempts: u32,
    },
    /// The budget cap stopped it.
    Budget {
        attempts: u32,
    },
    /// The provider asked to wait: queue it again after `after` (its attempt is resumed).
    Parked {
        after: std::time::Duration,
    },
    /// The journal failed: the build must stop.
    Journal(JournalError),
}
