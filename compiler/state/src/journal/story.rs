//! Reading one task's whole story for `specc show`, read-only and safe while a build writes
//! the journal: the task in a run (the latest run that has it, or the one named), and every
//! attempt with what it was told and each of its steps in order.
//! design: driver.show

use std::path::Path;

use serde::Serialize;

use super::handle::JournalError;
use crate::args;
use crate::error::StateError;
use crate::schema::has_table;
use crate::sql::Sql;

/// One task's story in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Story {
    pub run: String,
    pub task: String,
    pub title: String,
    pub state: String,
    pub reason: Option<String>,
    pub commit: Option<String>,
    pub attempts: Vec<AttemptStory>,
}

/// One attempt, as journaled.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AttemptStory {
    pub attempt: u32,
    pub role: String,
    pub base: String,
    pub state: String,
    pub reason: Option<String>,
    pub started_unix: i64,
    pub finished_unix: Option<i64>,
    /// Its opening messages as sent; `None` in a journal from before they were kept.
    pub context: Option<serde_json::Value>,
    pub steps: Vec<StoryStep>,
}

/// One step: its number, what it was, and its body (JSON as written).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoryStep {
    pub step: u32,
    pub kind: String,
    pub body: serde_json::Value,
}

/// The story of `task` in the state database at `path`, opened read-only.
pub fn read(path: &Path, task: &str, run: Option<&str>) -> Result<Option<Story>, JournalError> {
    let mut c = crate::sqlite::open_read_only(path)?;
    Ok(of(&mut c, task, run)?)
}

/// The story of `task` in run `run`, or in the latest run that has it; `None` if no run
/// has it. Reads only.
pub fn of(c: &mut dyn Sql, task: &str, run: Option<&str>) -> Result<Option<Story>, StateError> {
    if !has_table(c, "tasks")? {
        return Ok(None);
    }
    let row = match run {
        Some(run) => c.query_opt(
            "SELECT t.run, t.title, t.state, t.reason, t.commit_id FROM tasks t
             WHERE t.task = ?1 AND t.run = ?2",
            args![task, run],
        )?,
        None => c.query_opt(
            "SELECT t.run, t.title, t.state, t.reason, t.commit_id FROM tasks t
             JOIN runs r ON r.run = t.run WHERE t.task = ?1
             ORDER BY r.started_unix DESC, r.run DESC LIMIT 1",
            args![task],
        )?,
    };
    let Some(row) = row else {
        return Ok(None);
    };
    let run = row.text(0)?;
    let mut story = Story {
        task: task.to_owned(),
        title: row.text(1)?,
        state: row.text(2)?,
        reason: row.opt_text(3)?,
        commit: row.opt_text(4)?,
        attempts: Vec::new(),
        run,
    };
    let contexts = has_table(c, "contexts")?;
    let attempts = c.query(
        "SELECT attempt, role, base, state, reason, started_unix, finished_unix
         FROM attempts WHERE run = ?1 AND task = ?2 ORDER BY attempt",
        args![&story.run, task],
    )?;
    for a in &attempts {
        let attempt = a.u32(0)?;
        let context = if contexts {
            c.query_opt(
                "SELECT messages FROM contexts WHERE run = ?1 AND task = ?2 AND attempt = ?3",
                args![&story.run, task, attempt],
            )?
            .map(|r| r.text(0))
            .transpose()?
            .and_then(|t| serde_json::from_str(&t).ok())
        } else {
            None
        };
        let steps = c
            .query(
                "SELECT step, kind, body FROM steps WHERE run = ?1 AND task = ?2 AND attempt = ?3
                 ORDER BY step",
                args![&story.run, task, attempt],
            )?
            .iter()
            .map(|s| {
                let body = s.text(2)?;
                Ok(StoryStep {
                    step: s.u32(0)?,
                    kind: s.text(1)?,
                    body: serde_json::from_str(&body).unwrap_or(serde_json::Value::String(body)),
                })
            })
            .collect::<Result<_, StateError>>()?;
        story.attempts.push(AttemptStory {
            attempt,
            role: a.text(1)?,
            base: a.text(2)?,
            state: a.text(3)?,
            reason: a.opt_text(4)?,
            started_unix: a.int(5)?,
            finished_unix: a.opt_int(6)?,
            context,
            steps,
        });
    }
    Ok(Some(story))
}
