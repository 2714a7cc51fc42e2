//! The state database's one writer: writes are queued and committed in batches — one
//! transaction for every write the build's tasks queued since the last commit — instead of
//! one transaction each. A write that must be durable before the caller goes on (a paid
//! answer, before anything else happens) awaits [`StateDb::durable`]: a committer thread of
//! the writer's own commits the queue while the caller's thread runs its other tasks, and
//! every write queued while it commits rides with its next commit (design:
//! state.committer). A write that must be visible to other processes at once (a budget
//! reservation) runs through [`StateDb::now`], after the queue. A commit that fails loses
//! its batch and poisons the database for this process: everything after it fails too, so
//! no caller is told a write is durable when it is not.
//! design: llm.ledger
//! design: runtime.errors

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use rusqlite::Connection;

use crate::checkpoint::Checkpointer;
use crate::dialect::Dialect;
use crate::error::StateError;
use crate::postgres::{PgConn, config_of};
use crate::sql::Sql;

/// A queued write: statements run in the transaction of the batch that commits it.
pub type Write = Box<dyn FnOnce(&mut dyn Sql) -> Result<(), StateError> + Send>;

/// The state database's one writer, on either backend (design: state.backends).
pub struct StateDb {
    /// SQLite's checkpoints, off the writer's threads (design: state.committer). Declared
    /// first: it stops before the writer's connection closes, so that closing is the last
    /// and leaves no WAL behind.
    _checkpointer: Option<Checkpointer>,
    shared: Arc<Shared>,
    /// Commits what [`StateDb::durable`] waits for; `None` if no thread could be started
    /// (the waiting caller then commits itself).
    committer: Option<std::thread::JoinHandle<()>>,
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

/// What the callers' threads and the committer share. Lock order: `conn`, then `queue`.
struct Shared {
    conn: Mutex<Conn>,
    queue: Mutex<Queue>,
    /// The committer waits on it for `Queue::wanted` or `Queue::stop`.
    wake: Condvar,
    /// How many queued writes are committed, and why nothing is any more.
    mark: tokio::sync::watch::Sender<Mark>,
}

struct Conn {
    backend: Backend,
    /// Why a commit failed: nothing is durable after it.
    poisoned: Option<StateError>,
    /// Set by the checkpointing thread when it could not catch up with the commits.
    behind: Option<Arc<AtomicBool>>,
}

impl Conn {
    /// After a commit: the checkpoint the thread could not finish (design: state.committer).
    fn catch_up(&self) {
        if let (Some(behind), Backend::Sqlite(conn)) = (&self.behind, &self.backend) {
            crate::checkpoint::catch_up(conn, behind);
        }
    }
}

#[derive(Default)]
struct Queue {
    writes: Vec<Write>,
    /// Writes queued since open.
    queued: u64,
    /// A caller waits for what is queued to be committed.
    wanted: bool,
    /// The writer is being dropped: the committer commits what is left and ends.
    stop: bool,
}

#[derive(Clone, Debug, Default)]
struct Mark {
    committed: u64,
    poisoned: Option<StateError>,
}

impl Shared {
    fn conn(&self) -> Result<MutexGuard<'_, Conn>, StateError> {
        self.conn.lock().map_err(|_| StateError::Poisoned)
    }

    fn queue(&self) -> Result<MutexGuard<'_, Queue>, StateError> {
        self.queue.lock().map_err(|_| StateError::Poisoned)
    }

    /// Takes the queue, with the count it brings the committed writes to. The caller holds
    /// `conn`, so batches commit in the order they were queued.
    fn take(&self) -> Result<(Vec<Write>, u64), StateError> {
        let mut q = self.queue()?;
        Ok((std::mem::take(&mut q.writes), q.queued))
    }

    /// Records a batch's end: committed up to `upto`, or lost with `why`.
    fn publish(&self, upto: u64, why: Option<&StateError>) {
        self.mark.send_modify(|m| {
            m.committed = m.committed.max(upto);
            if let Some(why) = why {
                m.poisoned.get_or_insert_with(|| why.clone());
            }
        });
    }

    /// Commits the queue in one transaction (`conn` is this writer's, locked).
    fn commit(&self, conn: &mut Conn) -> Result<(), StateError> {
        if let Some(why) = &conn.poisoned {
            return Err(why.clone());
        }
        let (writes, upto) = self.take()?;
        if writes.is_empty() {
            return Ok(());
        }
        let sql = conn.backend.sql();
        let begin = sql.dialect().begin();
        let result = transaction(sql, begin, |sql| {
            for w in writes {
                w(sql)?;
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                self.publish(upto, None);
                conn.catch_up();
                Ok(())
            }
            Err(e) => Err(self.lose(conn, e)),
        }
    }

    /// Records the failure that lost a batch: every later write is refused with it.
    fn lose(&self, conn: &mut Conn, e: StateError) -> StateError {
        let lost = StateError::Lost(e.to_string());
        tracing::error!(error = %lost, "a batch of state writes was lost");
        conn.poisoned = Some(lost.clone());
        self.publish(0, Some(&lost));
        lost
    }
}

