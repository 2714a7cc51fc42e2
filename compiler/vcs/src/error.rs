//! Why a read of the store had no answer (design: vcs.store).

use crate::object::ObjectId;

/// Why [`crate::Repo`] could not answer a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// The store stopped (its integrator ended, e.g. after an fsync error) or the handle's
    /// answer was dropped because the bytes it needed were unreadable.
    Stopped,
    /// The commit is not in the store, or one of the objects it names cannot be read.
    Missing(ObjectId),
    /// The commit has no file at the path (only [`crate::Repo::read`] answers this; the
    /// other reads report an absent file as `None` in their answer).
    NoFile { commit: ObjectId, path: String },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Stopped => f.write_str("the store stopped answering"),
            ReadError::Missing(id) => write!(
                f,
                "commit {} is not in the store or cannot be read",
                id.hex()
            ),
            ReadError::NoFile { commit, path } => {
                write!(f, "commit {} has no file `{path}`", commit.hex())
            }
        }
    }
}

impl std::error::Error for ReadError {}

impl From<ReadError> for std::io::Error {
    fn from(e: ReadError) -> Self {
        let kind = match e {
            ReadError::Stopped => std::io::ErrorKind::BrokenPipe,
            ReadError::Missing(_) | ReadError::NoFile { .. } => std::io::ErrorKind::NotFound,
        };
        std::io::Error::new(kind, e)
    }
}
