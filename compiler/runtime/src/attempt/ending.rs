//! How one attempt ended, journaled as it ends, and the VCS's refusals in words.
//! design: runtime.escalation

use serde_json::json;
use specc_state::JournalError;
use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Outcome, Refusal, Repo};

use crate::landing::{BLOCKED_SUFFIX, Break, Contradiction, SplitNeed, split_need};
use crate::services::Services;
use crate::tools::Dispute;

/// How one attempt ended.
pub(super) enum Attempted {
    Landed {
        commit: Option<ObjectId>,
        merged: Vec<String>,
    },
    Conflict {
        path: String,
        theirs: String,
    },
    Refused(String),
    /// Refused: a file of the head would pass the line budget; it needs a split first.
    Blocked(SplitNeed),
    /// The worker's attempt failed: the next rung of the ladder may do better.
    Failed(Failure),
    /// specc's own machinery failed (the VCS, the checkout): no model can fix that, so the
    /// task fails without climbing the ladder.
    Broken(String),
    Budget,
    Parked(std::time::Duration),
    Journal(JournalError),
}

impl Attempted {
    /// How the attempt ended, in one word (a trace's `outcome`).
    pub(super) fn word(&self) -> &'static str {
        match self {
            Attempted::Landed { .. } => "landed",
            Attempted::Conflict { .. } => "conflict",
            Attempted::Refused(_) => "refused",
            Attempted::Blocked(_) => "blocked",
            Attempted::Failed(_) => "failed",
            Attempted::Broken(_) => "broken",
            Attempted::Budget => "budget",
            Attempted::Parked(_) => "parked",
            Attempted::Journal(_) => "journal",
        }
    }
}

/// A failed attempt, as the ladder climbs on it.
#[derive(Debug, Default)]
pub(super) struct Failure {
    /// One line: the event, the task's end, the list of an exhausted ladder's failures.
    pub(super) reason: String,
    /// What the models on the next rungs are shown beside the reason: the failed checks
    /// with their output (empty when the reason says it all).
    pub(super) detail: String,
    /// The worker's case against one of its checks, when it disputed one.
    pub(super) dispute: Option<Box<Dispute>>,
    /// It failed in its checks or disputed one: its work is kept for the next attempt.
    pub(super) keep: bool,
    /// The attempt's in-scope changes, when kept (design: runtime.carried-work).
    pub(super) work: Vec<Change>,
}

impl Failure {
    /// The reason with its detail, for the planner that re-plans and the next attempt.
    pub(super) fn told(&self) -> String {
        match self.detail.trim() {
            "" => self.reason.clone(),
            detail => format!("{}\n{detail}", self.reason),
        }
    }

    pub(super) fn new(reason: String) -> Failure {
        Failure {
            reason,
            ..Failure::default()
        }
    }
}

/// What an attempt's tools reported that outlives it: deliberate breaks and contradictions.
#[derive(Debug, Default)]
pub(super) struct Notes {
    /// Files the worker flagged as too big: the VCS may not have published them yet when
    /// the task lands without a commit.
    pub(super) flagged: Vec<String>,
    pub(super) breaks: Vec<Break>,
    pub(super) contradictions: Vec<Contradiction>,
}

/// A refusal of `work` at the landing. One that keeps a file of the head from growing past
/// the budget blocks the task until the file is split; one the worker can fix (a new file
/// over the budget, a path the VCS refuses) fails the attempt with its work kept, so the
/// ladder climbs on it and the next attempt is told why and starts from that work; the VCS's
/// own failures end the task (design: runtime.landing-refusals).
pub(super) async fn refused(s: &Services<'_>, r: Refusal, work: &[Change]) -> Attempted {
    if let Refusal::Megafile { path, .. } = &r
        && let Some(need) = split_need(s.repo, path).await
    {
        return Attempted::Blocked(need);
    }
    match r {
        Refusal::UnknownBase | Refusal::Unavailable => Attempted::Refused(refusal(&r)),
        Refusal::Megafile { .. }
        | Refusal::ExpectedMismatch { .. }
        | Refusal::InvalidPath { .. }
        | Refusal::PathCollision { .. } => Attempted::Failed(Failure {
            reason: refusal(&r),
            keep: true,
            work: work.to_vec(),
            ..Failure::default()
        }),
    }
}

/// Journals how the attempt ended and passes the result on.
pub(super) fn end(s: &Services<'_>, task: &str, attempt: u32, a: Attempted) -> Attempted {
    let (state, reason) = match &a {
        Attempted::Landed { .. } => ("landed", None),
        Attempted::Conflict { path, .. } => ("conflict", Some(format!("conflict in {path}"))),
        Attempted::Refused(r) => ("refused", Some(r.clone())),
        Attempted::Blocked(n) => ("blocked", Some(format!("{}{BLOCKED_SUFFIX}", n.path))),
        Attempted::Failed(f) if f.dispute.is_some() => ("disputed", Some(f.reason.clone())),
        Attempted::Failed(f) => ("failed", Some(f.reason.clone())),
        Attempted::Broken(r) => ("broken", Some(r.clone())),
        Attempted::Budget => ("stopped", Some("budget".to_owned())),
        Attempted::Parked(d) => (
            "parked",
            Some(format!("the provider asked to wait {} s", d.as_secs())),
        ),
        Attempted::Journal(_) => return a,
    };
    match s
        .journal
        .end_attempt(s.run, task, attempt, state, reason.as_deref())
    {
        Ok(()) => a,
        Err(e) => Attempted::Journal(e),
    }
}

/// Flags `paths` for the megafile guard.
pub(super) fn flag(repo: &Repo, paths: &[String]) {
    for p in paths {
        repo.flag(p);
    }
}

/// A submission's outcome as the journal records it.
pub(super) fn describe(o: &Outcome) -> serde_json::Value {
    match o {
        Outcome::Committed { id, seq, merged } => {
            json!({"committed": id.hex(), "seq": seq, "merged": merged})
        }
        Outcome::Conflict(c) => json!({"conflict": c.path}),
        Outcome::Refused(r) => json!({"refused": refusal(r)}),
    }
}

/// The first line of the other side's intent, for a task shown its conflict.
pub(super) fn theirs(head_intent: Option<String>) -> String {
    head_intent
        .map(|m| m.lines().next().unwrap_or_default().to_owned())
        .unwrap_or_else(|| "another task's change".to_owned())
}

/// A refusal in words.
pub(super) fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::Megafile {
            path,
            lines,
            budget,
            ..
        } => format!(
            "the VCS refused the commit: {path} would have {lines} lines, over the budget of {budget}; split it into files of at most {budget} lines within the write scope (a file that must stay whole: `flag_big_file`)"
        ),
        Refusal::UnknownBase => "the VCS refused the commit: unknown base".to_owned(),
        Refusal::Unavailable => "the VCS is unavailable".to_owned(),
        Refusal::ExpectedMismatch { path } => {
            format!("the VCS refused the commit: {path} is not what the base holds")
        }
        Refusal::InvalidPath { path } => format!("the VCS refused the path `{path}`"),
        Refusal::PathCollision { path } => {
            format!("the VCS refused `{path}`: a file and a directory collide")
        }
    }
}
