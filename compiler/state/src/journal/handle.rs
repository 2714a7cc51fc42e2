//! The journal's handle on the state database: opening it (the journal's tables migrated),
//! and the three ways its operations reach the database: a queued write, a read after
//! the queue is committed, a read of what is committed.
//! design: runtime.journal

use std::path::Path;
use std::sync::Arc;

use crate::error::StateError;
use crate::schema::migrate;
use crate::sql::Sql;
use crate::writer::StateDb;

/// The journal could not be written or read.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalError {
    /// The state database failed (see [`StateError`]).
    State(StateError),
    /// A journaled value does not decode: the journal is damaged or from another version.
    Damaged(String),
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalError::State(e) => write!(f, "the build journal: {e}"),
            JournalError::Damaged(what) => write!(f, "the build journal is damaged: {what}"),
        }
    }
}

impl std::error::Error for JournalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JournalError::State(e) => Some(e),
            JournalError::Damaged(_) => None,
        }
    }
}

impl From<StateError> for JournalError {
    fn from(e: StateError) -> JournalError {
        JournalError::State(e)
    }
}

/// The tasks with an attempt in one run (`resume.rs`): those journaled when it was first
/// asked (this process's queued attempts committed first), and every attempt this process
/// started since (design: perf.orchestration). It assumes this process is the run's only
/// writer, which the state directory's lock ensures; workers sharing a run (state.leases)
/// must not rely on it.
#[derive(Debug)]
pub(crate) struct Attempted {
    pub(crate) run: String,
    pub(crate) tasks: std::collections::HashSet<String>,
}

pub struct Journal {
    pub(crate) db: Arc<StateDb>,
    /// The tasks with an attempt in one run (`resume.rs`).
    pub(crate) attempted: std::sync::Mutex<Option<Attempted>>,
    /// Applied to every step body and context before it is written: the build's secret
    /// redaction (design: secrets.redaction).
    pub(crate) screen: Option<Screen>,
}

/// What every body the journal writes passes through.
pub type Screen = Arc<dyn Fn(&mut serde_json::Value) + Send + Sync>;

impl Journal {
    /// Opens (creating) the journal's tables in the state database at `path`.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let db = StateDb::open(path).map_err(|e| {
            JournalError::State(StateError::Open(format!("{}: {e}", path.display())))
        })?;
        Journal::on(Arc::new(db))
    }

    /// The journal on a state database another writer shares (the ledger's, so that one
    /// commit takes both).
    pub fn on(db: Arc<StateDb>) -> Result<Journal, JournalError> {
        db.now(|c| migrate(c, &super::tables::JOURNAL))
            .map_err(JournalError::State)?;
        Ok(Journal {
            db,
            attempted: Default::default(),
            screen: None,
        })
    }

    /// The journal with every body it writes passed through `screen` first.
    pub fn screened(mut self, screen: Screen) -> Journal {
        self.screen = Some(screen);
        self
    }

    /// `text` as it is written: screened, when the journal screens.
    pub(crate) fn screen_text(&self, text: Option<&str>) -> Option<String> {
        let text = text?;
        match &self.screen {
            Some(screen) => {
                let mut v = serde_json::Value::String(text.to_owned());
                screen(&mut v);
                Some(v.as_str().unwrap_or(text).to_owned())
            }
            None => Some(text.to_owned()),
        }
    }

    /// `body` as it is written: screened, when the journal screens.
    pub(crate) fn screen_body<'b>(
        &self,
        body: &'b serde_json::Value,
    ) -> std::borrow::Cow<'b, serde_json::Value> {
        match &self.screen {
            Some(screen) => {
                let mut b = body.clone();
                screen(&mut b);
                std::borrow::Cow::Owned(b)
            }
            None => std::borrow::Cow::Borrowed(body),
        }
    }

    /// Runs `f` after committing every queued write (a read that must see them).
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, JournalError> {
        self.db.now(f).map_err(JournalError::State)
    }

    /// Runs `f` on what is committed (a read of what earlier processes wrote).
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, JournalError> {
        self.db.read(f).map_err(JournalError::State)
    }

    /// Queues a write; it is committed with the next batch ([`Journal::durable`]). Refused
    /// once the database lost a batch: the build must stop.
    pub(crate) fn defer(
        &self,
        w: impl FnOnce(&mut dyn Sql) -> Result<(), StateError> + Send + 'static,
    ) -> Result<(), JournalError> {
        self.db.defer(Box::new(w)).map_err(JournalError::State)
    }

    /// Returns once every write queued so far is committed.
    pub async fn durable(&self) -> Result<(), JournalError> {
        self.db.durable().await.map_err(JournalError::State)
    }

    /// Commits every queued write now.
    pub fn commit(&self) -> Result<(), JournalError> {
        self.db.commit().map_err(JournalError::State)
    }
}
