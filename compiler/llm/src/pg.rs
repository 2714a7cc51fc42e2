//! The state database on PostgreSQL (`[state] url = "postgres://…"`): the same schema and
//! migrations as the embedded SQLite store (schema.rs), through tokio-postgres with a
//! deadpool pool, and the budget's leases with the cap checked under a lock of the run's
//! spent row, so that workers on many machines never overspend together.
//! What is built so far: migrations, the ledger's rows and the budget. The journal, task
//! leases and fencing are not on this backend yet (design: state.backends).
//! design: state.backends
//! design: llm.budget-lease

use std::collections::HashMap;
use std::sync::Arc;

use deadpool_postgres::{Manager, Pool};
use tokio::sync::Mutex;

use crate::budget::{Lease, Reservation, growth};
use crate::error::LlmError;
use crate::ledger::{CallRow, STALE_RESERVATION, unix_now};
use crate::schema::{Dialect, MIGRATIONS, VERSION_TABLE};
use crate::state_db::StateError;

/// An advisory lock key: one migrator at a time.
const MIGRATION_LOCK: i64 = 0x5350_4543_4353;

impl From<tokio_postgres::Error> for StateError {
    fn from(e: tokio_postgres::Error) -> StateError {
        StateError::Postgres(Arc::new(e))
    }
}

impl From<deadpool_postgres::PoolError> for StateError {
    fn from(e: deadpool_postgres::PoolError) -> StateError {
        StateError::Open(format!("no connection from the pool: {e}"))
    }
}

/// A pool of connections to one PostgreSQL state database.
#[derive(Clone)]
pub struct PgState {
    pool: Pool,
}

impl PgState {
    /// Connects to `url` (a libpq URL or key=value string; its password is never logged)
    /// and brings the database to the newest schema.
    pub async fn connect(url: &str) -> Result<PgState, StateError> {
        let config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StateError::Open(format!("not a PostgreSQL URL: {e}")))?;
        let manager = Manager::new(config, tokio_postgres::NoTls);
        let pool = Pool::builder(manager)
            .max_size(16)
            .build()
            .map_err(|e| StateError::Open(e.to_string()))?;
        let state = PgState { pool };
        state.migrate().await?;
        Ok(state)
    }

    /// Applies the migrations this database has not had, each in a transaction with its
    /// version row, under an advisory lock so that workers starting together migrate once.
    pub async fn migrate(&self) -> Result<(), StateError> {
        let mut client = self.pool.get().await?;
        for (version, text) in MIGRATIONS {
            let tx = client.transaction().await?;
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .await?;
            tx.batch_execute(&Dialect::Postgres.spell(VERSION_TABLE))
                .await?;
            let at: i64 = tx
                .query_one(
                    "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_version",
                    &[],
                )
                .await?
                .get(0);
            if at < *version {
                tx.batch_execute(&Dialect::Postgres.spell(text)).await?;
                tx.execute(
                    "INSERT INTO schema_version (version) VALUES ($1)",
                    &[version],
                )
                .await?;
            }
            tx.commit().await?;
        }
        Ok(())
    }

    /// A connection from the pool (for the runtime's operations on this backend).
    pub async fn client(&self) -> Result<deadpool_postgres::Object, StateError> {
        Ok(self.pool.get().await?)
    }

    /// The columns of every table, `(table, column, type)` in order: what the schema
    /// tests compare with SQLite's.
    pub async fn columns(&self) -> Result<Vec<(String, String, String)>, StateError> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT table_name::TEXT, column_name::TEXT, data_type::TEXT
                 FROM information_schema.columns WHERE table_schema = current_schema()
                 ORDER BY table_name, ordinal_position",
                &[],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }

    /// Dollars spent by `run`.
    pub async fn spent(&self, run: &str) -> Result<f64, StateError> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt("SELECT dollars FROM llm_run_spent WHERE run = $1", &[&run])
            .await?;
        Ok(row.map_or(0.0, |r| r.get(0)))
    }

    /// Spent plus reserved for `run`, read in one snapshot (what another worker's cap check
    /// counts).
    pub async fn committed_snapshot(&self, run: &str) -> Result<f64, StateError> {
        let mut client = self.pool.get().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await?;
        let row = tx
            .query_one(
                "SELECT COALESCE((SELECT dollars FROM llm_run_spent WHERE run = $1), 0)
                      + COALESCE((SELECT SUM(dollars) FROM llm_reservations WHERE run = $1), 0)",
                &[&run],
            )
            .await?;
        tx.commit().await?;
        Ok(row.get(0))
    }

    /// Dollars every reservation of `run` holds.
    pub async fn reserved(&self, run: &str) -> Result<f64, StateError> {
        let client = self.pool.get().await?;
        let row = client
            .query_one(
                "SELECT COALESCE(SUM(dollars), 0)::DOUBLE PRECISION FROM llm_reservations
                 WHERE run = $1",
                &[&run],
            )
            .await?;
        Ok(row.get(0))
    }
}

/// A process's budget on PostgreSQL: leases as on SQLite (llm.budget-lease), grown with
/// the run's spent row locked (`FOR UPDATE`), so growths of every process are serialised
/// and each sees the others' reservations.
pub struct PgBudget {
    state: PgState,
    /// Held across a lease's database write, so its writes land in the order their sizes
    /// were computed.
    leases: Mutex<HashMap<String, Lease>>,
}

