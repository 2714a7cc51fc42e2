//! Reading the journal for `specc status`, read-only and safe while a build writes it
//! (SQLite's WAL lets readers in): the latest run, its tasks by state, the attempts still
//! running with their steps, what landed, and what failed and why.
//! design: runtime.journal

use std::path::Path;

use super::handle::JournalError;
use crate::args;
use crate::dialect::Dialect;
use crate::error::StateError;
use crate::schema::{has_column, has_table};
use crate::sql::Sql;
use serde::Serialize;

/// Every task state, in the order status shows them.
pub const TASK_STATES: [&str; 7] = [
    "running",
    "pending",
    "landed",
    "up_to_date",
    "failed",
    "skipped",
    "stopped",
];

/// A run as recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunRow {
    pub run: String,
    pub spec: String,
    pub started_unix: i64,
    pub finished_unix: Option<i64>,
    pub status: String,
}

/// An attempt still running.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunningAttempt {
    pub task: String,
    pub attempt: u32,
    pub role: String,
    pub started_unix: i64,
    pub steps: u32,
}

/// A task and a word about it (its state's reason, or the commit it landed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskLine {
    pub task: String,
    pub state: String,
    pub detail: Option<String>,
}

/// What `specc status` shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Status {
    pub run: RunRow,
    /// `(state, count)`, in a fixed order of states.
    pub counts: Vec<(String, u64)>,
    pub running: Vec<RunningAttempt>,
    /// The merge queue: tasks whose conflicted submission waits for (or is with) the merge
    /// agent, and the path.
    pub merging: Vec<TaskLine>,
    pub landed: Vec<TaskLine>,
    pub failed: Vec<TaskLine>,
    /// The run's submissions to the VCS by outcome, its merge agent's included.
    pub submissions: Submissions,
}

/// Submissions by outcome, counted from the journal's `submit` and `merge` steps.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Submissions {
    pub committed: u64,
    pub conflicts: u64,
    pub refused: u64,
}

/// The status of the latest run in the state database at `path`, or `None` if it holds no
/// run. Opens it read-only.
pub fn read(path: &Path) -> Result<Option<Status>, JournalError> {
    let mut c = crate::sqlite::open_read_only(path)?;
    Ok(of(&mut c)?)
}

/// Each task's fingerprint when it last landed, in any run, read-only (empty before the
/// first build): what `specc build --dry-run` tells up-to-date tasks by.
pub fn read_landed(path: &Path) -> Result<std::collections::HashMap<String, String>, JournalError> {
    let mut c = crate::sqlite::open_read_only(path)?;
    if !has_table(&mut c, "landed")? {
        return Ok(std::collections::HashMap::new());
    }
    let rows = c.query("SELECT task, fingerprint FROM landed", &[])?;
    Ok(rows
        .iter()
        .map(|r| Ok((r.text(0)?, r.text(1)?)))
        .collect::<Result<_, StateError>>()?)
}

/// The status of the latest run in the state database `c` (either backend), or `None` if
/// it holds no run. Reads only.
pub fn of(c: &mut dyn Sql) -> Result<Option<Status>, StateError> {
    if !has_table(c, "runs")? {
        return Ok(None);
    }
    let Some(run) = latest_run(c)? else {
        return Ok(None);
    };
    let id = run.run.as_str();
    // A SQLite database from before migration 3, read without migrating it, has none.
    let landed_ms = has_column(c, "tasks", "landed_ms")?;
    let counts = counts(c, id)?;
    let running = running(c, id)?;
    let merging = task_lines(
        c,
        id,
        "SELECT task, state, reason FROM tasks WHERE run = ?1 AND state = 'running'
         AND reason LIKE 'merging %' ORDER BY task",
    )?;
    let landed = task_lines(
        c,
        id,
        if landed_ms {
            "SELECT task, state, commit_id FROM tasks WHERE run = ?1 AND state = 'landed'
             AND commit_id IS NOT NULL ORDER BY landed_ms DESC, task DESC LIMIT 10"
        } else {
            // A SQLite database from before migration 3, read without migrating it.
            "SELECT task, state, commit_id FROM tasks WHERE run = ?1 AND state = 'landed'
             AND commit_id IS NOT NULL ORDER BY rowid DESC LIMIT 10"
        },
    )?;
    let failed = task_lines(
        c,
        id,
        "SELECT task, state, reason FROM tasks WHERE run = ?1
         AND state IN ('failed', 'skipped', 'stopped') ORDER BY task",
    )?;
    let submissions = submissions(c, id)?;
    Ok(Some(Status {
        run,
        counts,
        running,
        merging,
        landed,
        failed,
        submissions,
    }))
}

