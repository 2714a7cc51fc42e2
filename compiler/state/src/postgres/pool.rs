//! The state database on PostgreSQL as a pool of async connections (tokio-postgres with
//! deadpool): what the task leases claim through, so that concurrent claims pass one
//! another with `SKIP LOCKED`, and the schema's introspection for the tests. The state
//! database's writer uses `conn.rs`; both migrate with `schema::migrate`.
//! design: state.backends

use deadpool_postgres::{Manager, Pool};

use super::config::config_of;
use super::conn::PgConn;
use crate::error::StateError;
use crate::schema::Tables;

/// A pool of connections to one PostgreSQL state database.
#[derive(Clone)]
pub struct PgState {
    pool: Pool,
    /// How to connect for a migration (none for a reader's pool).
    config: Option<Box<tokio_postgres::Config>>,
}

impl PgState {
    /// A pool of connections to `url` (a libpq URL or key=value string; its password is
    /// never logged). Nothing is migrated: the owners of tables migrate theirs
    /// ([`PgState::migrate`]; design: state.owners).
    pub fn connect(url: &str) -> Result<PgState, StateError> {
        PgState::connect_as(url, None)
    }

    /// [`PgState::connect`], with `password` (PGPASSWORD, say) when the URL has none.
    pub fn connect_as(url: &str, password: Option<&str>) -> Result<PgState, StateError> {
        let mut state = PgState::pool(url, password, None)?;
        state.config = Some(Box::new(config_of(url, password, None)?));
        Ok(state)
    }

    /// Brings `tables` to their newest version, through the one migration code both
    /// backends run, on a connection of its own, off the async threads.
    pub async fn migrate(&self, tables: &[&'static Tables]) -> Result<(), StateError> {
        let Some(config) = self.config.as_deref().cloned() else {
            return Err(StateError::Open("a reader's pool does not migrate".into()));
        };
        let tables: Vec<&'static Tables> = tables.to_vec();
        tokio::task::spawn_blocking(move || {
            let mut conn = PgConn::connect(config)?;
            tables
                .iter()
                .try_for_each(|t| crate::schema::migrate(&mut conn, t))
        })
        .await
        .map_err(|e| StateError::Open(format!("the migration's thread: {e}")))?
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
        Ok(PgState { pool, config: None })
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
}