impl PgBudget {
    pub fn new(state: PgState) -> PgBudget {
        PgBudget {
            state,
            leases: Mutex::new(HashMap::new()),
        }
    }

    /// Reserves `dollars` for a call of `run` (see `Ledger::reserve`).
    pub async fn reserve(
        &self,
        run: &str,
        dollars: f64,
        cap: Option<f64>,
    ) -> Result<Reservation, LlmError> {
        let mut leases = self.leases.lock().await;
        if let Some(r) = leases.get_mut(run).and_then(|l| l.take(dollars)) {
            return Ok(r);
        }
        let (id, in_use) = leases
            .get(run)
            .map_or((None, 0.0), |l| (Some(l.id), l.in_use));
        let (id, held) = self
            .grow(run, id, in_use, dollars, cap)
            .await
            .map_err(LlmError::Ledger)??;
        Ok(Lease::grown(&mut leases, run, id, held, dollars))
    }

    async fn grow(
        &self,
        run: &str,
        id: Option<i64>,
        in_use: f64,
        dollars: f64,
        cap: Option<f64>,
    ) -> Result<Result<(i64, f64), LlmError>, StateError> {
        let mut client = self.state.pool.get().await?;
        let tx = client.transaction().await?;
        tx.execute(
            "INSERT INTO llm_run_spent (run, dollars) VALUES ($1, 0) ON CONFLICT (run) DO NOTHING",
            &[&run],
        )
        .await?;
        let spent: f64 = tx
            .query_one(
                "SELECT dollars FROM llm_run_spent WHERE run = $1 FOR UPDATE",
                &[&run],
            )
            .await?
            .get(0);
        let fresh = unix_now() - STALE_RESERVATION.as_secs() as i64;
        let others: f64 = tx
            .query_one(
                "SELECT COALESCE(SUM(dollars), 0)::DOUBLE PRECISION FROM llm_reservations
                 WHERE run = $1 AND created_unix > $2 AND id IS DISTINCT FROM $3",
                &[&run, &fresh, &id],
            )
            .await?
            .get(0);
        let held = match growth(dollars, cap, spent + others + in_use) {
            Ok(g) => in_use + g,
            Err(e) => return Ok(Err(e)),
        };
        let id = match id {
            Some(id) => {
                tx.execute(
                    "UPDATE llm_reservations SET dollars = $2, created_unix = $3 WHERE id = $1",
                    &[&id, &held, &unix_now()],
                )
                .await?;
                id
            }
            None => tx
                .query_one(
                    "INSERT INTO llm_reservations (run, dollars, created_unix)
                     VALUES ($1, $2, $3) RETURNING id",
                    &[&run, &held, &unix_now()],
                )
                .await?
                .get(0),
        };
        tx.commit().await?;
        Ok(Ok((id, held)))
    }

    /// Records `row` and settles `r` in one transaction: the call's row, the run's spent
    /// total and the lease's new size.
    pub async fn record(&self, row: &CallRow, r: Option<Reservation>) -> Result<(), LlmError> {
        let mut leases = self.leases.lock().await;
        let lease = r.and_then(|r| {
            leases
                .values_mut()
                .find(|l| l.id == r.lease)
                .map(|l| (l.id, l.settle(r, row.dollars)))
        });
        self.write_row(row, lease).await.map_err(LlmError::Ledger)
    }

    async fn write_row(&self, row: &CallRow, lease: Option<(i64, f64)>) -> Result<(), StateError> {
        let mut client = self.state.pool.get().await?;
        let tx = client.transaction().await?;
        let (input, cached, output) = (
            row.usage.input as i64,
            row.usage.cached_input as i64,
            row.usage.output as i64,
        );
        let latency = row.latency.as_millis() as i64;
        let attempt = i64::from(row.attempt);
        tx.execute(
            "INSERT INTO llm_calls (at_unix, run, task, role, provider, model, input_tokens,
             cached_input_tokens, output_tokens, dollars, latency_ms, attempt, outcome)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            &[
                &unix_now(),
                &row.run,
                &row.task,
                &row.role,
                &row.provider,
                &row.model,
                &input,
                &cached,
                &output,
                &row.dollars,
                &latency,
                &attempt,
                &row.outcome,
            ],
        )
        .await?;
        tx.execute(
            "INSERT INTO llm_run_spent (run, dollars) VALUES ($1, $2)
             ON CONFLICT (run) DO UPDATE SET dollars = llm_run_spent.dollars + $2",
            &[&row.run, &row.dollars],
        )
        .await?;
        if let Some((id, held)) = lease {
            tx.execute(
                "UPDATE llm_reservations SET dollars = $2 WHERE id = $1",
                &[&id, &held],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Gives the leases' free parts back (what a dropped SQLite ledger does on drop).
    pub async fn close(&self) -> Result<(), StateError> {
        let leases = self.leases.lock().await;
        let client = self.state.pool.get().await?;
        for l in leases.values() {
            if l.in_use > 0.0 {
                client
                    .execute(
                        "UPDATE llm_reservations SET dollars = $2 WHERE id = $1",
                        &[&l.id, &l.in_use],
                    )
                    .await?;
            } else {
                client
                    .execute("DELETE FROM llm_reservations WHERE id = $1", &[&l.id])
                    .await?;
            }
        }
        Ok(())
    }
}
