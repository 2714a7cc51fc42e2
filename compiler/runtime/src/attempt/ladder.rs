//! A work task up its escalation ladder: the worker's attempt, then (after a failure) the
//! planner's re-plan of the leaf, then the `escalation` role's model if one is configured;
//! a conflicted submission runs the task again on the new head, up to
//! [`MAX_CONFLICT_RERUNS`] times. What a landing calls for (reviews, revisits, merged
//! contradictions, splits) is gathered into the task's end.
//! design: runtime.escalation

use serde_json::json;
use specc_llm::Role;
use specc_state::StepKind;
use specc_vcs::object::ObjectId;
use tracing::Instrument as _;

use super::context::{Retry, WorkOrder};
use super::ending::{Attempted, Notes};
use super::one::one_attempt;
use super::replan;
use super::resume::{Resumed, Rung, resume};
use crate::events::Event;
use crate::landing::{reviewed, revisits, settle_contradictions, split_need};
use crate::services::{Escalation, Services};
use crate::task_end::{Landed, TaskEnd};

/// Conflicts one task may meet before it fails.
pub const MAX_CONFLICT_RERUNS: u32 = 3;

/// Where a task stands on its ladder.
struct Ladder {
    order: WorkOrder,
    /// The attempt last made (0 before the first).
    attempt: u32,
    rung: Rung,
    /// What the next attempt is told of the last one's failure or conflict.
    retry: Option<Retry>,
    /// Conflicts in a row.
    conflicts: u32,
    /// The attempt a resumed run does again, if any.
    resumed: Option<Resumed>,
}

/// Carries out one work leaf. In a resumed run, its last attempt is done again from the
/// same base with the model responses it journaled (design: runtime.resume).
pub async fn run_task(s: &Services<'_>, mut order: WorkOrder) -> TaskEnd {
    let (mut attempt, mut rung) = (0, Rung::Worker);
    let resumed = resume(s, &mut order, &mut attempt, &mut rung);
    if let Some(id) = resumed.as_ref().and_then(|r| r.merged) {
        return TaskEnd::Landed(Landed {
            commit: Some(id),
            merged: Vec::new(),
            attempts: attempt + 1,
            followups: Vec::new(),
            flagged: Vec::new(),
        });
    }
    let mut ladder = Ladder {
        order,
        attempt,
        rung,
        retry: None,
        conflicts: 0,
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
    fn role(&self) -> Role {
        if self.rung == Rung::Escalation {
            Role::Escalation
        } else {
            Role::Worker
        }
    }

    /// Makes the next attempt: the task's end, or (`Err`) the failure the ladder climbs
    /// on, `None` for a conflict the task runs again for.
    async fn attempt(&mut self, s: &Services<'_>) -> Result<TaskEnd, Option<String>> {
        self.attempt += 1;
        let (attempt, role) = (self.attempt, self.role());
        let again = self.resumed.take();
        let mut notes = Notes::default();
        let retry = self.retry.as_ref();
        let ended = one_attempt(s, &self.order, attempt, role, retry, again, &mut notes);
        let span = tracing::error_span!("attempt", n = attempt, role = role.as_str());
        Ok(match ended.instrument(span).await {
            Attempted::Landed { commit, merged } => {
                landed(s, &self.order, attempt, commit, merged, &notes).await
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
    ) -> Result<TaskEnd, Option<String>> {
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
    async fn climb(&mut self, s: &Services<'_>, failure: String) -> Option<TaskEnd> {
        (s.events)(Event::AttemptFailed {
            task: self.order.task.id.clone(),
            attempt: self.attempt,
            reason: failure.clone(),
        });
        let escalation = s.policy.escalation == Escalation::StrongerModel;
        match self.rung {
            Rung::Worker => return self.replanned(s, failure, escalation).await,
            Rung::Replanned if escalation => self.rung = Rung::Escalation,
            Rung::Replanned | Rung::Escalation => {
                return Some(TaskEnd::Failed {
                    reason: failure,
                    attempts: self.attempt,
                });
            }
        }
        self.retry = Some(Retry::Failed { failure });
        None
    }

    /// The re-plan rung: the planner's new instructions for the next attempt, journaled as
    /// its step 0 before it starts (a re-plan journaled before the build died is not asked
    /// for again). A re-plan that fails goes on to the escalation rung, if there is one.
    async fn replanned(
        &mut self,
        s: &Services<'_>,
        failure: String,
        escalation: bool,
    ) -> Option<TaskEnd> {
        self.rung = Rung::Replanned;
        let (task, next) = (self.order.task.id.clone(), self.attempt + 1);
        let replanned = match s.journal.replanned(s.run, &task, next) {
            Ok(Some(instructions)) => Ok(instructions),
            _ => replan::replan(s.client, &self.order, &failure).await,
        };
        match replanned {
            Ok(instructions) => {
                let step = json!({"replanned": instructions, "after": failure});
                let journaled = s
                    .journal
                    .step(s.run, &task, next, 0, StepKind::Replan, &step);
                // A paid answer: committed before anything else happens.
                let durable = match journaled {
                    Ok(()) => s.journal.durable().await,
                    Err(e) => Err(e),
                };
                if let Err(e) = durable {
                    return Some(TaskEnd::Journal(e));
                }
                self.order.task.instructions = instructions;
            }
            Err(e) if e.is_stop() => {
                return Some(TaskEnd::Budget {
                    attempts: self.attempt,
                });
            }
            Err(e) => {
                tracing::warn!(task = %task, error = %e, "re-planning failed");
                if !escalation {
                    return Some(TaskEnd::Failed {
                        reason: format!("{failure}; re-planning failed: {e}"),
                        attempts: self.attempt,
                    });
                }
                self.rung = Rung::Escalation;
            }
        }
        self.retry = Some(Retry::Failed { failure });
        None
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
    })
}
