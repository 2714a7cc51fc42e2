//! Reading the journal for `specc status`, read-only and safe while a build writes it
//! (SQLite's WAL lets readers in): the latest run, its tasks by state, the attempts still
//! running with their steps, what landed, and what failed and why.
//! design: runtime.journal

use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use serde::Serialize;

use crate::journal::JournalError;

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
    let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    c.busy_timeout(std::time::Duration::from_secs(5))?;
    let has_runs: bool = c.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
        [],
        |r| r.get::<_, i64>(0),
    )? > 0;
    if !has_runs {
        return Ok(None);
    }
    let run = c
        .query_row(
            "SELECT run, spec, started_unix, finished_unix, status FROM runs
             ORDER BY started_unix DESC, run DESC LIMIT 1",
            [],
            |r| {
                Ok(RunRow {
                    run: r.get(0)?,
                    spec: r.get(1)?,
                    started_unix: r.get(2)?,
                    finished_unix: r.get(3)?,
                    status: r.get(4)?,
                })
            },
        )
        .optional()?;
    let Some(run) = run else {
        return Ok(None);
    };
    let mut q = c.prepare("SELECT state, COUNT(*) FROM tasks WHERE run = ?1 GROUP BY state")?;
    let mut counts: Vec<(String, u64)> = q
        .query_map(params![run.run], |r| {
            Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))
        })?
        .collect::<Result<_, _>>()?;
    let order = TASK_STATES;
    counts.sort_by_key(|(s, _)| order.iter().position(|o| o == s).unwrap_or(order.len()));
    let mut q = c.prepare(
        "SELECT a.task, a.attempt, a.role, a.started_unix,
                    (SELECT COUNT(*) FROM steps s WHERE s.run = a.run AND s.task = a.task
                       AND s.attempt = a.attempt)
             FROM attempts a WHERE a.run = ?1 AND a.state = 'running' ORDER BY a.started_unix",
    )?;
    let running = q
        .query_map(params![run.run], |r| {
            Ok(RunningAttempt {
                task: r.get(0)?,
                attempt: r.get(1)?,
                role: r.get(2)?,
                started_unix: r.get(3)?,
                steps: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let lines = |sql: &str| -> Result<Vec<TaskLine>, JournalError> {
        let mut q = c.prepare(sql)?;
        q.query_map(params![run.run], |r| {
            Ok(TaskLine {
                task: r.get(0)?,
                state: r.get(1)?,
                detail: r.get(2)?,
            })
        })?
        .collect::<Result<_, _>>()
        .map_err(JournalError::from)
    };
    let merging = lines(
        "SELECT task, state, reason FROM tasks WHERE run = ?1 AND state = 'running'
         AND reason LIKE 'merging %' ORDER BY task",
    )?;
    let landed = lines(
        "SELECT task, state, commit_id FROM tasks WHERE run = ?1 AND state = 'landed'
         AND commit_id IS NOT NULL ORDER BY rowid DESC LIMIT 10",
    )?;
    let failed = lines(
        "SELECT task, state, reason FROM tasks WHERE run = ?1
         AND state IN ('failed', 'skipped', 'stopped') ORDER BY task",
    )?;
    let submissions = c.query_row(
        "SELECT COUNT(json_extract(body, '$.outcome.committed')),
                COUNT(json_extract(body, '$.outcome.conflict')),
                COUNT(json_extract(body, '$.outcome.refused'))
         FROM steps WHERE run = ?1 AND kind IN ('submit', 'merge') AND json_valid(body)",
        params![run.run],
        |r| {
            Ok(Submissions {
                committed: r.get::<_, i64>(0)? as u64,
                conflicts: r.get::<_, i64>(1)? as u64,
                refused: r.get::<_, i64>(2)? as u64,
            })
        },
    )?;
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
