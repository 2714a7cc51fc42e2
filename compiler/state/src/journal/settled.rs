//! Decisions settled while a build ran (a worker's contest, settled by the coordinator):
//! the text every later task reads, in this build and the ones after it, until another
//! settlement replaces it (design: runtime.contested-decisions).

use super::handle::{Journal, JournalError};
use crate::args;

/// One settled decision as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SettledRow {
    pub decision: String,
    /// The settled text.
    pub text: String,
    /// The coordinator's rationale.
    pub rationale: String,
    /// The text it replaced.
    pub replaced: String,
    /// What brought it: the task, its attempt and the evidence.
    pub by_task: String,
    pub attempt: u32,
    pub evidence: String,
    pub run: String,
}

impl Journal {
    /// Records a settlement (replacing any earlier one of the decision) and commits it: a
    /// paid answer that later tasks read at once.
    pub fn settle(&self, row: &SettledRow) -> Result<(), JournalError> {
        let r = row.clone();
        self.defer(move |c| {
            c.execute(
                "INSERT INTO settled (decision, text, rationale, replaced, by_task, attempt,
                     evidence, run)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (decision) DO UPDATE SET text = ?2, rationale = ?3,
                     replaced = ?4, by_task = ?5, attempt = ?6, evidence = ?7, run = ?8",
                args![
                    &r.decision,
                    &r.text,
                    &r.rationale,
                    &r.replaced,
                    &r.by_task,
                    r.attempt,
                    &r.evidence,
                    &r.run
                ],
            )?;
            Ok(())
        })?;
        self.commit()
    }

    /// Every settled decision, by id.
    pub fn settled(&self) -> Result<Vec<SettledRow>, JournalError> {
        self.with(|c| {
            c.query(
                "SELECT decision, text, rationale, replaced, by_task, attempt, evidence, run
                 FROM settled ORDER BY decision",
                args![],
            )?
            .iter()
            .map(|r| {
                Ok(SettledRow {
                    decision: r.text(0)?,
                    text: r.text(1)?,
                    rationale: r.text(2)?,
                    replaced: r.text(3)?,
                    by_task: r.text(4)?,
                    attempt: r.u32(5)?,
                    evidence: r.text(6)?,
                    run: r.text(7)?,
                })
            })
            .collect()
        })
    }
}