/// Publishes that nothing is durable any more, if the committer ends before its writer is
/// dropped (a write that panicked, a poisoned lock): its waiters are told, not left waiting.
struct Abandoned<'a> {
    shared: &'a Shared,
    stopping: bool,
}

impl Drop for Abandoned<'_> {
    fn drop(&mut self) {
        if !self.stopping {
            self.shared.publish(0, Some(&StateError::Poisoned));
        }
    }
}

/// The committer thread: commits the queue whenever a caller waits for it, until the
/// writer is dropped (then once more).
fn committer(shared: &Shared) {
    let mut guard = Abandoned {
        shared,
        stopping: false,
    };
    loop {
        let stop = {
            let Ok(mut q) = shared.queue.lock() else {
                return;
            };
            while !q.wanted && !q.stop {
                q = match shared.wake.wait(q) {
                    Ok(q) => q,
                    Err(_) => return,
                };
            }
            q.wanted = false;
            q.stop
        };
        guard.stopping = stop;
        let Ok(mut conn) = shared.conn() else {
            return; // a poisoned lock: `guard` tells the waiters
        };
        // A failure is published to the waiting callers.
        let _ = shared.commit(&mut conn);
        if stop {
            return;
        }
    }
}

impl StateDb {
    /// Opens (creating) the state database at `path` ([`crate::sqlite::open`]), with its
    /// checkpoints on a thread of their own (design: state.committer).
    pub fn open(path: &Path) -> std::io::Result<StateDb> {
        let conn = crate::sqlite::open(path)?;
        let checkpointer = Checkpointer::start(path);
        if checkpointer.is_some() {
            conn.pragma_update(None, "wal_autocheckpoint", 0)
                .map_err(std::io::Error::other)?;
        }
        let behind = checkpointer.as_ref().map(|c| c.behind.clone());
        let mut db = StateDb::with_backend(Backend::Sqlite(conn), behind);
        db._checkpointer = checkpointer;
        Ok(db)
    }

    /// The writer of a SQLite connection.
    pub fn on(conn: Connection) -> StateDb {
        StateDb::with_backend(Backend::Sqlite(conn), None)
    }

    /// The writer of a PostgreSQL state database. Nothing is migrated here: each owner of
    /// tables migrates its own as it opens (design: state.owners).
    pub(crate) fn postgres(conn: PgConn) -> StateDb {
        StateDb::with_backend(Backend::Postgres(conn), None)
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

    fn with_backend(mut backend: Backend, behind: Option<Arc<AtomicBool>>) -> StateDb {
        let dialect = backend.sql().dialect();
        let shared = Arc::new(Shared {
            conn: Mutex::new(Conn {
                backend,
                poisoned: None,
                behind,
            }),
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            mark: tokio::sync::watch::Sender::new(Mark::default()),
        });
        let theirs = shared.clone();
        let committer = std::thread::Builder::new()
            .name("specc-state".into())
            .spawn(move || committer(&theirs))
            .ok();
        StateDb {
            _checkpointer: None,
            shared,
            committer,
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
        Ok(StateDb::with_backend(Backend::Postgres(conn), None))
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

    /// Queues `w` for the next commit; refused once a commit has failed (nothing queued
    /// after a lost batch could be committed).
    pub fn defer(&self, w: Write) -> Result<(), StateError> {
        if let Some(why) = &self.shared.mark.borrow().poisoned {
            return Err(why.clone());
        }
        let mut q = self.shared.queue()?;
        q.writes.push(w);
        q.queued += 1;
        Ok(())
    }

    /// Commits the queue, then runs `f` outside a transaction (a read that must see every
    /// write, or a single statement other processes must see at once).
    pub fn now<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut conn = self.shared.conn()?;
        self.shared.commit(&mut conn)?;
        f(conn.backend.sql())
    }

    /// Commits the queue and `f` in one transaction (immediate on SQLite: a write other
    /// processes must see at once, and the queue before it): one commit for both. `f`
    /// failing fails the transaction, the queue with it, like a failed batch. `f`'s own
    /// refusal (an `Ok(Err(_))`, say) commits what it wrote.
    pub fn now_with_queue<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut conn = self.shared.conn()?;
        if let Some(why) = &conn.poisoned {
            return Err(why.clone());
        }
        let (writes, upto) = self.shared.take()?;
        let begin = self.dialect.begin_immediate();
        let result = transaction(conn.backend.sql(), begin, |sql| {
            for w in writes {
                w(sql)?;
            }
            f(sql)
        });
        match result {
            Ok(out) => {
                self.shared.publish(upto, None);
                conn.catch_up();
                Ok(out)
            }
            Err(e) => Err(self.shared.lose(&mut conn, e)),
        }
    }

    /// Commits the queue, then runs `f` in a transaction of its own: `f` failing rolls
    /// back only what `f` wrote, and later writes go on (a record the build can do without,
    /// such as an eval point; the queue's failure poisons as always).
    pub fn transaction<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut conn = self.shared.conn()?;
        self.shared.commit(&mut conn)?;
        let begin = self.dialect.begin_immediate();
        transaction(conn.backend.sql(), begin, f)
    }

