//! Reading a PostgreSQL state database: where a command takes a state database's path
//! (`specc cost --state`, `specc report --state`) a `postgres://` URL names one, and
//! `specc status` reads the configured one; with no migration and a short connect timeout
//! (design: state.backends).

use std::path::{Path, PathBuf};
use std::time::Duration;

use specc_state::{JournalError, StateDb, StateError};

use specc_project::config::StateUrlError;

/// Why a command could not read a build's state.
#[derive(Debug)]
pub(in crate::commands) enum ReadError {
    /// The state URL specc.toml or the environment gives is refused.
    Url(StateUrlError),
    /// No state database where a build would have made one.
    NoBuildState(PathBuf),
    /// No state database at the path a command was given.
    NoDatabase(PathBuf),
    /// The SQLite state database at the path could not be read (its journal).
    Journal { path: PathBuf, error: JournalError },
    /// The SQLite state database at the path could not be read.
    Sqlite { path: PathBuf, error: StateError },
    /// The PostgreSQL state database could not be reached or read.
    Postgres(StateError),
    /// The PostgreSQL state database (named by `label`) could not be read.
    Labelled { label: String, error: StateError },
    /// The task leases on PostgreSQL could not be read.
    Leases(StateError),
    /// PostgreSQL did not answer the leases' read in time.
    Timeout,
    /// No async runtime for the read.
    Runtime(std::io::Error),
    /// No run of the name `specc report --run` gives has a series.
    NoRun(String),
    /// No run of the state databases (listed) has a series.
    NoSeries(String),
    /// The ledger could not be read.
    Ledger(Box<specc_llm::LlmError>),
    /// The ledger at the path could not be read.
    LedgerAt {
        path: PathBuf,
        error: Box<specc_llm::LlmError>,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Url(e) => write!(f, "{e}"),
            ReadError::NoBuildState(p) => write!(f, "no build state at `{}`", p.display()),
            ReadError::NoDatabase(p) => write!(f, "no state database at {}", p.display()),
            ReadError::Journal { path, error } => write!(f, "`{}`: {error}", path.display()),
            ReadError::Sqlite { path, error } => write!(f, "`{}`: {error}", path.display()),
            ReadError::Postgres(e) => write!(f, "the state database (PostgreSQL): {e}"),
            ReadError::Labelled { label, error } => write!(f, "{label}: {error}"),
            ReadError::Leases(e) => write!(f, "PostgreSQL: {e}"),
            ReadError::Timeout => write!(f, "PostgreSQL did not answer within 10 s"),
            ReadError::Runtime(e) => write!(f, "no async runtime: {e}"),
            ReadError::NoRun(run) => write!(f, "no run `{run}` with an eval series"),
            ReadError::NoSeries(dbs) => write!(
                f,
                "no run in {dbs} has an eval series: a build records one when specc.toml has [eval]"
            ),
            ReadError::Ledger(e) => write!(f, "{e}"),
            ReadError::LedgerAt { path, error } => write!(f, "`{}`: {error}", path.display()),
        }
    }
}

/// The URL `state` is, if it names PostgreSQL rather than a file.
pub(in crate::commands) fn of(state: &Path) -> Option<&str> {
    state
        .to_str()
        .filter(|s| s.starts_with("postgres://") || s.starts_with("postgresql://"))
}

/// A reader of the PostgreSQL state database at `url` (`PGPASSWORD` for a URL without a
/// password).
pub(in crate::commands) fn reader(url: &str) -> Result<StateDb, ReadError> {
    let password = specc_project::config::pg_password();
    StateDb::read_postgres(url, password.as_deref(), Duration::from_secs(5))
        .map_err(ReadError::Postgres)
}

/// `url` as a legend may show it: its host and database, never its user or password.
pub(in crate::commands) fn label(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('?').next().unwrap_or(rest).to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_label_shows_no_credentials() {
        assert_eq!(
            super::label("postgres://me:secret@db.example:5432/specc?sslmode=disable"),
            "db.example:5432/specc"
        );
        assert_eq!(super::of("state.db".as_ref()), None);
        assert!(super::of("postgresql://h/db".as_ref()).is_some());
    }
}
