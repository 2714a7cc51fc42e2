//! Decisions settled while the build runs: a worker contests a decision it was given that
//! the spec (or a test against the spec) contradicts (`contest_decision`), the coordinator
//! settles it at once with the decision's owner, each side with its own rationale, and the
//! settled text is what every task that starts afterwards reads, in this build and the next
//! ones (the journal's `settled` table): nobody reads two versions of one decision, or one
//! the build has moved past. The decision's entry in `design-docs/` is rewritten when the
//! contesting task lands (`contradiction.rs`).
//! design: runtime.contested-decisions

use std::collections::HashMap;
use std::sync::Mutex;

use specc_ir::plan::PlannedDecision;
use specc_llm::Client;
use specc_passes::plan::{Conflict, Owned};
use specc_state::{Journal, JournalError, SettledRow};

use crate::attempt::{DecisionText, WorkOrder, fingerprint};

/// The decisions settled so far, by id.
#[derive(Debug, Default)]
pub struct Settled {
    rows: Mutex<HashMap<String, SettledRow>>,
}

/// A worker's contest of one decision it was given.
#[derive(Clone, Debug, serde::Deserialize)]
pub(crate) struct Contest {
    pub decision: String,
    pub evidence: String,
    pub proposed: String,
}

/// Who contests, for the journal and the coordinator.
pub(crate) struct Contester<'a> {
    pub run: &'a str,
    pub task: &'a str,
    pub attempt: u32,
}

impl Settled {
    /// The settlements of earlier builds, from `journal`.
    pub fn load(journal: &Journal) -> Result<Settled, JournalError> {
        let rows = journal.settled()?;
        Ok(Settled {
            rows: Mutex::new(rows.into_iter().map(|r| (r.decision.clone(), r)).collect()),
        })
    }

    /// The settlement of `id`, if any.
    pub(crate) fn get(&self, id: &str) -> Option<SettledRow> {
        self.rows.lock().ok()?.get(id).cloned()
    }

    /// The settlements `task` brought, in any attempt.
    pub(crate) fn settled_by(&self, task: &str) -> Vec<SettledRow> {
        let Ok(rows) = self.rows.lock() else {
            return Vec::new();
        };
        rows.values()
            .filter(|r| r.by_task == task)
            .cloned()
            .collect()
    }

    /// `order` reading the settled texts of its decisions (a spec decision binds over
    /// any), its fingerprint over them; `None` when it reads none that changed.
    pub fn apply(&self, order: &WorkOrder) -> Option<WorkOrder> {
        let rows = self.rows.lock().ok()?;
        if rows.is_empty() {
            return None;
        }
        // A settlement stands for the text it replaced: a plan that decides the id anew (an
        // edit re-planned it) is the planner's again, and the spec binds over both.
        let changes = |d: &DecisionText| {
            let row = rows.get(&d.id).filter(|_| !d.spec)?;
            (row.text != d.text && row.replaced == d.text).then_some(row)
        };
        if !order.decisions.iter().any(|d| changes(d).is_some()) {
            return None;
        }
        let mut o = order.clone();
        for d in &mut o.decisions {
            if let Some(row) = changes(d) {
                d.text.clone_from(&row.text);
                d.rationale.clone_from(&row.rationale);
            }
        }
        o.fingerprint = fingerprint(&o);
        Some(o)
    }

    /// Settles `contest` of `given` (a decision of the contester's task): the coordinator
    /// writes the one text both sides follow, which is journaled (committed) and from then
    /// on read by every task that starts. A contest journaled before (a resumed attempt
    /// repeating its call) is answered from the journal without asking again.
    pub(crate) async fn settle(
        &self,
        client: &Client,
        journal: &Journal,
        who: Contester<'_>,
        given: &DecisionText,
        contest: &Contest,
        max_tokens: u32,
    ) -> Result<SettledRow, String> {
        // Settled already — this contest, journaled before a resume, or another task's of
        // the same text: the settlement stands, and no second call is made.
        if let Some(row) = self.get(&given.id).filter(|r| {
            (r.by_task == who.task && r.attempt == who.attempt && r.evidence == contest.evidence)
                || r.replaced == given.text
        }) {
            return Ok(row);
        }
        let side = |owner: String, text: &str, rationale: &str| Owned {
            owner,
            decision: PlannedDecision {
                id: given.id.clone(),
                decision: text.to_owned(),
                rationale: rationale.to_owned(),
            },
        };
        let conflict = Conflict {
            id: given.id.clone(),
            settled_first: false,
            sides: vec![
                side(
                    format!("the planner that decided `{}`", given.id),
                    &given.text,
                    &given.rationale,
                ),
                side(
                    format!("task `{}`, which found the spec contradicts it", who.task),
                    &contest.proposed,
                    &format!("contested with evidence: {}", contest.evidence.trim()),
                ),
            ],
        };
        let req = specc_plan::coordinator::request(&conflict, max_tokens);
        let (merged, _) = specc_plan::coordinator::merge(client, &conflict, req)
            .await
            .map_err(|e| e.to_string())?;
        let row = SettledRow {
            decision: given.id.clone(),
            text: merged.decision,
            rationale: merged.rationale,
            replaced: given.text.clone(),
            by_task: who.task.to_owned(),
            attempt: who.attempt,
            evidence: contest.evidence.clone(),
            run: who.run.to_owned(),
        };
        journal.settle(&row).map_err(|e| e.to_string())?;
        if let Ok(mut rows) = self.rows.lock() {
            rows.insert(row.decision.clone(), row.clone());
        }
        Ok(row)
    }
}
