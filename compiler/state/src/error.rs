//! Why a state database operation failed, on either backend.
//! design: runtime.errors

/// Why a state database operation failed.
#[derive(Debug, Clone)]
pub enum StateError {
    /// The file could not be opened, or is not a state database this version can use.
    Open(String),
    /// SQLite refused the statement or its transaction (a full disk, a lock held past the
    /// busy timeout, a damaged file, a schema this version does not know).
    Sqlite(std::sync::Arc<rusqlite::Error>),
    /// PostgreSQL refused the statement or its transaction, or the connection failed.
    Postgres(std::sync::Arc<tokio_postgres::Error>),
    /// A batch of this process's writes was lost (SQLite's failure, quoted): returned to the
    /// call whose commit failed and to every write after it, since nothing after it is
    /// durable.
    Lost(String),
    /// A thread panicked while it held the database: a bug.
    Poisoned,
    /// A stored value is not what this version reads (a damaged or hand-edited database).
    Decode(String),
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateError::Open(why) => write!(f, "{why}"),
            StateError::Sqlite(e) => write!(f, "{e}"),
            StateError::Postgres(e) => write!(f, "PostgreSQL: {e}"),
            StateError::Lost(why) => write!(f, "a batch of writes was lost: {why}"),
            StateError::Poisoned => write!(f, "its lock is poisoned"),
            StateError::Decode(why) => write!(f, "an unexpected stored value: {why}"),
        }
    }
}

impl PartialEq for StateError {
    /// Same kind and same message (the drivers' errors compare by their text).
    fn eq(&self, other: &StateError) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StateError::Sqlite(e) => Some(&**e),
            StateError::Postgres(e) => Some(&**e),
            _ => None,
        }
    }
}

impl From<rusqlite::Error> for StateError {
    fn from(e: rusqlite::Error) -> StateError {
        StateError::Sqlite(std::sync::Arc::new(e))
    }
}

impl From<tokio_postgres::Error> for StateError {
    fn from(e: tokio_postgres::Error) -> StateError {
        StateError::Postgres(std::sync::Arc::new(e))
    }
}

impl From<deadpool_postgres::PoolError> for StateError {
    fn from(e: deadpool_postgres::PoolError) -> StateError {
        StateError::Open(format!("no connection from the pool: {e}"))
    }
}
