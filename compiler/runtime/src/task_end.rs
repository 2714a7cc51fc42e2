//! How a work task ended, as the scheduler (or serve, for a remote worker's task) learns it.
//! design: runtime.escalation

use specc_state::JournalError;
use specc_vcs::object::ObjectId;

use crate::landing::{FollowUp, SplitNeed};

/// A task that landed.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Landed {
    /// Its commit (`None`: the task changed nothing).
    pub commit: Option<ObjectId>,
    /// Paths that needed a 3-way merge when it landed.
    pub merged: Vec<String>,
    pub attempts: u32,
    /// Tasks the reviewers' findings call for.
    pub followups: Vec<FollowUp>,
    /// Files flagged for the megafile guard (by this task or before): each needs a split.
    pub flagged: Vec<SplitNeed>,
    /// It was re-planned on the way (its checks or scope may have changed): the
    /// scheduler reads the re-plans back from the journal (design: runtime.disputes).
    #[serde(default)]
    pub replanned: bool,
}

impl Landed {
    /// A landing by claim `attempt` that a worker did not report (serve learns of it from
    /// the VCS): its reviews and splits are not known.
    pub(crate) fn unreported(
        commit: Option<ObjectId>,
        merged: Vec<String>,
        attempt: i64,
    ) -> Landed {
        Landed {
            commit,
            merged,
            attempts: u32::try_from(attempt).unwrap_or(u32::MAX),
            followups: Vec::new(),
            flagged: Vec::new(),
            // Not known: the journal is read back in any case.
            replanned: true,
        }
    }
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskEnd {
    Landed(Landed),
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

impl TaskEnd {
    /// How the task ended, in one word (a trace's `outcome`).
    pub fn word(&self) -> &'static str {
        match self {
            TaskEnd::Landed(_) => "landed",
            TaskEnd::Blocked { .. } => "blocked",
            TaskEnd::Failed { .. } => "failed",
            TaskEnd::Budget { .. } => "budget",
            TaskEnd::Parked { .. } => "parked",
            TaskEnd::Journal(_) => "journal",
        }
    }
}
