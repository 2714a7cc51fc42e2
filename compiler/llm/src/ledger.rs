//! The cost ledger in `.specc/state.db`: one row per attempt, and budget reservations that
//! hold across concurrent calls and across restarts.
//! design: llm.ledger

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use specc_state::schema::{Migration, Tables, migrate};
use specc_state::{Sql, StateDb, StateError, args};

use crate::budget::{Leases, Reservation, now};
use crate::error::LlmError;
use crate::types::Usage;

/// Prices in dollars per million tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Price {
    pub input: f64,
    pub cached_input: f64,
    pub output: f64,
}

impl Price {
    pub fn dollars(&self, usage: Usage) -> f64 {
        (usage.input as f64 * self.input
            + usage.cached_input as f64 * self.cached_input
            + usage.output as f64 * self.output)
            / 1e6
    }
}

/// One attempt, as recorded.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CallRow {
    pub run: String,
    pub task: String,
    pub role: String,
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub dollars: f64,
    pub latency: Duration,
    pub attempt: u32,
    pub outcome: String,
}

/// More to write in the transaction that records a call: see [`Ledger::record_with`].
pub(crate) type Also = specc_state::Write;

pub struct Ledger {
    db: Arc<StateDb>,
    leases: Leases,
}

fn db_error(e: impl Into<StateError>) -> LlmError {
    LlmError::Ledger(e.into())
}

/// The ledger's tables (design: state.owners): a row per attempt of a call, the budget
/// leases' reservations, and each run's spent total.
pub const LEDGER: Tables = Tables {
    owner: "ledger",
    migrations: &[Migration {
        version: 1,
        legacy: Some(1),
        sql: "
CREATE TABLE IF NOT EXISTS llm_calls (
    id {id}, at_unix {int} NOT NULL,
    run {text} NOT NULL, task {text} NOT NULL, role {text} NOT NULL,
    provider {text} NOT NULL, model {text} NOT NULL,
    input_tokens {int} NOT NULL, cached_input_tokens {int} NOT NULL,
    output_tokens {int} NOT NULL, dollars {real} NOT NULL,
    latency_ms {int} NOT NULL, attempt {int} NOT NULL, outcome {text} NOT NULL);
CREATE INDEX IF NOT EXISTS llm_calls_run ON llm_calls(run);
CREATE TABLE IF NOT EXISTS llm_reservations (
    id {id}, run {text} NOT NULL, dollars {real} NOT NULL, created_unix {int} NOT NULL);
CREATE TABLE IF NOT EXISTS llm_run_spent (run {text} PRIMARY KEY, dollars {real} NOT NULL)",
    }],
};

impl Ledger {
    fn on(db: Arc<StateDb>) -> Ledger {
        Ledger {
            leases: Leases::new(db.clone()),
            db,
        }
    }

    /// Opens (creating) the state database at `path` ([`specc_state::sqlite::open`]), its
    /// ledger tables migrated.
    pub fn open(path: &Path) -> Result<Ledger, LlmError> {
        let db = StateDb::open(path)
            .map_err(|e| LlmError::Ledger(StateError::Open(format!("{}: {e}", path.display()))))?;
        let db = Arc::new(db);
        db.now(|c| {
            migrate(c, &LEDGER)?;
            // The run's kept total, for SQLite databases whose rows came before it was kept.
            c.batch(
                "BEGIN IMMEDIATE;
                 INSERT OR REPLACE INTO llm_run_spent (run, dollars)
                     SELECT run, SUM(dollars) FROM llm_calls GROUP BY run;
                 COMMIT;",
            )
        })
        .map_err(db_error)?;
        Ok(Ledger::on(db))
    }

    /// The ledger of a state database another writer shares, its tables migrated (the
    /// writer of a build's PostgreSQL state: see [`StateDb::connect_postgres`]).
    pub fn writing_to(db: Arc<StateDb>) -> Result<Ledger, LlmError> {
        db.now(|c| migrate(c, &LEDGER)).map_err(db_error)?;
        Ok(Ledger::on(db))
    }

    /// The ledger of a state database opened to read it: nothing is made or migrated.
    pub fn on_state(db: Arc<StateDb>) -> Ledger {
        Ledger::on(db)
    }

    /// The state database the ledger writes through: the build journal shares it, so one
    /// commit takes both.
    pub fn state_db(&self) -> Arc<StateDb> {
        self.db.clone()
    }

    /// Returns once every row recorded so far is committed ([`StateDb::durable`]).
    pub async fn durable(&self) -> Result<(), LlmError> {
        self.db.durable().await.map_err(LlmError::Ledger)
    }

    /// Opens an existing state database to read it, changing nothing: no tables are made and
    /// no journal mode is set. A file that is not a specc state database is an error.
    pub fn open_existing(path: &Path) -> Result<Ledger, LlmError> {
        let conn = specc_state::sqlite::open_existing(path, "llm_calls").map_err(db_error)?;
        Ok(Ledger::on(Arc::new(StateDb::on(conn))))
    }

