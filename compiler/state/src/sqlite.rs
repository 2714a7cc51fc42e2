//! The SQLite backend's connections: the state database's file opened as every writer of it
//! must open it, or opened to read what is there without changing anything.
//! design: state.backends

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use crate::error::StateError;

/// A connection to the state database at `path` (made, with its directory, if missing),
/// set up as every writer of it must be: WAL, so readers never block the writer;
/// synchronous=NORMAL, so a committed write survives `kill -9` (it is in the WAL, which the
/// operating system holds) without an fsync per transaction — a power cut may roll back
/// the last transactions, never corrupt the database; a busy timeout for the other
/// connections of the process. The ledger and the build journal both write through it.
/// design: llm.ledger
pub fn open(path: &Path) -> std::io::Result<Connection> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let setup = || -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        conn.busy_timeout(Duration::from_secs(30))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(conn)
    };
    setup().map_err(std::io::Error::other)
}

/// Opens an existing state database to read it, changing nothing: no tables are made and
/// no journal mode is set. A file without table `marker` is not a state database of the
/// kind the caller reads: an error.
pub fn open_existing(path: &Path, marker: &str) -> Result<Connection, StateError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let tables: i64 = conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [marker],
        |r| r.get(0),
    )?;
    if tables == 0 {
        return Err(StateError::Open(format!(
            "not a specc state database (no {marker} table)"
        )));
    }
    Ok(conn)
}

/// Opens the state database at `path` read-only (a reader beside a running build: WAL lets
/// it in), with a short busy timeout.
pub fn open_read_only(path: &Path) -> Result<Connection, StateError> {
    let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    c.busy_timeout(Duration::from_secs(5))?;
    Ok(c)
}
