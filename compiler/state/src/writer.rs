//! The state database's one writer: writes are queued and committed in batches — one
//! transaction for every write the build's tasks queued since the last commit — instead of
//! one transaction each. A write that must be durable before the caller goes on (a paid
//! answer, before anything else happens) awaits [`StateDb::durable`], which first lets the
//! other tasks of the thread queue theirs; a write that must be visible to other processes
//! at once (a budget reservation) runs through [`StateDb::now`], after the queue. A commit
//! that fails loses its batch and poisons the database for this process: everything after
//! it fails too, so no caller is told a write is durable when it is not.
//! design: llm.ledger
//! design: runtime.errors

use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;

use crate::dialect::Dialect;
use crate::error::StateError;
use crate::postgres::{PgConn, config_of};
use crate::sql::Sql;

/// A queued write: statements run in the transaction of the batch that commits it.
pub type Write = Box<dyn FnOnce(&mut dyn Sql) -> Result<(), StateError> + Send>;

/// The state database's one writer, on either backend (design: state.backends).
pub struct StateDb {
    inner: Mutex<Inner>,
    dialect: Dialect,
}

/// The connection a writer holds.
enum Backend {
    Sqlite(Connection),
    Postgres(PgConn),
}

impl Backend {
    fn sql(&mut self) -> &mut dyn Sql {
        match self {
            Backend::Sqlite(c) => c,
            Backend::Postgres(c) => c,
        }
    }
}

struct Inner {
    conn: Backend,
    queue: Vec<Write>,
    /// Writes queued since open, and how many of them are committed.
    queued: u64,
    committed: u64,
    /// Why a commit failed: nothing is durable after it.
    poisoned: Option<StateError>,
}

impl StateDb {
    /// Opens (creating) the state database at `path` ([`crate::sqlite::open`]).
    pub fn open(path: &Path) -> std::io::Result<StateDb> {
        Ok(StateDb::on(crate::sqlite::open(path)?))
    }

    /// The writer of a SQLite connection.
    pub fn on(conn: Connection) -> StateDb {
        StateDb::with_backend(Backend::Sqlite(conn))
    }

    /// The writer of a PostgreSQL state database. Nothing is migrated here: each owner of
    /// tables migrates its own as it opens (design: state.owners).
    pub fn postgres(conn: PgConn) -> StateDb {
        StateDb::with_backend(Backend::Postgres(conn))
    }

    /// Connects the writer to the PostgreSQL state database at `url` (with `password` when
    /// the URL has none).
    pub fn connect_postgres(url: &str, password: Option<&str>) -> Result<StateDb, StateError> {
        // A server that does not answer fails the build's start in seconds, not minutes.
        let timeout = Some(std::time::Duration::from_secs(10));
        Ok(StateDb::postgres(PgConn::connect(config_of(
            url, password, timeout,
        )?)?))
    }

    fn with_backend(mut conn: Backend) -> StateDb {
        let dialect = conn.sql().dialect();
        StateDb {
            inner: Mutex::new(Inner {
                conn,
                queue: Vec::new(),
                queued: 0,
                committed: 0,
                poisoned: None,
            }),
            dialect,
        }
    }

    /// A reader of the PostgreSQL state database at `url`: nothing is created or migrated,
    /// and a server that does not answer within `timeout` fails the connection.
    pub fn read_postgres(
        url: &str,
        password: Option<&str>,
        timeout: std::time::Duration,
    ) -> Result<StateDb, StateError> {
        let conn = PgConn::connect(config_of(url, password, Some(timeout))?)?;
        Ok(StateDb::with_backend(Backend::Postgres(conn)))
    }

    /// Takes the session-level advisory lock `key` on PostgreSQL, held as long as this
    /// connection (so until the process ends, however it ends); `false` if another holds
    /// it. SQLite has no such lock: its callers lock the state directory.
    pub fn try_advisory_lock(&self, key: i64) -> Result<bool, StateError> {
        match self.dialect {
            Dialect::Sqlite => Ok(true),
            Dialect::Postgres => self.now(|c| {
                c.query_one("SELECT pg_try_advisory_lock(?1)", crate::args![key])?
                    .flag(0)
            }),
        }
    }

