//! Task leases and fencing on either state backend (design: state.leases): workers claim
//! the ready task of highest priority (or one whose lease expired), hold it by heartbeat,
//! and every write they make for the attempt carries its attempt number, the fencing
//! token, checked in the write itself: a worker whose lease expired (paused, partitioned,
//! killed) can no longer journal or finish the attempt once another has claimed it, nor
//! after its lease ran out. On PostgreSQL a claim takes the row with `FOR UPDATE SKIP
//! LOCKED`, so workers claiming together never wait on one another, and a fenced write
//! locks the lease row (`FOR SHARE`) so that it cannot slip in beside a concurrent claim;
//! times there are the database's clock, so workers' clocks need not agree. On SQLite one
//! immediate transaction serialises them, and the time is read inside it. Ties in
//! priority go by the task id's bytes on both backends (`COLLATE "C"` on PostgreSQL).
//! `specc serve` offers its ready tasks here and hands them to `specc worker`s
//! (specc-runtime's dispatch); one `specc build` needs no leases.
//! design: state.leases

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::args;
use crate::error::StateError;
use crate::journal::JOURNAL;
use crate::postgres::PgState;
use crate::schema::{Migration, Tables, has_table, migrate};
use crate::sql::Sql;
use crate::writer::StateDb;

/// Where the leases live.
#[derive(Clone)]
pub struct LeaseStore {
    backend: Backend,
}

#[derive(Clone)]
enum Backend {
    Sqlite(Arc<StateDb>),
    Postgres(PgState),
}

/// The task leases' tables (design: state.owners).
pub const LEASES: Tables = Tables {
    owner: "leases",
    migrations: &[Migration {
        version: 1,
        legacy: Some(2),
        sql: LEASES_V1,
    }],
};

/// A row per task of a run that workers claim: its state (`ready`, `leased`, `done`), its
/// priority (the longest dependency chain below it), the last attempt claimed (the fencing
/// token), who holds it and until when (ms since the epoch, by the database's clock on
/// PostgreSQL).
const LEASES_V1: &str = "
CREATE TABLE IF NOT EXISTS task_leases (
    run {text} NOT NULL, task {text} NOT NULL, priority {int} NOT NULL,
    state {text} NOT NULL, attempt {int} NOT NULL, holder {text}, expires_ms {int},
    PRIMARY KEY (run, task));
CREATE INDEX IF NOT EXISTS task_leases_ready ON task_leases(run, state, priority)";

impl LeaseStore {
    /// The leases in the SQLite state database `db`, their tables (and the journal's, which
    /// a worker's steps are written to) migrated.
    pub fn sqlite(db: Arc<StateDb>) -> Result<LeaseStore, StateError> {
        db.now(|c| {
            migrate(c, &LEASES)?;
            migrate(c, &JOURNAL)
        })?;
        Ok(LeaseStore {
            backend: Backend::Sqlite(db),
        })
    }

    /// The leases of a PostgreSQL state database, to read them (`specc status`): nothing is
    /// made or migrated, and a database without their table has none.
    pub fn reader(pg: PgState) -> LeaseStore {
        LeaseStore {
            backend: Backend::Postgres(pg),
        }
    }

    /// The leases in the PostgreSQL state database of `pg`, their tables (and the
    /// journal's) migrated.
    pub async fn postgres(pg: PgState) -> Result<LeaseStore, StateError> {
        pg.migrate(&[&LEASES, &JOURNAL]).await?;
        Ok(LeaseStore {
            backend: Backend::Postgres(pg),
        })
    }
}

/// A claimed task: the attempt number is the fencing token of every write for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub task: String,
    pub attempt: i64,
}

