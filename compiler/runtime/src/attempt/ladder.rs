//! A work task up its escalation ladder: the worker's attempt, then (after a failure, or a
//! check its worker disputes) the planner's re-plan of the leaf, then the `escalation`
//! role's model if one is configured, then the re-plan of its parent planner with every
//! failure, before the build gives up on it. An attempt that failed in its checks hands its
//! work to the next one. A conflicted submission runs the task again on the new head, up to
//! [`MAX_CONFLICT_RERUNS`] times. What a landing calls for (reviews, revisits, merged
//! contradictions, splits) is gathered into the task's end.
//! design: runtime.escalation
//! design: runtime.disputes

use specc_llm::Role;
use specc_vcs::Change;
use specc_vcs::object::ObjectId;
use tracing::Instrument as _;

use super::context::{Retry, WorkOrder};
use super::ending::{Attempted, Failure, Notes};
use super::one::{Start, one_attempt};
use super::replan::Why;
use super::resume::{Resumed, Rung, resume};
use crate::events::Event;
use crate::landing::{record_settled, reviewed, revisits, settle_contradictions, split_need};
use crate::services::{Escalation, Services};
use crate::task_end::{Landed, TaskEnd};

/// Conflicts one task may meet before it fails.
pub(crate) const MAX_CONFLICT_RERUNS: u32 = 3;

/// Disputes one task may bring before the planner; a further one is a failure.
const MAX_DISPUTES: u32 = 2;

/// Where a task stands on its ladder.
pub(super) struct Ladder {
    pub(super) order: WorkOrder,
    /// The attempt last made (0 before the first).
    pub(super) attempt: u32,
    pub(super) rung: Rung,
    /// What the next attempt is told of the last one's failure or conflict.
    pub(super) retry: Option<Retry>,
    /// Conflicts in a row.
    conflicts: u32,
    /// Disputes brought before the planner.
    disputes: u32,
    /// Every attempt's failure, for the parent's re-plan.
    failures: Vec<String>,
    /// The last attempt's work, which the next one starts from (design:
    /// runtime.carried-work).
    pub(super) carried: Vec<Change>,
    /// The attempt a resumed run does again, if any.
    resumed: Option<Resumed>,
}

/// Carries out one work leaf. In a resumed run, its last attempt is done again from the
/// same base with the model responses it journaled (design: runtime.resume).
pub async fn run_task(s: &Services<'_>, mut order: WorkOrder) -> TaskEnd {
    let (mut attempt, mut rung, mut carried, mut disputes) = (0, Rung::Worker, Vec::new(), 0);
    let resumed = resume(
        s,
        &mut order,
        &mut attempt,
        &mut rung,
        &mut carried,
        &mut disputes,
    );
    if let Some(id) = resumed.as_ref().and_then(|r| r.merged) {
        return TaskEnd::Landed(Landed {
            commit: Some(id),
            merged: Vec::new(),
            attempts: attempt + 1,
            followups: Vec::new(),
            flagged: Vec::new(),
            replanned: rung != Rung::Worker || disputes > 0,
        });
    }
    let mut ladder = Ladder {
        order,
        attempt,
        rung,
        retry: None,
        conflicts: 0,
        disputes,
        failures: Vec::new(),
        carried,
        resumed,
    };
    loop {
        let failure = match ladder.attempt(s).await {
            Ok(end) => return end,
            Err(None) => continue,
            Err(Some(failure)) => failure,
        };
        if let Some(end) = ladder.climb(s, failure).await {
            return end;
        }
    }
}

impl Ladder {
    /// Who makes the next attempt: the escalation role's model on its rung, and after the
    /// parent's re-plan when one is configured.
    fn role(&self, s: &Services<'_>) -> Role {
        let stronger = s.policy.escalation == Escalation::StrongerModel;
        match self.rung {
            Rung::Escalation => Role::Escalation,
            Rung::Parent if stronger => Role::Escalation,
            _ => Role::Worker,
        }
    }