    pub fn record(&self, row: &CallRow) -> Result<(), LlmError> {
        self.record_with(row, None, None)
    }

    /// Queues `row` and, in the same transaction, whatever `also` writes to the state
    /// database (the runtime journals the response there) and the release of reservation
    /// `release` (the call is settled): all of it is committed, or none. Durable after
    /// [`Ledger::durable`].
    pub fn record_with(
        &self,
        row: &CallRow,
        also: Option<Also>,
        release: Option<Reservation>,
    ) -> Result<(), LlmError> {
        let dollars = row.dollars;
        let row = row.clone();
        let write: specc_state::Write = Box::new(move |c: &mut dyn Sql| {
            c.execute(
                "INSERT INTO llm_calls (at_unix, run, task, role, provider, model, input_tokens,
                 cached_input_tokens, output_tokens, dollars, latency_ms, attempt, outcome)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                args![
                    now(),
                    &row.run,
                    &row.task,
                    &row.role,
                    &row.provider,
                    &row.model,
                    row.usage.input,
                    row.usage.cached_input,
                    row.usage.output,
                    row.dollars,
                    row.latency.as_millis() as u64,
                    row.attempt,
                    &row.outcome,
                ],
            )?;
            // The run's total, kept as rows are added, so the budget check reads one row.
            c.execute(
                "INSERT INTO llm_run_spent (run, dollars) VALUES (?1, ?2)
                 ON CONFLICT (run) DO UPDATE SET dollars = llm_run_spent.dollars + ?2",
                args![&row.run, row.dollars],
            )?;
            if let Some(also) = also {
                also(c)?;
            }
            Ok(())
        });
        match release {
            Some(r) => self.leases.settle(r, dollars, Some(write)),
            None => self.db.defer(write).map_err(LlmError::Ledger),
        }
    }

    /// Reserves `dollars` for a call of `run`, unless spent plus reserved plus this would pass
    /// `cap`. Atomic across processes: the reservation is taken from this process's lease of
    /// the run's budget, which grows in an immediate transaction when it must (design:
    /// llm.budget-lease).
    pub fn reserve(
        &self,
        run: &str,
        dollars: f64,
        cap: Option<f64>,
    ) -> Result<Reservation, LlmError> {
        self.leases.reserve(run, dollars, cap)
    }

    /// Gives a reservation back unspent (its call ended without a recorded answer); one
    /// already settled changes nothing.
    pub fn release(&self, reservation: Reservation) -> Result<(), LlmError> {
        self.leases.settle(reservation, 0.0, None)
    }

    /// Dollars spent by `run`, as committed (a figure for progress: rows still queued are
    /// not counted; the budget check counts them, see [`Ledger::reserve`]).
    pub fn spent(&self, run: &str) -> Result<f64, LlmError> {
        self.db
            .read(|c| {
                // The kept total (one row); a database from before it was kept is summed.
                match c.query_opt(
                    "SELECT dollars FROM llm_run_spent WHERE run = ?1",
                    args![run],
                ) {
                    Ok(Some(row)) => row.real(0),
                    Ok(None) => Ok(0.0),
                    Err(_) => c
                        .query_one(
                            "SELECT COALESCE(SUM(dollars), 0) FROM llm_calls WHERE run = ?1",
                            args![run],
                        )?
                        .real(0),
                }
            })
            .map_err(LlmError::Ledger)
    }

    /// Every recorded attempt, oldest first.
    pub fn rows(&self) -> Result<Vec<CallRow>, LlmError> {
        self.db
            .now(|c| {
                c.query(
                    "SELECT run, task, role, provider, model, input_tokens, cached_input_tokens,
                     output_tokens, dollars, latency_ms, attempt, outcome FROM llm_calls ORDER BY id",
                    &[],
                )?
                .iter()
                .map(|r| {
                    Ok(CallRow {
                        run: r.text(0)?,
                        task: r.text(1)?,
                        role: r.text(2)?,
                        provider: r.text(3)?,
                        model: r.text(4)?,
                        usage: Usage {
                            input: r.u64(5)?,
                            cached_input: r.u64(6)?,
                            output: r.u64(7)?,
                        },
                        dollars: r.real(8)?,
                        latency: Duration::from_millis(r.u64(9)?),
                        attempt: r.u32(10)?,
                        outcome: r.text(11)?,
                    })
                })
                .collect()
            })
            .map_err(LlmError::Ledger)
    }

    /// Calls this ledger reserved for and has not settled yet.
    pub fn reservations(&self) -> Result<usize, LlmError> {
        self.leases.unsettled()
    }

    /// Dollars every reservation of `run` holds in the database (every process's leases,
    /// their free parts included), as committed.
    pub fn reserved(&self, run: &str) -> Result<f64, LlmError> {
        self.db
            .now(|c| {
                c.query_one(
                    "SELECT COALESCE(SUM(dollars), 0) FROM llm_reservations WHERE run = ?1",
                    args![run],
                )?
                .real(0)
            })
            .map_err(LlmError::Ledger)
    }
}
