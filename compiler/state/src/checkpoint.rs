//! The state database's WAL checkpoints, run on a thread of their own instead of inside the
//! writer's commits. SQLite's automatic checkpoint runs in the commit that crosses 1,000 WAL
//! pages: that commit copies the pages into the database file and fsyncs it, and on a disk
//! the build's thread waits for it (tens of milliseconds every ~80 tasks). Here the writer's
//! connection has automatic checkpoints off and this thread checkpoints PASSIVE (never
//! blocking the writer) every [`INTERVAL`], repeating while commits came in during the
//! last pass, so that it catches up in a pause between commits: a commit that begins with
//! every frame copied starts the WAL again from its beginning. If the WAL is still past
//! [`CAP`] frames (a writer that never pauses long enough), the thread leaves the rest to
//! the writer: its next commit checkpoints on its own connection, copying only what came in
//! since the last pass, where SQLite's automatic checkpoint would have copied everything.
//! What is durable is unchanged: a commit is in the WAL either way, and a checkpoint only
//! moves it into the database file (design: state.committer).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

/// How often the thread looks at the WAL.
const INTERVAL: Duration = Duration::from_millis(250);

/// The most passive checkpoints at one look, chasing the commits that came in meanwhile.
const CHASES: usize = 6;

/// WAL frames (16,384 of 4 KiB pages: 64 MiB) past which the writer checkpoints the rest.
const CAP: i64 = 16_384;

/// The checkpointing thread of one state database: stopped and joined when dropped.
pub(crate) struct Checkpointer {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Set when the thread could not catch up: the writer's next commit checkpoints.
    pub(crate) behind: Arc<AtomicBool>,
}

