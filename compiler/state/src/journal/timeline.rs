//! A run's attempts in time, for the swarm's timeline in `specc report`: when each started
//! and ended (ms since the epoch), its role and how it ended, and when each task landed.
//! A database from before migration 5 has no milliseconds: its attempts have none.
//! design: eval.report

use crate::schema::{has_column, has_table};
use crate::{Sql, StateError, args};

/// One attempt in time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptSpan {
    pub task: String,
    pub attempt: u32,
    pub role: String,
    /// `running`, `landed`, `failed`, … as the journal says.
    pub state: String,
    pub started_ms: Option<i64>,
    /// `None` while it runs (or if the build died during it).
    pub finished_ms: Option<i64>,
    /// Its submission conflicted and went to the merge agent (at its end).
    pub merged: bool,
}

/// A run in time: its attempts in the order they started, and when each task landed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub attempts: Vec<AttemptSpan>,
    pub landed: Vec<(String, i64)>,
    /// The tasks the run ended as failed.
    pub failed: Vec<String>,
}

/// `run`'s timeline.
pub fn timeline(c: &mut dyn Sql, run: &str) -> Result<Timeline, StateError> {
    if !has_table(c, "attempts")? || !has_column(c, "attempts", "started_ms")? {
        return Ok(Timeline::default());
    }
    let attempts = c
        .query(
            "SELECT a.task, a.attempt, a.role, a.state, a.started_ms, a.finished_ms,
                    (SELECT COUNT(*) FROM steps s WHERE s.run = a.run AND s.task = a.task
                       AND s.attempt = a.attempt AND s.kind = 'merge')
             FROM attempts a WHERE a.run = ?1
             ORDER BY COALESCE(a.started_ms, 0), a.task, a.attempt",
            args![run],
        )?
        .iter()
        .map(|r| {
            Ok(AttemptSpan {
                task: r.text(0)?,
                attempt: r.u32(1)?,
                role: r.text(2)?,
                state: r.text(3)?,
                started_ms: r.opt_int(4)?,
                finished_ms: r.opt_int(5)?,
                merged: r.int(6)? > 0,
            })
        })
        .collect::<Result<Vec<_>, StateError>>()?;
    let landed = c
        .query(
            "SELECT task, landed_ms FROM tasks WHERE run = ?1 AND landed_ms IS NOT NULL
             ORDER BY landed_ms",
            args![run],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.int(1)?)))
        .collect::<Result<Vec<_>, StateError>>()?;
    let failed = c
        .query(
            "SELECT task FROM tasks WHERE run = ?1 AND state = 'failed' ORDER BY task",
            args![run],
        )?
        .iter()
        .map(|r| r.text(0))
        .collect::<Result<Vec<_>, StateError>>()?;
    Ok(Timeline {
        attempts,
        landed,
        failed,
    })
}
