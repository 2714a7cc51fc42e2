//! Where a task of a resumed run stands: its last attempt is done again from the same base
//! with the model responses it journaled, on the rung it was on, with what its re-plans
//! gave it and the work it started from (design: runtime.resume).
//! design: runtime.resume

use specc_llm::{Response, Role};
use specc_vcs::object::ObjectId;

use specc_state::StepKind;
use specc_vcs::Change;

use super::context::WorkOrder;
use super::replan::apply_journaled;
use crate::services::Services;

/// The rungs of the escalation ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rung {
    Worker,
    Replanned,
    Escalation,
    /// Re-planned by its parent planner after the rungs above: the last.
    Parent,
}

/// An attempt done again after the build died: its base and its journaled responses.
pub(super) struct Resumed {
    pub(super) base: ObjectId,
    pub(super) replay: Vec<Response>,
    /// The merge agent landed the attempt before the build died: its commit.
    pub(super) merged: Option<ObjectId>,
}

/// Where a task of a resumed run stands: its last attempt is to be done again (so
/// `attempt` is set one before it), on the rung it was on, with what every re-plan before
/// it gave the task (instructions, checks, scope) and the work it started from in
/// `carried`. `None` when the task has no attempt in this run.
pub(super) fn resume(
    s: &Services<'_>,
    order: &mut WorkOrder,
    attempt: &mut u32,
    rung: &mut Rung,
    carried: &mut Vec<Change>,
    disputes: &mut u32,
) -> Option<Resumed> {
    let task = order.task.id.clone();
    let last = s.journal.last_attempt(s.run, &task).ok().flatten()?;
    if last.state == "blocked" {
        // It waited for a split: the next attempt starts afresh on top of it.
        *attempt = last.attempt;
        return None;
    }
    let base = ObjectId::from_hex(&last.base)?;
    let replay = s.journal.model_responses(s.run, &task, last.attempt).ok()?;
    *attempt = last.attempt - 1;
    for n in 1..=last.attempt {
        let Ok(Some((kind, body))) = s.journal.prelude(s.run, &task, n) else {
            continue;
        };
        if n == last.attempt {
            *carried = serde_json::from_value(body["carried"].clone()).unwrap_or_default();
        }
        if kind != StepKind::Replan {
            continue;
        }
        apply_journaled(order, &body);
        if !body["dispute"].is_null() {
            *disputes += 1;
        }
        if body["by"] == "parent" {
            *rung = Rung::Parent;
        } else if body["dispute"].is_null() && *rung == Rung::Worker {
            *rung = Rung::Replanned;
        }
    }
    if last.role == Role::Escalation.as_str() && *rung != Rung::Parent {
        *rung = Rung::Escalation;
    }
    Some(Resumed {
        base,
        replay,
        merged: merged_before(s, &task, last.attempt),
    })
}

/// The commit the merge agent landed for `attempt` before the build died, if it did: it is
/// not done again (replaying would re-submit the conflicted submission, pay the merger again
/// and land a second commit).
fn merged_before(s: &Services<'_>, task: &str, attempt: u32) -> Option<ObjectId> {
    s.journal
        .attempt_steps(s.run, task, attempt)
        .unwrap_or_default()
        .iter()
        .filter(|st| st.kind == "merge")
        .filter_map(|st| serde_json::from_str::<serde_json::Value>(&st.body).ok())
        .find_map(|b| {
            b["outcome"]["committed"]
                .as_str()
                .and_then(ObjectId::from_hex)
        })
}