    /// Which backend this is.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Inner>, StateError> {
        self.inner.lock().map_err(|_| StateError::Poisoned)
    }

    /// Queues `w` for the next commit; refused once a commit has failed (nothing queued
    /// after a lost batch could be committed).
    pub fn defer(&self, w: Write) -> Result<(), StateError> {
        let mut g = self.lock()?;
        if let Some(why) = &g.poisoned {
            return Err(why.clone());
        }
        g.queue.push(w);
        g.queued += 1;
        Ok(())
    }

    /// Commits the queue, then runs `f` outside a transaction (a read that must see every
    /// write, or a single statement other processes must see at once).
    pub fn now<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut g = self.lock()?;
        g.commit()?;
        f(g.conn.sql())
    }

    /// Commits the queue and `f` in one transaction (immediate on SQLite: a write other
    /// processes must see at once, and the queue before it): one commit for both. `f`
    /// failing fails the transaction, the queue with it, like a failed batch. `f`'s own
    /// refusal (an `Ok(Err(_))`, say) commits what it wrote.
    pub fn now_with_queue<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut g = self.lock()?;
        if let Some(why) = &g.poisoned {
            return Err(why.clone());
        }
        let queue = std::mem::take(&mut g.queue);
        let begin = self.dialect.begin_immediate();
        let result = transaction(g.conn.sql(), begin, |sql| {
            for w in queue {
                w(sql)?;
            }
            f(sql)
        });
        match result {
            Ok(out) => {
                g.committed = g.queued;
                Ok(out)
            }
            Err(e) => Err(g.lose(e)),
        }
    }

    /// Commits the queue, then runs `f` in a transaction of its own: `f` failing rolls
    /// back only what `f` wrote, and later writes go on (a record the build can do without,
    /// such as an eval point; the queue's failure poisons as always).
    pub fn transaction<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut g = self.lock()?;
        g.commit()?;
        let begin = self.dialect.begin_immediate();
        transaction(g.conn.sql(), begin, f)
    }

    /// Runs `f` on what is committed, leaving the queue alone (a read that needs no write of
    /// this process's queue: a progress figure, what an earlier process journaled).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut g = self.lock()?;
        f(g.conn.sql())
    }

    /// Commits the queue in one transaction.
    pub fn commit(&self) -> Result<(), StateError> {
        self.lock()?.commit()
    }

    /// Returns once every write queued so far is committed. It first yields, so the other
    /// tasks of this thread run and queue their writes, and one commit takes them all.
    pub async fn durable(&self) -> Result<(), StateError> {
        let mine = {
            let g = self.lock()?;
            if let Some(why) = &g.poisoned {
                return Err(why.clone());
            }
            if g.committed >= g.queued {
                return Ok(());
            }
            g.queued
        };
        tokio::task::yield_now().await;
        let mut g = self.lock()?;
        if g.committed >= mine {
            return g.poisoned.clone().map_or(Ok(()), Err);
        }
        g.commit()
    }
}

/// Runs `f` between `begin` and `COMMIT`, rolling back if anything fails.
fn transaction<T>(
    sql: &mut dyn Sql,
    begin: &str,
    f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
) -> Result<T, StateError> {
    sql.batch(begin)?;
    match f(sql).and_then(|out| sql.batch("COMMIT").map(|()| out)) {
        Ok(out) => Ok(out),
        Err(e) => {
            let _ = sql.batch("ROLLBACK");
            Err(e)
        }
    }
}

impl Inner {
    /// Records the failure that lost a batch: every later write is refused with it.
    fn lose(&mut self, e: StateError) -> StateError {
        let lost = StateError::Lost(e.to_string());
        tracing::error!(error = %lost, "a batch of state writes was lost");
        self.poisoned = Some(lost.clone());
        lost
    }

    fn commit(&mut self) -> Result<(), StateError> {
        if let Some(why) = &self.poisoned {
            return Err(why.clone());
        }
        if self.queue.is_empty() {
            return Ok(());
        }
        let queue = std::mem::take(&mut self.queue);
        let sql = self.conn.sql();
        let begin = sql.dialect().begin();
        let result = transaction(sql, begin, |sql| {
            for w in queue {
                w(sql)?;
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                self.committed = self.queued;
                Ok(())
            }
            Err(e) => Err(self.lose(e)),
        }
    }
}

impl Drop for StateDb {
    fn drop(&mut self) {
        if let Ok(g) = self.inner.get_mut() {
            let _ = g.commit();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, StateDb) {
        let dir = tempfile::tempdir().expect("dir");
        let db = StateDb::open(&dir.path().join("s.db")).expect("open");
        db.now(|c| c.batch("CREATE TABLE t (x INTEGER)"))
            .expect("table");
        (dir, db)
    }

    fn insert(x: i64) -> Write {
        Box::new(move |c| {
            c.execute("INSERT INTO t VALUES (?1)", crate::args![x])
                .map(drop)
        })
    }

    fn count(db: &StateDb) -> i64 {
        db.read(|c| c.query_one("SELECT COUNT(*) FROM t", &[])?.int(0))
            .expect("count")
    }

    #[tokio::test]
    async fn queued_writes_are_committed_together_when_one_is_awaited() {
        let (_d, db) = db();
        db.defer(insert(1)).expect("queued");
        db.defer(insert(2)).expect("queued");
        assert_eq!(count(&db), 0, "queued, not committed");
        db.durable().await.expect("durable");
        assert_eq!(count(&db), 2);
        // A read through `now` sees the queue.
        db.defer(insert(3)).expect("queued");
        let n: i64 = db
            .now(|c| c.query_one("SELECT COUNT(*) FROM t", &[])?.int(0))
            .expect("now");
        assert_eq!(n, 3);
    }

    #[tokio::test]
    async fn a_failed_batch_poisons_everything_after_it() {
        let (_d, db) = db();
        db.defer(insert(1)).expect("queued");
        db.defer(Box::new(|c| c.batch("INSERT INTO missing VALUES (1)")))
            .expect("queued");
        assert!(
            matches!(db.durable().await, Err(StateError::Lost(why)) if why.contains("missing")),
            "the call whose batch failed is told the batch was lost, and why"
        );
        assert_eq!(count(&db), 0, "the whole batch is lost, not part of it");
        assert!(
            matches!(db.defer(insert(2)), Err(StateError::Lost(why)) if why.contains("missing")),
            "nothing is queued after a lost batch, and the refusal quotes the first failure"
        );
        assert!(
            db.durable().await.is_err(),
            "nothing is durable after a lost batch"
        );
        assert!(db.commit().is_err());
    }

    #[tokio::test]
    async fn dropping_the_database_commits_its_queue() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.db");
        {
            let db = StateDb::open(&path).expect("open");
            db.now(|c| c.batch("CREATE TABLE t (x INTEGER)"))
                .expect("table");
            db.defer(insert(7)).expect("queued");
        }
        let db = StateDb::open(&path).expect("open");
        assert_eq!(count(&db), 1);
    }
}
