//! The state database on PostgreSQL as a pool of async connections (tokio-postgres with
//! deadpool): what the runtime's task leases claim through, so that concurrent claims pass
//! one another with `SKIP LOCKED`, and a few reads for the tests. The connection settings
//! every PostgreSQL connection of specc's uses are here too (`config_of`). The state
//! database's writer uses `pg_conn.rs`; both migrate with `schema::migrate`.
//! design: state.backends

use std::sync::Arc;

use deadpool_postgres::{Manager, Pool};

use crate::pg_conn::PgConn;
use crate::state_db::StateError;

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

/// The connection settings of `url` (a libpq URL or key=value string), with `password`
/// when the URL has none, and a connect timeout if given.
pub fn config_of(
    url: &str,
    password: Option<&str>,
    timeout: Option<std::time::Duration>,
) -> Result<tokio_postgres::Config, StateError> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| StateError::Open(format!("not a PostgreSQL URL: {e}")))?;
    if let Some(p) = password.filter(|_| config.get_password().is_none()) {
        config.password(p);
    }
    if let Some(t) = timeout {
        config.connect_timeout(t);
    }
    // Every transaction of specc's, pooled or not, at READ COMMITTED whatever the server's
    // default: a budget growth reads other processes' leases after its row lock, and a
    // claim's `SKIP LOCKED` passes rows another claim holds, both of which a REPEATABLE
    // READ default would turn into stale reads or serialisation failures.
    let isolation = "-c default_transaction_isolation=read\\ committed";
    let options = match config.get_options() {
        Some(o) if !o.is_empty() => format!("{o} {isolation}"),
        _ => isolation.to_owned(),
    };
    config.options(&options);
    Ok(config)
}

/// A pool of connections to one PostgreSQL state database.
#[derive(Clone)]
pub struct PgState {
    pub(crate) pool: Pool,
}

impl PgState {
    /// Connects to `url` (a libpq URL or key=value string; its password is never logged)
    /// and brings the database to the newest schema.
    pub async fn connect(url: &str) -> Result<PgState, StateError> {
        PgState::connect_as(url, None).await
    }

    /// [`PgState::connect`], with `password` (PGPASSWORD, say) when the URL has none.
    pub async fn connect_as(url: &str, password: Option<&str>) -> Result<PgState, StateError> {
        let state = PgState::pool(url, password, None)?;
        // The one migration code both backends run (`schema::migrate`), on a connection of
        // its own, off the async threads.
        let config = config_of(url, password, None)?;
        tokio::task::spawn_blocking(move || crate::schema::migrate(&mut PgConn::connect(config)?))
            .await
            .map_err(|e| StateError::Open(format!("the migration's thread: {e}")))??;
        Ok(state)
    }

    /// A pool for a reader (`specc status`): nothing is migrated or created, and a server
    /// that does not answer within `timeout` fails the first query.
    pub fn reader(
        url: &str,
        password: Option<&str>,
        timeout: std::time::Duration,
    ) -> Result<PgState, StateError> {
        PgState::pool(url, password, Some(timeout))
    }

    fn pool(
        url: &str,
        password: Option<&str>,
        timeout: Option<std::time::Duration>,
    ) -> Result<PgState, StateError> {
        let manager = Manager::new(config_of(url, password, timeout)?, tokio_postgres::NoTls);
        let pool = Pool::builder(manager)
            .max_size(16)
            .build()
            .map_err(|e| StateError::Open(e.to_string()))?;
        Ok(PgState { pool })
    }

    /// A connection from the pool (for the runtime's operations on this backend).
    pub async fn client(&self) -> Result<deadpool_postgres::Object, StateError> {
        Ok(self.pool.get().await?)
    }

    /// The columns of every table, `(table, column, type)` in order (introspection: the
    /// schema tests compare it with SQLite's).
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
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect()
    }

    /// Dollars spent by `run`.
    pub async fn spent(&self, run: &str) -> Result<f64, StateError> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt("SELECT dollars FROM llm_run_spent WHERE run = $1", &[&run])
            .await?;
        Ok(row.map(|r| r.try_get(0)).transpose()?.unwrap_or(0.0))
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
        Ok(row.try_get(0)?)
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
        Ok(row.try_get(0)?)
    }
}