/// Why a write for an attempt was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum LeaseError {
    /// The attempt's lease expired or another worker claimed the task since: the worker
    /// must abandon the attempt.
    Fenced,
    State(StateError),
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeaseError::Fenced => write!(f, "the attempt's lease is lost (expired or taken over)"),
            LeaseError::State(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LeaseError {}

impl From<StateError> for LeaseError {
    fn from(e: StateError) -> LeaseError {
        LeaseError::State(e)
    }
}

impl From<tokio_postgres::Error> for LeaseError {
    fn from(e: tokio_postgres::Error) -> LeaseError {
        LeaseError::State(e.into())
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

fn local_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

/// PostgreSQL's clock, in ms since the epoch.
const PG_NOW_MS: &str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";

/// Runs one statement on a connection from `pg`'s pool: how many rows it changed.
async fn pg_execute(
    pg: &PgState,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<u64, StateError> {
    Ok(pg.client().await?.execute(sql, params).await?)
}

/// A step a worker journaled for a claim, as serve's journal keeps it: under the claim's
/// run (`RUN@N`, the worker's own), its attempt there and its number.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepRecord {
    pub run: String,
    pub attempt: u32,
    pub step: u32,
    pub kind: String,
    pub body: String,
}

/// A step's write, rewritten if it comes again (a worker sends what it has not seen
/// acknowledged).
const STEP_UPSERT: &str = "INSERT INTO steps (run, task, attempt, step, kind, body)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (run, task, attempt, step) DO UPDATE SET kind = ?5, body = ?6";

/// Whether a write changed a row: none means the fencing token no longer holds.
fn fenced(rows: u64) -> Result<(), LeaseError> {
    if rows == 0 {
        Err(LeaseError::Fenced)
    } else {
        Ok(())
    }
}

impl LeaseStore {
    /// Offers `tasks` (id, priority) of `run` to workers; a task already offered keeps its
    /// state and attempt, unless it is done: then it is offered again (a blocked or parked
    /// task runs again), its attempt count kept so that old tokens stay fenced.
    pub async fn offer(&self, run: &str, tasks: &[(String, i64)]) -> Result<(), StateError> {
        match &self.backend {
            Backend::Sqlite(db) => db.now_with_queue(|tx| {
                for (task, priority) in tasks {
                    tx.execute(
                        "INSERT INTO task_leases (run, task, priority, state, attempt)
                         VALUES (?1, ?2, ?3, 'ready', 0) ON CONFLICT (run, task) DO UPDATE
                         SET state = 'ready', priority = excluded.priority
                         WHERE task_leases.state = 'done'",
                        args![run, task, *priority],
                    )?;
                }
                Ok(())
            }),
            Backend::Postgres(pg) => {
                let mut client = pg.client().await?;
                let tx = client.transaction().await?;
                let insert = tx
                    .prepare(
                        "INSERT INTO task_leases (run, task, priority, state, attempt)
                         VALUES ($1, $2, $3, 'ready', 0) ON CONFLICT (run, task) DO UPDATE
                         SET state = 'ready', priority = excluded.priority
                         WHERE task_leases.state = 'done'",
                    )
                    .await?;
                for (task, priority) in tasks {
                    tx.execute(&insert, &[&run, task, priority]).await?;
                }
                Ok(tx.commit().await?)
            }
        }
    }

    /// Claims the ready task of highest priority, or one whose lease expired, for `holder`
    /// for `lease`: its attempt number goes up by one. `None` when nothing is claimable.
    pub async fn claim(
        &self,
        run: &str,
        holder: &str,
        lease: Duration,
    ) -> Result<Option<Claim>, StateError> {
        match &self.backend {
            Backend::Sqlite(db) => {
                db.now_with_queue(|tx| {
                    // Read once the transaction holds the database: a time read before
                    // waiting for it would judge expiry late.
                    let now = local_now_ms();
                    let next = tx.query_opt(
                        "SELECT task FROM task_leases WHERE run = ?1
                         AND (state = 'ready' OR (state = 'leased' AND expires_ms <= ?2))
                         ORDER BY priority DESC, task LIMIT 1",
                        args![run, now],
                    )?;
                    let Some(task) = next.map(|r| r.text(0)).transpose()? else {
                        return Ok(None);
                    };
                    let attempt = tx
                        .query_one(
                            "UPDATE task_leases SET state = 'leased', attempt = attempt + 1,
                             holder = ?3, expires_ms = ?4 WHERE run = ?1 AND task = ?2
                             RETURNING attempt",
                            args![run, &task, holder, now + millis(lease)],
                        )?
                        .int(0)?;
                    Ok(Some(Claim { task, attempt }))
                })
            }
            Backend::Postgres(pg) => {
                let client = pg.client().await?;
                let row = client
                    .query_opt(
                        &format!(
                            "UPDATE task_leases SET state = 'leased', attempt = attempt + 1,
                             holder = $2, expires_ms = {PG_NOW_MS} + $3
                             WHERE (run, task) = (
                                 SELECT run, task FROM task_leases WHERE run = $1
                                 AND (state = 'ready'
                                      OR (state = 'leased' AND expires_ms <= {PG_NOW_MS}))
                                 ORDER BY priority DESC, task COLLATE \"C\" LIMIT 1
                                 FOR UPDATE SKIP LOCKED)
                             RETURNING task, attempt"
                        ),
                        &[&run, &holder, &millis(lease)],
                    )
                    .await?;
                Ok(row
                    .map(|r| -> Result<Claim, tokio_postgres::Error> {
                        Ok(Claim {
                            task: r.try_get(0)?,
                            attempt: r.try_get(1)?,
                        })
                    })
                    .transpose()?)
            }
        }
    }

    /// Extends the lease of `claim` by `lease` from now; refused once it is lost.
    pub async fn heartbeat(
        &self,
        run: &str,
        claim: &Claim,
        lease: Duration,
    ) -> Result<(), LeaseError> {
        let rows = match &self.backend {
            Backend::Sqlite(db) => db.now_with_queue(|tx| {
                let now = local_now_ms();
                tx.execute(
                    "UPDATE task_leases SET expires_ms = ?5 WHERE run = ?1 AND task = ?2
                         AND attempt = ?3 AND state = 'leased' AND expires_ms > ?4",
                    args![run, &claim.task, claim.attempt, now, now + millis(lease)],
                )
            })?,
            Backend::Postgres(pg) => {
                pg_execute(
                    pg,
                    &format!(
                        "UPDATE task_leases SET expires_ms = {PG_NOW_MS} + $4
                         WHERE run = $1 AND task = $2 AND attempt = $3
                         AND state = 'leased' AND expires_ms > {PG_NOW_MS}"
                    ),
                    &[&run, &claim.task, &claim.attempt, &millis(lease)],
                )
                .await?
            }
        };
        fenced(rows)
    }

    /// Ends the attempt: `done` (landed or given up for good) or back to `ready` (released:
    /// the worker is shutting down); refused once its lease is lost.
    pub async fn finish(&self, run: &str, claim: &Claim, done: bool) -> Result<(), LeaseError> {
        let state = if done { "done" } else { "ready" };
        let rows = match &self.backend {
            Backend::Sqlite(db) => db.now_with_queue(|tx| {
                let now = local_now_ms();
                tx.execute(
                    "UPDATE task_leases SET state = ?5, holder = NULL, expires_ms = NULL
                         WHERE run = ?1 AND task = ?2 AND attempt = ?3 AND state = 'leased'
                         AND expires_ms > ?4",
                    args![run, &claim.task, claim.attempt, now, state],
                )
            })?,
            Backend::Postgres(pg) => {
                pg_execute(
                    pg,
                    &format!(
                        "UPDATE task_leases SET state = $4, holder = NULL, expires_ms = NULL
                         WHERE run = $1 AND task = $2 AND attempt = $3
                         AND state = 'leased' AND expires_ms > {PG_NOW_MS}"
                    ),
                    &[&run, &claim.task, &claim.attempt, &state],
                )
                .await?
            }
        };
        fenced(rows)
    }
}

/// One task's lease, as `specc status` shows it.
impl LeaseStore {
    /// Journals a worker's `steps` for `claim`, all of them or none, only while the claim's
    /// lease holds: the check and the writes are one transaction, the lease row locked
    /// `FOR SHARE` on PostgreSQL so no claim slips in between; refused with
    /// [`LeaseError::Fenced`] once it is lost.
    pub async fn journal(
        &self,
        run: &str,
        claim: &Claim,
        steps: &[StepRecord],
    ) -> Result<(), LeaseError> {
        let held = match &self.backend {
            // A transaction of its own: a worker's bad batch fails only itself.
            Backend::Sqlite(db) => db.transaction(|tx| {
                let now = local_now_ms();
                let held = tx
                    .query_opt(
                        "SELECT 1 FROM task_leases WHERE run = ?1 AND task = ?2
                         AND attempt = ?3 AND state = 'leased' AND expires_ms > ?4",
                        args![run, &claim.task, claim.attempt, now],
                    )?
                    .is_some();
                if held {
                    for s in steps {
                        let a = args![&s.run, &claim.task, s.attempt, s.step, &s.kind, &s.body];
                        tx.execute(STEP_UPSERT, a)?;
                    }
                }
                Ok(u64::from(held))
            })?,
            Backend::Postgres(pg) => {
                let mut client = pg.client().await?;
                let tx = client.transaction().await?;
                let held = tx
                    .query_opt(
                        &format!(
                            "SELECT 1 FROM task_leases WHERE run = $1 AND task = $2
                             AND attempt = $3 AND state = 'leased'
                             AND expires_ms > {PG_NOW_MS} FOR SHARE"
                        ),
                        &[&run, &claim.task, &claim.attempt],
                    )
                    .await?
                    .is_some();
                if held {
                    let sql = crate::sql::dollar_placeholders(STEP_UPSERT);
                    let insert = tx.prepare(&sql).await?;
                    for s in steps {
                        let (attempt, step) = (i64::from(s.attempt), i64::from(s.step));
                        tx.execute(
                            &insert,
                            &[&s.run, &claim.task, &attempt, &step, &s.kind, &s.body],
                        )
                        .await?;
                    }
                }
                tx.commit().await?;
                u64::from(held)
            }
        };
        fenced(held)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct LeaseRow {
    pub task: String,
    /// `ready`, `leased` or `done`.
    pub state: String,
    /// Claims so far: the last claim's fencing token.
    pub attempt: i64,
    pub holder: Option<String>,
    /// A leased task's time left on its lease, in milliseconds (by the store's clock);
    /// negative: it expired, and the next claim takes the task over.
    pub expires_in_ms: Option<i64>,
}

impl LeaseStore {
    /// The leases of `run`, by task.
    pub async fn leases(&self, run: &str) -> Result<Vec<LeaseRow>, StateError> {
        match &self.backend {
            Backend::Sqlite(db) => db.read(|c| leases_in(c, run)),
            Backend::Postgres(pg) => {
                let rows = pg
                    .client()
                    .await?
                    .query(
                        &format!(
                            "SELECT task, state, attempt, holder,
                             CASE WHEN state = 'leased' THEN expires_ms - {PG_NOW_MS} END
                             FROM task_leases WHERE run = $1 ORDER BY task COLLATE \"C\""
                        ),
                        &[&run],
                    )
                    .await?;
                let row = |r: &tokio_postgres::Row| -> Result<LeaseRow, tokio_postgres::Error> {
                    Ok(LeaseRow {
                        task: r.try_get(0)?,
                        state: r.try_get(1)?,
                        attempt: r.try_get(2)?,
                        holder: r.try_get(3)?,
                        expires_in_ms: r.try_get(4)?,
                    })
                };
                Ok(rows.iter().map(row).collect::<Result<_, _>>()?)
            }
        }
    }
}

/// [`LeaseStore::leases`] from the SQLite state database at `path`, opened read-only (so
/// `specc status` can read it while a build writes it).
pub fn read(path: &std::path::Path, run: &str) -> Result<Vec<LeaseRow>, StateError> {
    let mut c = crate::sqlite::open_read_only(path)?;
    leases_in(&mut c, run)
}

/// The leases of `run` on a SQLite connection; none in a database made before their table.
fn leases_in(c: &mut dyn Sql, run: &str) -> Result<Vec<LeaseRow>, StateError> {
    if !has_table(c, "task_leases")? {
        return Ok(Vec::new());
    }
    let now = local_now_ms();
    c.query(
        "SELECT task, state, attempt, holder,
         CASE WHEN state = 'leased' THEN expires_ms - ?2 END
         FROM task_leases WHERE run = ?1 ORDER BY task",
        args![run, now],
    )?
    .iter()
    .map(|r| {
        Ok(LeaseRow {
            task: r.text(0)?,
            state: r.text(1)?,
            attempt: r.int(2)?,
            holder: r.opt_text(3)?,
            expires_in_ms: r.opt_int(4)?,
        })
    })
    .collect()
}
