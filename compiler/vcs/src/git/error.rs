//! One error for specc's git work in a person's repository.

use super::adopt::AdoptError;
use super::import::ImportError;
use super::out_dir::OutDirError;

/// Why specc's git work in a person's repository stopped: one of the three operations'
/// own errors, each carrying its cause.
#[derive(Debug)]
pub enum GitError {
    OutDir(OutDirError),
    Import(ImportError),
    Adopt(AdoptError),
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GitError::OutDir(e) => e.fmt(f),
            GitError::Import(e) => e.fmt(f),
            GitError::Adopt(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for GitError {}

impl From<OutDirError> for GitError {
    fn from(e: OutDirError) -> Self {
        GitError::OutDir(e)
    }
}

impl From<ImportError> for GitError {
    fn from(e: ImportError) -> Self {
        GitError::Import(e)
    }
}

impl From<AdoptError> for GitError {
    fn from(e: AdoptError) -> Self {
        GitError::Adopt(e)
    }
}
