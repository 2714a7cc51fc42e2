//! Why a build session could not open: one variant per cause, each carrying it. The driver
//! gives each its diagnostic code, help and exit status (`command_error.rs`); the text here
//! is the diagnostic's message.
//! design: project.library

use std::path::PathBuf;

use crate::config::ConfigError;

#[derive(Debug)]
pub enum BuildError {
    /// specc.toml is missing, unreadable or refused (E0406).
    Config(ConfigError),
    /// An adopted repository is not on `main` (E0403).
    NotOnMain { out: PathBuf },
    /// `out/` may not be written, or a person's commits in it could not be imported, or an
    /// adopted repository's snapshot could not be taken (E0403: nothing was overwritten).
    Git(specc_vcs::git::GitError),
    /// No async runtime could be made.
    Runtime(std::io::Error),
    /// Live models would run their commands with partial confinement, and specc.toml does
    /// not allow it: what is missing, in words (E0404).
    WeakerSandbox { missing: String },
    /// Another build holds the state directory's lock.
    Locked { state: PathBuf, lock: PathBuf },
    /// The lock file could not be made or taken.
    Lock {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `.specc/state.db` could not be opened.
    State(specc_llm::LlmError),
    /// The PostgreSQL state database could not be reached or used.
    Postgres(specc_state::StateError),
    /// The PostgreSQL state database's ledger could not be opened.
    PostgresLedger(specc_llm::LlmError),
    /// Another build or serve holds the PostgreSQL state database.
    PostgresBusy,
    /// The journal could not be opened, or its run started or resumed.
    Journal(specc_state::JournalError),
    /// The VCS store in `.specc/vcs` could not be opened.
    Store(std::io::Error),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Config(e) => e.fmt(f),
            BuildError::NotOnMain { out } => write!(
                f,
                "the adopted repository {} is not on branch `main`, which specc builds on and checks out after its export; switch to `main` (or rename yours), then build",
                out.display()
            ),
            BuildError::Git(e) => e.fmt(f),
            BuildError::Runtime(e) => write!(f, "no async runtime: {e}"),
            BuildError::WeakerSandbox { missing } => write!(
                f,
                "the full sandbox is not available here ({missing}), and this build would run live models' commands"
            ),
            BuildError::Locked { state, lock } => write!(
                f,
                "another specc build is running on {} (it holds {}); wait for it to end",
                state.display(),
                lock.display()
            ),
            BuildError::Lock { path, error } => write!(f, "{}: {error}", path.display()),
            BuildError::State(e) => write!(f, "the state database: {e}"),
            BuildError::Postgres(e) => write!(f, "the state database (PostgreSQL): {e}"),
            BuildError::PostgresLedger(e) => write!(f, "the state database (PostgreSQL): {e}"),
            BuildError::PostgresBusy => write!(
                f,
                "another specc build or serve is using this PostgreSQL state database; wait for it to end"
            ),
            BuildError::Journal(e) => e.fmt(f),
            BuildError::Store(e) => write!(f, "the VCS store in .specc/vcs: {e}"),
        }
    }
}

impl std::error::Error for BuildError {}

impl From<ConfigError> for BuildError {
    fn from(e: ConfigError) -> Self {
        BuildError::Config(e)
    }
}

impl From<specc_vcs::git::GitError> for BuildError {
    fn from(e: specc_vcs::git::GitError) -> Self {
        BuildError::Git(e)
    }
}

impl From<specc_state::JournalError> for BuildError {
    fn from(e: specc_state::JournalError) -> Self {
        BuildError::Journal(e)
    }
}
