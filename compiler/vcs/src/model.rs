//! What the VCS's users hand it and get back: a submission and its changes, the outcome of
//! one (committed, a conflict, a refusal), a repository's options and statistics, and the
//! files of a commit. `lib.rs` is the facade over these and the integrator's channel.

use serde::{Deserialize, Serialize};

use crate::object::ObjectId;
use crate::wire;

/// One path of a submission: what the writer saw there, and what it wants there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    /// The blob the writer's edit is based on; `None` if the path was absent.
    pub expected: Option<ObjectId>,
    /// The new content; `None` deletes the path.
    #[serde(with = "wire::opt_bytes")]
    pub new: Option<Vec<u8>>,
    /// Whether the file is executable (mode 755, else 644); ignored when `new` is `None`.
    /// Against a moved head, a mode that differs from the base's wins; one equal to the
    /// base's keeps the head's mode. Changing only the mode is a change like any other.
    pub executable: bool,
}

/// A commit request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Submission {
    /// The commit the writer worked from.
    pub base: ObjectId,
    pub changes: Vec<Change>,
    pub message: String,
    pub task: String,
    /// Re-submitting a key returns the first outcome and commits nothing twice. Empty: none.
    pub idempotency_key: String,
}

/// Both sides of a path changed since the writer's base, and their edits overlap.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    pub path: String,
    #[serde(with = "wire::opt_bytes")]
    pub base: Option<Vec<u8>>,
    /// What the branch head has.
    #[serde(with = "wire::opt_bytes")]
    pub head: Option<Vec<u8>>,
    /// What the writer submitted.
    #[serde(with = "wire::opt_bytes")]
    pub submitted: Option<Vec<u8>>,
    /// The message of the commit that last changed the path (the other side's intent).
    pub head_intent: Option<String>,
    /// The task of that commit, when this process saw it.
    pub head_task: Option<String>,
    /// The executable bit the writer set when it differs from its base's (a mode change,
    /// which wins over the head's mode); `None` when the writer kept the base's mode.
    pub executable_change: Option<bool>,
}

/// A file's lines as the line budget counts them: its newlines, plus one for a last line
/// without its newline.
pub fn line_count(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count() + usize::from(!b.is_empty() && !b.ends_with(b"\n"))
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Refusal {
    /// The change grows a file past the line budget (or grows a flagged file).
    Megafile {
        path: String,
        lines: usize,
        budget: usize,
        already_flagged: bool,
    },
    /// The base is not a commit of this branch.
    UnknownBase,
    /// The store stopped (a write or fsync failed, or it was closed), or could not be read:
    /// nothing was committed.
    Unavailable,
    /// A change's `expected` blob is not what the base commit has at that path.
    ExpectedMismatch { path: String },
    /// Not a relative, normalised, printable path (no empty, `.`, `..` or `.git` parts, no
    /// control characters, quotes or backslashes), or content over 2 GiB.
    InvalidPath { path: String },
    /// The path is a directory at the head, or one of its parents is a file.
    PathCollision { path: String },
}

/// What became of a submission. Returned only once it is durable.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    Committed {
        id: ObjectId,
        seq: u64,
        /// Paths that needed a 3-way merge.
        merged: Vec<String>,
    },
    Conflict(Conflict),
    Refused(Refusal),
}

/// Settings of a repository.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The megafile guard's line budget.
    pub line_budget: usize,
    /// The most submissions one batch takes.
    pub max_batch: usize,
    /// The most bytes of file contents kept in memory; the head's other files are read from
    /// the log when needed (design: vcs.memory).
    pub head_cache_bytes: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            line_budget: 600,
            max_batch: 1024,
            head_cache_bytes: 64 << 20,
        }
    }
}

/// Counters for reports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub head: Option<ObjectId>,
    pub seq: u64,
    pub files: usize,
    pub flagged: Vec<String>,
    /// Conflicts per file, hottest first.
    pub conflicts: Vec<(String, u64)>,
    /// Batches made durable (fsyncs) since open.
    pub batches: u64,
}

/// One file of a commit.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileEntry {
    pub path: String,
    pub bytes: Vec<u8>,
    /// Mode 755 (git's 100755) rather than 644.
    pub executable: bool,
}

/// Every file of a commit, sorted by path.
pub type FileList = Vec<FileEntry>;

/// A file at the head: its blob, content and mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeadFile {
    pub blob: ObjectId,
    pub bytes: std::sync::Arc<Vec<u8>>,
    pub executable: bool,
}
