//! Handing a conflicted submission to the merge agent, from an attempt: the task is in the
//! merge queue meanwhile (`specc status`), the merge agent's work is journaled as a step,
//! and its outcome becomes the attempt's.
//! design: runtime.merge-agent

use serde_json::json;
use specc_vcs::Submission;

use specc_state::{StepKind, TaskRef, TaskState};

use super::context::WorkOrder;
use super::ending::{Attempted, refusal, refused};
use crate::events::Event;
use crate::landing::{Merged, Reconciled, reconcile};
use crate::services::Services;

/// Hands a conflict to the merge agent; journals what it did (step `step`).
pub(super) async fn merged(
    s: &Services<'_>,
    order: &WorkOrder,
    submission: &Submission,
    conflict: &specc_vcs::Conflict,
    attempt: u32,
    step: u32,
) -> Attempted {
    let task = order.task.id.as_str();
    // In the merge queue until the merge agent is done: `specc status` shows it.
    let waiting = TaskRef {
        id: task,
        title: &order.task.title,
        fingerprint: &order.fingerprint,
    };
    let reason = format!("merging {}", conflict.path);
    if let Err(e) = s
        .journal
        .set_task(s.run, waiting, TaskState::Running, Some(&reason), None)
    {
        return Attempted::Journal(e);
    }
    (s.events)(Event::Merging {
        task: task.to_owned(),
        path: conflict.path.clone(),
    });
    let Reconciled { merged, notes } = reconcile(s, order, submission, conflict).await;
    let outcome = journaled(&merged);
    let record = json!({"conflict": conflict.path, "merger": notes, "outcome": outcome});
    if let Err(e) = s
        .journal
        .step(s.run, task, attempt, step, StepKind::Merge, &record)
    {
        return Attempted::Journal(e);
    }
    match merged {
        Merged::Landed {
            id,
            merged,
            resolved,
        } => {
            (s.events)(Event::Merged {
                task: task.to_owned(),
                paths: resolved,
            });
            Attempted::Landed {
                commit: Some(id),
                merged,
            }
        }
        Merged::SentBack { path, reason } => {
            (s.events)(Event::MergeSentBack {
                task: task.to_owned(),
                path: path.clone(),
                reason: reason.clone(),
            });
            Attempted::Conflict {
                path,
                theirs: conflict
                    .head_intent
                    .as_deref()
                    .and_then(|m| m.lines().next())
                    .unwrap_or("another task's change")
                    .to_owned(),
            }
        }
        Merged::Refused(r) => refused(s, r, &submission.changes).await,
        Merged::Budget => Attempted::Budget,
        Merged::Unchanged => Attempted::Landed {
            commit: None,
            merged: Vec::new(),
        },
    }
}

/// How the merge ended, as its journal step records it.
fn journaled(merged: &Merged) -> serde_json::Value {
    match merged {
        Merged::Landed { id, resolved, .. } => {
            json!({"committed": id.hex(), "resolved": resolved})
        }
        Merged::SentBack { path, reason } => {
            json!({"sent_back": path, "reason": reason})
        }
        Merged::Refused(r) => json!({"refused": refusal(r)}),
        Merged::Budget => json!({"stopped": "budget"}),
        Merged::Unchanged => json!({"unchanged": true}),
    }
}
