//! What resuming a killed build reads back from the journal: the run that did not finish,
//! each task's last attempt (its number, role, base and state), the model responses it
//! journaled (replayed instead of asked again), and the planner's new instructions for an
//! attempt (step 0), so a re-plan made before the crash is not paid for twice.
//! design: runtime.resume

use super::handle::{Attempted, Journal, JournalError};
use super::kinds::StepKind;
use crate::args;
use crate::error::StateError;

/// A task's last attempt in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastAttempt {
    pub attempt: u32,
    pub role: String,
    /// The commit it started from (hex).
    pub base: String,
    /// `running` if the build died during it.
    pub state: String,
    /// Why it ended, if it did and said.
    pub reason: Option<String>,
}

impl Journal {
    /// Whether `task` may have an attempt in `run` (`false`: certainly none).
    fn may_have_attempt(&self, run: &str, task: &str) -> Result<bool, JournalError> {
        let poisoned = || JournalError::State(StateError::Lost("a lock".into()));
        let mut known = self.attempted.lock().map_err(|_| poisoned())?;
        if known.as_ref().is_none_or(|a| a.run != run) {
            // After a commit, so that attempts this process queued are among them.
            let tasks = self.with(|c| {
                c.query(
                    "SELECT DISTINCT task FROM attempts WHERE run = ?1",
                    args![run],
                )?
                .iter()
                .map(|r| r.text(0))
                .collect()
            })?;
            *known = Some(Attempted {
                run: run.to_owned(),
                tasks,
            });
        }
        Ok(known.as_ref().is_some_and(|a| a.tasks.contains(task)))
    }

    /// This process starts an attempt of `task` in `run`.
    pub(crate) fn note_attempt(&self, run: &str, task: &str) {
        if let Ok(mut known) = self.attempted.lock()
            && let Some(a) = known.as_mut().filter(|a| a.run == run)
        {
            a.tasks.insert(task.to_owned());
        }
    }

    /// The latest run, if it did not finish: its process died (`running`; the caller holds
    /// the state directory's lock, so no build is running it) or it stopped early
    /// (`stopped`: the budget cap). That run is resumed.
    pub fn unfinished_run(&self) -> Result<Option<String>, JournalError> {
        let latest: Option<(String, String)> = self.with(|c| {
            c.query_opt(
                "SELECT run, status FROM runs ORDER BY started_unix DESC, run DESC LIMIT 1",
                &[],
            )?
            .map(|r| Ok((r.text(0)?, r.text(1)?)))
            .transpose()
        })?;
        Ok(latest
            .filter(|(_, status)| status == "running" || status == "stopped")
            .map(|(run, _)| run))
    }

    /// Marks a resumed run as running again.
    pub fn reopen_run(&self, run: &str) -> Result<(), JournalError> {
        self.with(|c| {
            c.execute(
                "UPDATE runs SET status = 'running', finished_unix = NULL WHERE run = ?1",
                args![run],
            )
            .map(drop)
        })
    }

    /// A task's last attempt in `run`, as committed: asked when the task starts, before this
    /// process wrote anything for it (a parked task's attempt is committed when it parks).
    /// A task with no attempt costs no query: the run's attempted tasks are read once.
    pub fn last_attempt(&self, run: &str, task: &str) -> Result<Option<LastAttempt>, JournalError> {
        if !self.may_have_attempt(run, task)? {
            return Ok(None);
        }
        self.read(|c| {
            c.query_opt(
                "SELECT attempt, role, base, state, reason FROM attempts WHERE run = ?1 AND task = ?2
                 ORDER BY attempt DESC LIMIT 1",
                args![run, task],
            )?
            .map(|r| {
                Ok(LastAttempt {
                    attempt: r.u32(0)?,
                    role: r.text(1)?,
                    base: r.text(2)?,
                    state: r.text(3)?,
                    reason: r.opt_text(4)?,
                })
            })
            .transpose()
        })
    }

    /// The model responses an attempt journaled, in order.
    pub fn model_responses<T: serde::de::DeserializeOwned>(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
    ) -> Result<Vec<T>, JournalError> {
        let bodies: Vec<String> = self.with(|c| {
            c.query(
                "SELECT body FROM steps WHERE run = ?1 AND task = ?2 AND attempt = ?3
                 AND kind = 'model' ORDER BY step",
                args![run, task, attempt],
            )?
            .iter()
            .map(|r| r.text(0))
            .collect()
        })?;
        bodies
            .iter()
            .map(|b| {
                serde_json::from_str(b)
                    .map_err(|e| JournalError::Damaged(format!("a journaled response: {e}")))
            })
            .collect()
    }

    /// The re-plans (step-0 `replan` bodies, in attempt order) of `task` in `run`, or of
    /// every task in the run it last landed in (`run` = `None`): what a re-planned task's
    /// checks and scope became, for the scheduler and the next build's re-checks.
    pub fn replans(
        &self,
        run: Option<&str>,
        task: Option<&str>,
    ) -> Result<std::collections::HashMap<String, Vec<serde_json::Value>>, JournalError> {
        let rows: Vec<(String, String)> = self.with(|c| {
            let rows = match (run, task) {
                (Some(run), Some(task)) => c.query(
                    "SELECT task, body FROM steps WHERE run = ?1 AND task = ?2 AND step = 0
                     AND kind = 'replan' ORDER BY attempt",
                    args![run, task],
                )?,
                _ => c.query(
                    "SELECT s.task, s.body FROM steps s JOIN landed l
                       ON l.task = s.task AND l.run = s.run
                     WHERE s.step = 0 AND s.kind = 'replan' ORDER BY s.task, s.attempt",
                    &[],
                )?,
            };
            rows.iter().map(|r| Ok((r.text(0)?, r.text(1)?))).collect()
        })?;
        let mut out: std::collections::HashMap<String, Vec<serde_json::Value>> =
            std::collections::HashMap::new();
        for (task, body) in rows {
            if let Ok(v) = serde_json::from_str(&body) {
                out.entry(task).or_default().push(v);
            }
        }
        Ok(out)
    }

    /// What the ladder decided before `attempt` started (its step 0, a `replan` or a
    /// `carry`): the re-plan it was given and the work it starts from, as journaled.
    pub fn prelude(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
    ) -> Result<Option<(StepKind, serde_json::Value)>, JournalError> {
        let row: Option<(String, String)> = self.with(|c| {
            c.query_opt(
                "SELECT kind, body FROM steps WHERE run = ?1 AND task = ?2 AND attempt = ?3
                 AND step = 0 AND kind IN ('replan', 'carry')",
                args![run, task, attempt],
            )?
            .map(|r| Ok((r.text(0)?, r.text(1)?)))
            .transpose()
        })?;
        Ok(row.and_then(|(kind, body)| {
            let kind = if kind == "carry" {
                StepKind::Carry
            } else {
                StepKind::Replan
            };
            serde_json::from_str(&body).ok().map(|v| (kind, v))
        }))
    }
}