/// The latest run's row.
fn latest_run(c: &mut dyn Sql) -> Result<Option<RunRow>, StateError> {
    c.query_opt(
        "SELECT run, spec, started_unix, finished_unix, status FROM runs
             ORDER BY started_unix DESC, run DESC LIMIT 1",
        &[],
    )?
    .map(|r| {
        Ok::<_, StateError>(RunRow {
            run: r.text(0)?,
            spec: r.text(1)?,
            started_unix: r.int(2)?,
            finished_unix: r.opt_int(3)?,
            status: r.text(4)?,
        })
    })
    .transpose()
}

/// How many of the run's tasks are in each state, in the states' order.
fn counts(c: &mut dyn Sql, id: &str) -> Result<Vec<(String, u64)>, StateError> {
    let mut counts: Vec<(String, u64)> = c
        .query(
            "SELECT state, COUNT(*) FROM tasks WHERE run = ?1 GROUP BY state",
            args![id],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.u64(1)?)))
        .collect::<Result<_, StateError>>()?;
    let order = TASK_STATES;
    counts.sort_by_key(|(s, _)| order.iter().position(|o| o == s).unwrap_or(order.len()));
    Ok(counts)
}

/// The run's running attempts, oldest first.
fn running(c: &mut dyn Sql, id: &str) -> Result<Vec<RunningAttempt>, StateError> {
    c.query(
        "SELECT a.task, a.attempt, a.role, a.started_unix,
                    (SELECT COUNT(*) FROM steps s WHERE s.run = a.run AND s.task = a.task
                       AND s.attempt = a.attempt)
             FROM attempts a WHERE a.run = ?1 AND a.state = 'running' ORDER BY a.started_unix",
        args![id],
    )?
    .iter()
    .map(|r| {
        Ok(RunningAttempt {
            task: r.text(0)?,
            attempt: r.u32(1)?,
            role: r.text(2)?,
            started_unix: r.int(3)?,
            steps: r.u32(4)?,
        })
    })
    .collect::<Result<_, StateError>>()
}

/// The task lines a query of `(task, state, detail)` answers.
fn task_lines(c: &mut dyn Sql, id: &str, sql: &str) -> Result<Vec<TaskLine>, StateError> {
    c.query(sql, args![id])?
        .iter()
        .map(|r| {
            Ok(TaskLine {
                task: r.text(0)?,
                state: r.text(1)?,
                detail: r.opt_text(2)?,
            })
        })
        .collect()
}

/// How the run's submissions ended, counted from the journal.
fn submissions(c: &mut dyn Sql, id: &str) -> Result<Submissions, StateError> {
    let counted = match c.dialect() {
        Dialect::Sqlite => {
            "SELECT COUNT(json_extract(body, '$.outcome.committed')),
                    COUNT(json_extract(body, '$.outcome.conflict')),
                    COUNT(json_extract(body, '$.outcome.refused'))
             FROM steps WHERE run = ?1 AND kind IN ('submit', 'merge') AND json_valid(body)"
        }
        // Every step's body is written as JSON (serde_json), so the cast cannot fail.
        Dialect::Postgres => {
            "SELECT COUNT((body::jsonb -> 'outcome') ->> 'committed'),
                    COUNT((body::jsonb -> 'outcome') ->> 'conflict'),
                    COUNT((body::jsonb -> 'outcome') ->> 'refused')
             FROM steps WHERE run = ?1 AND kind IN ('submit', 'merge')"
        }
    };
    let r = c.query_one(counted, args![id])?;
    Ok(Submissions {
        committed: r.u64(0)?,
        conflicts: r.u64(1)?,
        refused: r.u64(2)?,
    })
}
