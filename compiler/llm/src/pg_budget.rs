//! A process's budget on PostgreSQL: leases as on SQLite (budget.rs), grown in a READ
//! COMMITTED transaction with the run's spent row locked (`FOR UPDATE`), so the growths of
//! every worker are serialised and each one's sum of reservations is read after the lock,
//! seeing the others'. A lease's time is the database's clock, so workers' clocks need not
//! agree on when a lease went stale. The lease's in-memory state changes only after its
//! write committed: a failed or cancelled write leaves memory and database agreeing.
//! design: llm.budget-lease
//! design: state.backends

use tokio::sync::Mutex;
use tokio_postgres::IsolationLevel;

use crate::budget::{Book, Reservation, growth};
use crate::error::LlmError;
use crate::ledger::{CallRow, STALE_RESERVATION};
use crate::pg::PgState;
use crate::state_db::StateError;

/// The database's clock, in seconds since the epoch.
const PG_NOW: &str = "EXTRACT(EPOCH FROM now())::BIGINT";

pub struct PgBudget {
    state: PgState,
    /// Held across a lease's database write, so its writes land in the order their sizes
    /// were computed.
    book: Mutex<Book>,
}

impl PgBudget {
    pub fn new(state: PgState) -> PgBudget {
        PgBudget {
            state,
            book: Mutex::new(Book::default()),
        }
    }

    /// Reserves `dollars` for a call of `run` (see `Ledger::reserve`).
    pub async fn reserve(
        &self,
        run: &str,
        dollars: f64,
        cap: Option<f64>,
    ) -> Result<Reservation, LlmError> {
        let mut book = self.book.lock().await;
        if let Some(r) = book.take(run, dollars) {
            return Ok(r);
        }
        let (id, in_use) = book.before_growth(run);
        let (id, held) = self
            .grow(run, id, in_use, dollars, cap)
            .await
            .map_err(LlmError::Ledger)??;
        Ok(book.grown(run, id, held, dollars))
    }

    async fn grow(
        &self,
        run: &str,
        id: Option<i64>,
        in_use: f64,
        dollars: f64,
        cap: Option<f64>,
    ) -> Result<Result<(i64, f64), LlmError>, StateError> {
        let mut client = self.state.client().await?;
        // READ COMMITTED whatever the server's default: the sum below must be read after
        // the lock, in a snapshot of its own.
        let tx = client
            .build_transaction()
            .isolation_level(IsolationLevel::ReadCommitted)
            .start()
            .await?;
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
            .try_get(0)?;
        let stale = STALE_RESERVATION.as_secs() as i64;
        let others: f64 = tx
            .query_one(
                &format!(
                    "SELECT COALESCE(SUM(dollars), 0)::DOUBLE PRECISION FROM llm_reservations
                     WHERE run = $1 AND created_unix > {PG_NOW} - $2 AND id IS DISTINCT FROM $3"
                ),
                &[&run, &stale, &id],
            )
            .await?
            .try_get(0)?;
        let held = match growth(dollars, cap, spent + others + in_use) {
            Ok(g) => in_use + g,
            Err(e) => return Ok(Err(e)),
        };
        let updated = match id {
            Some(id) => {
                tx.execute(
                    &format!(
                        "UPDATE llm_reservations SET dollars = $2, created_unix = {PG_NOW}
                         WHERE id = $1"
                    ),
                    &[&id, &held],
                )
                .await?
            }
            None => 0,
        };
        let id = match (id, updated) {
            (Some(id), 1) => id,
            _ => tx
                .query_one(
                    &format!(
                        "INSERT INTO llm_reservations (run, dollars, created_unix)
                         VALUES ($1, $2, {PG_NOW}) RETURNING id"
                    ),
                    &[&run, &held],
                )
                .await?
                .try_get(0)?,
        };
        tx.commit().await?;
        Ok(Ok((id, held)))
    }

    /// Records `row` and settles `r` in one transaction: the call's row, the run's spent
    /// total and the lease's new size. A reservation already settled is not settled again.
    pub async fn record(&self, row: &CallRow, r: Option<Reservation>) -> Result<(), LlmError> {
        self.settle(Some(row), r, row.dollars).await
    }

    /// Gives `r` back unspent.
    pub async fn release(&self, r: Reservation) -> Result<(), LlmError> {
        self.settle(None, Some(r), 0.0).await
    }

    async fn settle(
        &self,
        row: Option<&CallRow>,
        r: Option<Reservation>,
        spent: f64,
    ) -> Result<(), LlmError> {
        let mut book = self.book.lock().await;
        let lease = r.as_ref().and_then(|r| {
            let l = book.lease_of(r)?;
            Some((l.id, l.settled(r, spent)?))
        });
        let written = self.write(row, lease).await;
        if let Some(r) = &r
            && let Some(l) = book.lease_of(r)
        {
            match (&written, lease) {
                (Ok(()), Some((_, held))) => l.close(r, held),
                // Not written: the row still holds the call's dollars, which is safe; the
                // token is gone, so the call is no longer counted as out.
                _ => l.forget(r),
            }
        }
        written.map_err(LlmError::Ledger)
    }

    async fn write(
        &self,
        row: Option<&CallRow>,
        lease: Option<(i64, f64)>,
    ) -> Result<(), StateError> {
        let mut client = self.state.client().await?;
        let tx = client.transaction().await?;
        if let Some(row) = row {
            let (input, cached, output) = (
                row.usage.input as i64,
                row.usage.cached_input as i64,
                row.usage.output as i64,
            );
            let latency = row.latency.as_millis() as i64;
            let attempt = i64::from(row.attempt);
            tx.execute(
                &format!(
                    "INSERT INTO llm_calls (at_unix, run, task, role, provider, model,
                     input_tokens, cached_input_tokens, output_tokens, dollars, latency_ms,
                     attempt, outcome)
                     VALUES ({PG_NOW}, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
                ),
                &[
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
        }
        if let Some((id, held)) = lease {
            tx.execute(
                &format!(
                    "UPDATE llm_reservations SET dollars = $2, created_unix = {PG_NOW}
                     WHERE id = $1"
                ),
                &[&id, &held],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Gives the leases' free parts back (what a dropped SQLite ledger does on drop): a
    /// row keeps what unsettled calls hold, and goes when that is nothing.
    pub async fn close(self) -> Result<(), StateError> {
        let book = self.book.into_inner();
        let client = self.state.client().await?;
        for l in book.by_run.values() {
            if l.busy() {
                client
                    .execute(
                        &format!(
                            "UPDATE llm_reservations SET dollars = $2, created_unix = {PG_NOW}
                             WHERE id = $1"
                        ),
                        &[&l.id, &l.in_use()],
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
