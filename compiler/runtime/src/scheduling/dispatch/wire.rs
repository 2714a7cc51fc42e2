//! What `specc serve` and `specc worker` say to each other, as JSON: a claim and its work
//! order, a submission under a claim, and how a claim's task ended.
//! design: state.deployment

use serde::{Deserialize, Serialize};
use specc_vcs::Submission;
use specc_vcs::object::ObjectId;

use specc_state::{Claim, StepRecord};

use crate::attempt::WorkOrder;
use crate::landing::SplitNeed;
use crate::task_end::{Landed, TaskEnd};

/// A claim as it travels: the task and its fencing token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    pub task: String,
    pub attempt: i64,
}

impl From<&Claim> for Token {
    fn from(c: &Claim) -> Token {
        Token {
            task: c.task.clone(),
            attempt: c.attempt,
        }
    }
}

impl From<Token> for Claim {
    fn from(t: Token) -> Claim {
        Claim {
            task: t.task,
            attempt: t.attempt,
        }
    }
}

/// A worker's journaled steps under a claim, for serve's journal.
#[derive(Debug, Serialize, Deserialize)]
pub struct JournalRequest {
    pub token: Token,
    pub steps: Vec<StepRecord>,
}

/// The answer to a claim.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "claim", rename_all = "snake_case")]
pub enum ClaimAnswer {
    /// Work: run it under `token`, as `run` (the build's run and the token's attempt).
    Task {
        token: Token,
        run: String,
        order: Box<WorkOrder>,
        /// The lease, in ms: heartbeat well within it.
        lease_ms: u64,
    },
    /// Nothing ready now: ask again later.
    Wait,
    /// The build is over or stopping: the worker may exit.
    Done,
}

/// A submission under a claim; `have` is the replica's head.
#[derive(Debug, Serialize, Deserialize)]
pub struct SubmitRequest {
    pub token: Token,
    pub have: ObjectId,
    pub submission: Submission,
}

/// How a claim's task ended, as [`TaskEnd`] says it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum End {
    Landed(Landed),
    Blocked { need: SplitNeed, attempts: u32 },
    Failed { reason: String, attempts: u32 },
    Budget { attempts: u32 },
    Parked { after_ms: u64 },
}

impl End {
    /// `None` for a journal failure: the worker's own store failed, which says nothing of
    /// the task; the worker releases the claim instead.
    pub fn of(end: TaskEnd) -> Option<End> {
        Some(match end {
            TaskEnd::Landed(l) => End::Landed(l),
            TaskEnd::Blocked { need, attempts } => End::Blocked { need, attempts },
            TaskEnd::Failed { reason, attempts } => End::Failed { reason, attempts },
            TaskEnd::Budget { attempts } => End::Budget { attempts },
            TaskEnd::Parked { after } => End::Parked {
                after_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
            },
            TaskEnd::Journal(_) => return None,
        })
    }

    pub fn into_task_end(self) -> TaskEnd {
        match self {
            End::Landed(l) => TaskEnd::Landed(l),
            End::Blocked { need, attempts } => TaskEnd::Blocked { need, attempts },
            End::Failed { reason, attempts } => TaskEnd::Failed { reason, attempts },
            End::Budget { attempts } => TaskEnd::Budget { attempts },
            End::Parked { after_ms } => TaskEnd::Parked {
                after: std::time::Duration::from_millis(after_ms),
            },
        }
    }
}

/// A claim's end as it travels.
#[derive(Debug, Serialize, Deserialize)]
pub struct FinishRequest {
    pub token: Token,
    pub end: End,
}