    /// Makes the next attempt: the task's end, or (`Err`) the failure the ladder climbs
    /// on, `None` for a conflict the task runs again for.
    async fn attempt(&mut self, s: &Services<'_>) -> Result<TaskEnd, Option<Failure>> {
        self.attempt += 1;
        // A decision settled since the last attempt (this task's contest or another's): the
        // next attempt reads the settled text and lands with a fingerprint over it
        // (design: runtime.contested-decisions).
        if let Some(o) = s.settled.apply(&self.order) {
            self.order = o;
        }
        let (attempt, role) = (self.attempt, self.role(s));
        let mut notes = Notes::default();
        let carried = std::mem::take(&mut self.carried);
        let start = Start {
            attempt,
            role,
            retry: self.retry.as_ref(),
            carried: &carried,
            resumed: self.resumed.take(),
        };
        let ended = one_attempt(s, &self.order, start, &mut notes);
        let span = tracing::error_span!(
            "attempt",
            n = attempt,
            role = role.as_str(),
            outcome = tracing::field::Empty
        );
        let ended = ended.instrument(span.clone()).await;
        // For the build's trace (design: runtime.traces).
        span.record("outcome", ended.word());
        Ok(match ended {
            Attempted::Landed { commit, merged } => {
                let mut end = landed(s, &self.order, attempt, commit, merged, &notes).await;
                if let TaskEnd::Landed(l) = &mut end {
                    l.replanned = self.rung != Rung::Worker || self.disputes > 0;
                }
                end
            }
            Attempted::Conflict { path, theirs } => return self.conflicted(s, path, theirs),
            Attempted::Blocked(need) => TaskEnd::Blocked {
                need,
                attempts: attempt,
            },
            Attempted::Refused(reason) | Attempted::Broken(reason) => TaskEnd::Failed {
                reason,
                attempts: attempt,
            },
            Attempted::Budget => TaskEnd::Budget { attempts: attempt },
            Attempted::Parked(after) => TaskEnd::Parked { after },
            Attempted::Journal(e) => TaskEnd::Journal(e),
            Attempted::Failed(f) => return Err(Some(f)),
        })
    }

    /// A conflict: the task runs again on the new head, shown it, unless it met too many.
    fn conflicted(
        &mut self,
        s: &Services<'_>,
        path: String,
        theirs: String,
    ) -> Result<TaskEnd, Option<Failure>> {
        self.conflicts += 1;
        (s.events)(Event::Conflict {
            task: self.order.task.id.clone(),
            path: path.clone(),
        });
        if self.conflicts > MAX_CONFLICT_RERUNS {
            return Ok(TaskEnd::Failed {
                reason: format!("{} conflicts in a row, the last in {path}", self.conflicts),
                attempts: self.attempt,
            });
        }
        self.retry = Some(Retry::Conflict { path, theirs });
        Err(None)
    }

    /// Climbs one rung after `failure`: the task's end if none is left.
    async fn climb(&mut self, s: &Services<'_>, failure: Failure) -> Option<TaskEnd> {
        (s.events)(Event::AttemptFailed {
            task: self.order.task.id.clone(),
            attempt: self.attempt,
            reason: failure.reason.clone(),
        });
        self.failures.push(failure.reason.clone());
        let told = failure.told();
        self.carried = failure.work;
        let reason = failure.reason;
        if let Some(dispute) = failure.dispute.filter(|_| self.disputes < MAX_DISPUTES) {
            self.disputes += 1;
            let rung = self.rung;
            return self
                .replanned(s, Why::Disputed(&dispute), &reason, rung)
                .await;
        }
        let escalation = s.policy.escalation == Escalation::StrongerModel;
        let parent = self.order.parent.is_some();
        match self.rung {
            Rung::Worker => {
                return self
                    .replanned(s, Why::Failed(&told), &told, Rung::Replanned)
                    .await;
            }
            Rung::Replanned if escalation => self.rung = Rung::Escalation,
            Rung::Replanned | Rung::Escalation if parent => {
                let failures = self.failures.clone();
                return self
                    .replanned(s, Why::Exhausted(&failures), &reason, Rung::Parent)
                    .await;
            }
            Rung::Replanned | Rung::Escalation | Rung::Parent => {
                return Some(TaskEnd::Failed {
                    reason,
                    attempts: self.attempt,
                });
            }
        }
        self.retry = Some(Retry::Failed { failure: told });
        self.carry_journaled(s)
    }
}

/// A landed attempt's end: the follow-ups its reviews, deliberate breaks and reported
/// contradictions call for, and the files flagged for a split (by it or before).
async fn landed(
    s: &Services<'_>,
    order: &WorkOrder,
    attempt: u32,
    commit: Option<ObjectId>,
    merged: Vec<String>,
    notes: &Notes,
) -> TaskEnd {
    let mut followups = match commit {
        Some(id) => reviewed(s, order, attempt, id).await,
        None => Vec::new(),
    };
    if let Some(id) = commit.filter(|_| !notes.breaks.is_empty()) {
        followups.extend(revisits(s, order, &notes.breaks, id).await);
    }
    if !notes.contradictions.is_empty() {
        followups.extend(settle_contradictions(s, order, &notes.contradictions).await);
    }
    // The decisions this attempt contested and the coordinator settled: their entries.
    let settled = s.settled.settled_by(&order.task.id);
    if !settled.is_empty() {
        followups.extend(record_settled(s, order, &settled).await);
    }
    let mut paths = s.repo.flagged_now();
    paths.extend(notes.flagged.iter().cloned());
    paths.sort();
    paths.dedup();
    let mut flagged = Vec::new();
    for path in paths {
        flagged.extend(split_need(s.repo, &path).await);
    }
    TaskEnd::Landed(Landed {
        commit,
        merged,
        attempts: attempt,
        followups,
        flagged,
        replanned: false,
    })
}
