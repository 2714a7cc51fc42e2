//! What a build tells its driver as it goes, for progress output and the metrics: one
//! [`Event`] per thing that happened to the plan's tasks.
//! design: runtime.metrics

/// Something that happened, for progress output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Seeded {
        commit: Option<String>,
    },
    UpToDate {
        task: String,
    },
    /// An up-to-date leaf whose dependency landed again ran its checks on the new head:
    /// `passed`, it stays up to date; otherwise it runs again.
    Rechecked {
        task: String,
        passed: bool,
        reason: Option<String>,
    },
    /// A leaf that landed in an earlier build is no longer in the plan: its code stays.
    NoLongerPlanned {
        task: String,
    },
    AttemptStarted {
        task: String,
        attempt: u32,
        role: String,
    },
    AttemptFailed {
        task: String,
        attempt: u32,
        reason: String,
    },
    /// A running attempt's model call `call` answered, and the attempt is `doing` what it
    /// said (its tool calls, or the acceptance checks). For a live display, not a log line.
    Step {
        task: String,
        attempt: u32,
        call: u32,
        doing: String,
    },
    /// A planner re-planned a work leaf (after a failure, a dispute, or its whole ladder).
    Replanned {
        task: String,
        /// `planner` (the leaf's re-plan) or `parent` (after its ladder was exhausted).
        by: String,
        /// What changed besides the instructions: `acceptance`, `write scope`.
        changed: Vec<String>,
        reason: String,
    },
    Conflict {
        task: String,
        path: String,
    },
    /// A conflicted submission went to the merge agent.
    Merging {
        task: String,
        path: String,
    },
    /// The merge agent's resolution landed (`paths`: the ones it resolved).
    Merged {
        task: String,
        paths: Vec<String>,
    },
    /// The merge agent did not resolve it: the task runs again on the new head.
    MergeSentBack {
        task: String,
        path: String,
        reason: String,
    },
    Landed {
        task: String,
        commit: Option<String>,
        merged: Vec<String>,
    },
    Failed {
        task: String,
        reason: String,
    },
    Skipped {
        task: String,
        because: String,
    },
    /// The provider asked a task's model call to wait: the task is queued again after
    /// `seconds`, its job slot free meanwhile.
    Parked {
        task: String,
        seconds: u64,
    },
    /// A worker of `task` found decisions `a` and `b` contradicting each other; the
    /// coordinator merged them and the merged text replaced both.
    DecisionsMerged {
        task: String,
        a: String,
        b: String,
    },
    /// The VCS refused to let `path` grow past its line budget: `task` waits for `split`.
    Blocked {
        task: String,
        path: String,
        split: String,
    },
    /// The build added a task while it ran: a reviewer's follow-up of `after`, or a split.
    FollowUp {
        task: String,
        after: Vec<String>,
        why: String,
    },
    /// A running task ended without landing because the build is stopping.
    TaskStopped {
        task: String,
        reason: String,
    },
    /// The build stops starting work (once).
    Stopped {
        reason: String,
    },
}
