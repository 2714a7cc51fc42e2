//! Reading the journal back for the record rather than for resuming (`resume.rs`):
//! an attempt's steps, a run's steps and tasks, and the steps of a task a worker has not
//! yet sent on to serve's journal (design: state.leases).
//! design: runtime.journal

use super::handle::{Journal, JournalError};
use crate::args;
use crate::error::StateError;
use crate::sql::Row;

/// One step as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRow {
    pub task: String,
    pub attempt: u32,
    pub step: u32,
    pub kind: String,
    pub body: String,
}

/// One task as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRow {
    pub task: String,
    pub state: String,
    pub reason: Option<String>,
}

/// A `SELECT task, attempt, step, kind, body FROM steps` row.
fn step_row(r: &Row) -> Result<StepRow, StateError> {
    Ok(StepRow {
        task: r.text(0)?,
        attempt: r.u32(1)?,
        step: r.u32(2)?,
        kind: r.text(3)?,
        body: r.text(4)?,
    })
}

impl Journal {
    /// The steps of one attempt, in order.
    pub fn attempt_steps(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
    ) -> Result<Vec<StepRow>, JournalError> {
        self.with(|c| {
            c.query(
                "SELECT task, attempt, step, kind, body FROM steps
                 WHERE run = ?1 AND task = ?2 AND attempt = ?3 ORDER BY step",
                args![run, task, attempt],
            )?
            .iter()
            .map(step_row)
            .collect()
        })
    }

    /// The steps of `task` in `run` after `after` (its attempt and step), in order: what a
    /// worker has not yet sent on to serve.
    pub fn task_steps_after(
        &self,
        run: &str,
        task: &str,
        after: Option<(u32, u32)>,
    ) -> Result<Vec<StepRow>, JournalError> {
        let (attempt, step) = after.map_or((-1, -1), |(a, s)| (i64::from(a), i64::from(s)));
        self.with(|c| {
            c.query(
                "SELECT task, attempt, step, kind, body FROM steps
                 WHERE run = ?1 AND task = ?2 AND (attempt > ?3 OR (attempt = ?3 AND step > ?4))
                 ORDER BY attempt, step",
                args![run, task, attempt, step],
            )?
            .iter()
            .map(step_row)
            .collect()
        })
    }

    /// Every step of `run`, in order.
    pub fn steps(&self, run: &str) -> Result<Vec<StepRow>, JournalError> {
        self.with(|c| {
            c.query(
                "SELECT task, attempt, step, kind, body FROM steps WHERE run = ?1
                 ORDER BY task, attempt, step",
                args![run],
            )?
            .iter()
            .map(step_row)
            .collect()
        })
    }

    /// Every task of `run`, by id.
    pub fn tasks(&self, run: &str) -> Result<Vec<TaskRow>, JournalError> {
        self.with(|c| {
            c.query(
                "SELECT task, state, reason FROM tasks WHERE run = ?1 ORDER BY task",
                args![run],
            )?
            .iter()
            .map(|r| {
                Ok(TaskRow {
                    task: r.text(0)?,
                    state: r.text(1)?,
                    reason: r.opt_text(2)?,
                })
            })
            .collect()
        })
    }
}
