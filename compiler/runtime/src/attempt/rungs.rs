//! The re-plan rungs of a task's ladder: the planner's re-plan after a failure or a
//! dispute, and its parent planner's once the ladder is exhausted. A re-plan is journaled
//! as the next attempt's step 0 before that attempt starts, with the work it starts from;
//! one journaled before the build died is not asked for again.
//! design: runtime.escalation
//! design: runtime.disputes
//! design: runtime.carried-work

use serde_json::json;
use specc_state::StepKind;

use super::context::Retry;
use super::ladder::Ladder;
use super::replan::{self, Replan, Why};
use super::resume::Rung;
use crate::events::Event;
use crate::services::{Escalation, Services};
use crate::task_end::TaskEnd;

/// The re-plan journaled for `attempt` of `task` before the build died, and whether it was
/// the parent's.
fn journaled_replan(s: &Services<'_>, task: &str, attempt: u32) -> Option<(Replan, bool)> {
    let (kind, body) = s.journal.prelude(s.run, task, attempt).ok().flatten()?;
    if kind != StepKind::Replan {
        return None;
    }
    let r = serde_json::from_value::<Replan>(body["replan"].clone()).ok()?;
    Some((r, body["by"] == "parent"))
}

/// The disputed check a re-plan answers, as journaled (null when it answers none).
fn dispute_of(why: &Why<'_>) -> serde_json::Value {
    match why {
        Why::Disputed(d) => json!(d),
        _ => serde_json::Value::Null,
    }
}

/// Journals a re-plan, a paid answer: committed before anything else happens.
async fn journal_replan(
    s: &Services<'_>,
    task: &str,
    attempt: u32,
    step: &serde_json::Value,
) -> Result<(), specc_state::JournalError> {
    s.journal
        .step(s.run, task, attempt, 0, StepKind::Replan, step)?;
    s.journal.durable().await
}

impl Ladder {
    /// The re-plan for `why`, after which the task stands on `next`. A re-plan that cannot
    /// be had leaves a disputed check standing (the rung kept), goes on to the escalation
    /// rung after a first failure if there is one, and otherwise ends the task.
    pub(super) async fn replanned(
        &mut self,
        s: &Services<'_>,
        why: Why<'_>,
        failure: &str,
        next: Rung,
    ) -> Option<TaskEnd> {
        let (task, attempt) = (self.order.task.id.clone(), self.attempt + 1);
        let by = if matches!(why, Why::Exhausted(_)) {
            "parent"
        } else {
            "planner"
        };
        // A re-plan journaled before the build died is used as it was, on the rung it
        // put the task on.
        let mut next = next;
        let r = match journaled_replan(s, &task, attempt) {
            Some((r, parent)) => {
                if parent {
                    next = Rung::Parent;
                }
                r
            }
            None => {
                let outcomes = replan::sibling_outcomes(s.journal, s.run);
                let commands = &s.policy.known_commands;
                match replan::replan(
                    s.client,
                    &self.order,
                    &why,
                    commands,
                    &outcomes,
                    s.repo.line_budget(),
                )
                .await
                {
                    Ok(r) => {
                        let step = json!({"replanned": r.instructions, "replan": r, "by": by,
                                          "after": failure, "dispute": dispute_of(&why),
                                          "carried": self.carried});
                        if let Err(e) = journal_replan(s, &task, attempt, &step).await {
                            return Some(TaskEnd::Journal(e));
                        }
                        r
                    }
                    Err(e) if e.is_stop() => {
                        return Some(TaskEnd::Budget {
                            attempts: self.attempt,
                        });
                    }
                    Err(e) => {
                        return self
                            .unreplanned(s, &why, failure, next, &e.to_string())
                            .await;
                    }
                }
            }
        };
        r.apply(&mut self.order);
        self.rung = next;
        (s.events)(Event::Replanned {
            task,
            by: by.to_owned(),
            changed: r.changes().iter().map(|c| (*c).to_owned()).collect(),
            reason: r.reason.clone(),
        });
        self.retry = Some(Retry::Replanned {
            note: told(&why, failure, &r),
        });
        None
    }

    /// No re-plan could be had (`error`): what the ladder does instead.
    async fn unreplanned(
        &mut self,
        s: &Services<'_>,
        why: &Why<'_>,
        failure: &str,
        next: Rung,
        error: &str,
    ) -> Option<TaskEnd> {
        tracing::warn!(task = %self.order.task.id, error, "re-planning failed");
        let escalation = s.policy.escalation == Escalation::StrongerModel;
        if let Why::Disputed(d) = why {
            self.retry = Some(Retry::Failed {
                failure: format!(
                    "{failure}\nThe planner could not decide the dispute ({error}): `{}` stands.",
                    d.check
                ),
            });
            return self.carry_journaled(s);
        }
        if next == Rung::Replanned && escalation {
            self.rung = Rung::Escalation;
            self.retry = Some(Retry::Failed {
                failure: failure.to_owned(),
            });
            return self.carry_journaled(s);
        }
        if next == Rung::Replanned && self.order.parent.is_some() {
            // The leaf's own re-plan could not be had: one more attempt as it stands, and
            // its parent re-plans it if that fails too.
            self.rung = Rung::Replanned;
            self.retry = Some(Retry::Failed {
                failure: failure.to_owned(),
            });
            return self.carry_journaled(s);
        }
        Some(TaskEnd::Failed {
            reason: format!("{failure}; re-planning failed: {error}"),
            attempts: self.attempt,
        })
    }

    /// Journals the work the next attempt starts from as its step 0, when there is some
    /// and no re-plan holds it, so that a resumed run starts that attempt from it too.
    pub(super) fn carry_journaled(&mut self, s: &Services<'_>) -> Option<TaskEnd> {
        if self.carried.is_empty() {
            return None;
        }
        let step = json!({"carried": self.carried});
        let task = &self.order.task.id;
        match s
            .journal
            .step(s.run, task, self.attempt + 1, 0, StepKind::Carry, &step)
        {
            Ok(()) => None,
            Err(e) => Some(TaskEnd::Journal(e)),
        }
    }
}

/// What the next attempt is told of the last one and its re-plan.
fn told(why: &Why<'_>, failure: &str, r: &Replan) -> String {
    let changed = match r.changes().as_slice() {
        [] => String::new(),
        changes => format!(" (new {})", changes.join(" and ")),
    };
    let reason = if r.reason.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", r.reason.trim())
    };
    match why {
        Why::Failed(_) => format!(
            "An earlier attempt failed:\n{failure}\nThe planner re-planned the task{changed}{reason}"
        ),
        Why::Disputed(d) if r.acceptance.is_some() => format!(
            "The earlier attempt disputed `{}`. The planner changed the task{changed}{reason}",
            d.check
        ),
        Why::Disputed(d) => format!(
            "The earlier attempt disputed `{}`. The planner kept the check{changed}{reason}",
            d.check
        ),
        Why::Exhausted(_) => format!(
            "Every attempt so far failed; the last:\n{failure}\nThe task's parent planner re-planned it{changed}{reason}"
        ),
    }
}