    /// Runs `f` on what is committed, leaving the queue alone (a read that needs no write of
    /// this process's queue: a progress figure, what an earlier process journaled).
    pub fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let mut conn = self.shared.conn()?;
        f(conn.backend.sql())
    }

    /// Commits the queue in one transaction.
    pub fn commit(&self) -> Result<(), StateError> {
        let mut conn = self.shared.conn()?;
        self.shared.commit(&mut conn)
    }

    /// Writes queued and not yet committed (`specc build --gauges`).
    pub fn backlog(&self) -> u64 {
        let queued = self.shared.queue().map_or(0, |q| q.queued);
        queued.saturating_sub(self.shared.mark.borrow().committed)
    }

    /// Asks the committer thread to commit what is queued, without waiting for it (a
    /// writer without a committer commits when [`StateDb::durable`] is awaited): the
    /// caller goes on, and waits with `durable` only where it must (design:
    /// llm.answer-durability).
    pub fn commit_soon(&self) {
        if self.committer.is_none() {
            return;
        }
        if let Ok(mut q) = self.shared.queue() {
            q.wanted = true;
            self.shared.wake.notify_one();
        }
    }

    /// Returns once every write queued so far is committed. The committer thread commits;
    /// this thread's other tasks run meanwhile and what they queue rides with that commit
    /// or the next.
    pub async fn durable(&self) -> Result<(), StateError> {
        let mut marks = self.shared.mark.subscribe();
        let mine = {
            let mut q = self.shared.queue()?;
            let mark = marks.borrow_and_update();
            if let Some(why) = &mark.poisoned {
                return Err(why.clone());
            }
            if mark.committed >= q.queued {
                return Ok(());
            }
            if self.committer.is_none() {
                drop((mark, q));
                return self.commit();
            }
            q.wanted = true;
            self.shared.wake.notify_one();
            q.queued
        };
        let reached = marks
            .wait_for(|m| m.committed >= mine || m.poisoned.is_some())
            .await
            .map(|m| (m.committed >= mine, m.poisoned.clone()));
        match reached {
            Ok((true, _)) => Ok(()),
            Ok((false, Some(why))) => Err(why),
            _ => Err(StateError::Poisoned),
        }
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

impl Drop for StateDb {
    fn drop(&mut self) {
        if let Some(committer) = self.committer.take() {
            if let Ok(mut q) = self.shared.queue.lock() {
                q.stop = true;
            }
            self.shared.wake.notify_one();
            let _ = committer.join();
        }
        // What is left (the committer's last commit covers it when it ran).
        if let Ok(mut conn) = self.shared.conn.lock() {
            let _ = self.shared.commit(&mut conn);
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
    async fn a_write_that_panics_on_the_committer_fails_its_waiters() {
        let (_d, db) = db();
        db.defer(Box::new(|_| panic!("a write that panics")))
            .expect("queued");
        let waited = tokio::time::timeout(std::time::Duration::from_secs(10), db.durable()).await;
        assert!(
            matches!(waited, Ok(Err(_))),
            "told, not left waiting: {waited:?}"
        );
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