impl Checkpointer {
    /// Starts checkpointing the database at `path`; `None` (automatic checkpoints stay on
    /// for the writer) if the thread or its connection cannot be made.
    pub(crate) fn start(path: &Path) -> Option<Checkpointer> {
        let conn = connect(path)?;
        let (stop, stopped) = std::sync::mpsc::channel();
        let behind = Arc::new(AtomicBool::new(false));
        let flag = behind.clone();
        let thread = std::thread::Builder::new()
            .name("specc-state-checkpoint".into())
            .spawn(move || run(&conn, &stopped, &flag))
            .ok()?;
        Some(Checkpointer {
            stop: Some(stop),
            thread: Some(thread),
            behind,
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take()); // disconnects: the thread ends at its next look
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The checkpointer's own connection (WAL mode is the writer's and persists in the file).
fn connect(path: &Path) -> Option<Connection> {
    let conn = Connection::open(path).ok()?;
    conn.busy_timeout(Duration::from_secs(30)).ok()?;
    conn.pragma_update(None, "synchronous", "NORMAL").ok()?;
    conn.pragma_update(None, "wal_autocheckpoint", 0).ok()?;
    Some(conn)
}

fn run(conn: &Connection, stopped: &Receiver<()>, behind: &AtomicBool) {
    loop {
        match stopped.recv_timeout(INTERVAL) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        if look(conn).is_some_and(|log| log > CAP) {
            behind.store(true, Ordering::Relaxed);
        }
    }
}

/// One look at the WAL: passive checkpoints until one finds that no commit came in during
/// the pass before it (or [`CHASES`] of them). Returns the WAL's length then, which a
/// writer that never pauses keeps growing.
fn look(conn: &Connection) -> Option<i64> {
    let mut last = None;
    for _ in 0..CHASES {
        let (log, copied) = checkpoint(conn, "PASSIVE")?;
        if copied >= log && last == Some(log) {
            break;
        }
        last = Some(log);
    }
    last
}

/// The writer's part, after a commit, when the thread is behind: a checkpoint on the
/// writer's own connection, between its commits, so the next one starts the WAL again.
pub(crate) fn catch_up(conn: &Connection, behind: &AtomicBool) {
    if behind.swap(false, Ordering::Relaxed) {
        let _ = checkpoint(conn, "PASSIVE");
    }
}

/// One checkpoint in `mode`: the WAL's frames and how many of them are in the database
/// file (`None`: it failed, as when another connection holds the checkpoint lock).
fn checkpoint(conn: &Connection, mode: &str) -> Option<(i64, i64)> {
    let row = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, i64>(2)?,
        ))
    });
    match row {
        Ok((_busy, log, copied)) if log >= 0 => Some((log, copied)),
        Ok(_) => None, // not in WAL mode
        Err(e) => {
            tracing::debug!(error = %e, "state database checkpoint");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(path: &Path) -> u64 {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }

    /// A writer as [`crate::StateDb`] opens one, with a table of 4 KB rows.
    fn writer(path: &Path) -> Connection {
        let w = crate::sqlite::open(path).expect("open");
        w.pragma_update(None, "wal_autocheckpoint", 0).expect("off");
        w.execute_batch("CREATE TABLE t (x BLOB)").expect("table");
        w
    }

    fn insert(w: &Connection, n: usize) {
        for _ in 0..n {
            w.execute("INSERT INTO t VALUES (zeroblob(4000))", [])
                .expect("insert");
        }
    }

    /// Waits until the database file (not the WAL) holds at least `bytes`: only a
    /// checkpoint writes there.
    fn wait_for_file(path: &Path, bytes: u64) {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while size(path) < bytes {
            assert!(
                std::time::Instant::now() < deadline,
                "the database file holds {} bytes, not {bytes}",
                size(path)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The writer pauses, as a build does between its commits: the checkpoint that
        // wrote the last page finishes in the pause.
        std::thread::sleep(INTERVAL * 3);
    }

    #[test]
    fn the_thread_checkpoints_and_the_wal_starts_again() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.db");
        let wal = dir.path().join("s.db-wal");
        let w = writer(&path);
        let _ck = Checkpointer::start(&path).expect("started");
        insert(&w, 300);
        wait_for_file(&path, 300 * 4000);
        let first = size(&wal);
        // Four more rounds: each is checkpointed and the WAL starts again from its
        // beginning, so the WAL file stays the size of one round, not five.
        for round in 2..=5 {
            insert(&w, 300);
            wait_for_file(&path, round * 300 * 4000);
        }
        assert!(first > 300 * 4000, "the first round's WAL: {first} bytes");
        assert!(
            size(&wal) < 2 * first,
            "the WAL grew to {} bytes",
            size(&wal)
        );
    }

    #[test]
    fn without_it_the_writer_does_not_checkpoint() {
        // The control for the test above: the database file grows only by checkpoints.
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.db");
        let w = writer(&path);
        insert(&w, 300);
        std::thread::sleep(INTERVAL * 3);
        assert!(size(&path) < 100_000, "{} bytes", size(&path));
    }

    /// The WAL's frames after 500 commits, the writer's catch-up (with the thread behind
    /// or not), and one more commit.
    fn frames_after_catch_up(behind: bool) -> i64 {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.db");
        let w = writer(&path);
        insert(&w, 500);
        catch_up(&w, &AtomicBool::new(behind));
        insert(&w, 1);
        let reader = Connection::open(&path).expect("reader");
        let (log, _) = checkpoint(&reader, "PASSIVE").expect("a WAL");
        log
    }

    #[test]
    fn a_writer_told_the_thread_is_behind_checkpoints_and_the_wal_starts_again() {
        let caught_up = frames_after_catch_up(true);
        assert!(caught_up < 10, "{caught_up} frames");
        let control = frames_after_catch_up(false);
        assert!(control > 500, "{control} frames");
    }

    #[test]
    fn dropping_it_stops_the_thread() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.db");
        let _w = writer(&path);
        let ck = Checkpointer::start(&path).expect("started");
        let started = std::time::Instant::now();
        drop(ck);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
