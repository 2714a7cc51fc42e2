//! What one attempt's tools did to its checkout, and what the checkout still owes its base:
//! a leased slot is moved to its base lazily (design: runtime.lazy-checkouts). Its
//! directory may still hold an older commit at some paths (`behind`, with the base's file
//! for each); the tools that need the directory as the base has it (every tool but a
//! whole-file `write` elsewhere, a command, a check) bring it up to date first
//! ([`Tracked::ready`]), and a slot whose tasks never need it never writes those files.
//! design: runtime.workspace

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use specc_vcs::FileAt;

use super::files::apply;

/// The paths where a checkout's directory differs from its base, each with the base's
/// file there (`None`: the base has none), and how many bytes those files hold.
#[derive(Clone, Debug, Default)]
pub(super) struct Behind {
    files: BTreeMap<String, FileAt>,
    bytes: usize,
}

impl Behind {
    fn size(file: &FileAt) -> usize {
        file.as_ref().map_or(0, |(b, _)| b.len())
    }

    pub(super) fn insert(&mut self, path: String, file: FileAt) {
        self.bytes += Behind::size(&file);
        if let Some(old) = self.files.insert(path, file) {
            self.bytes -= Behind::size(&old);
        }
    }

    pub(super) fn remove(&mut self, path: &str) {
        if let Some(old) = self.files.remove(path) {
            self.bytes -= Behind::size(&old);
        }
    }

    pub(super) fn get(&self, path: &str) -> Option<&FileAt> {
        self.files.get(path)
    }

    fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Whether a path under directory `dir` is owed.
    fn under(&self, dir: &str) -> bool {
        let prefix = format!("{dir}/");
        self.files
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .next()
            .is_some_and(|(p, _)| p.starts_with(&prefix))
    }

    fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// How many files, and how many bytes of them.
    pub(super) fn owed(&self) -> (usize, usize) {
        (self.files.len(), self.bytes)
    }
}

/// The paths the tools wrote (or tried to), with what they know of each.
pub(super) type Wrote = BTreeMap<String, Touched>;

/// What the tools know of one path they wrote (design: perf.orchestration).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Touched {
    /// What is there, if a tool wrote it whole and that write succeeded (`None`: read the
    /// checkout to know).
    pub now: Option<Written>,
    /// What the base holds there, if it was read from the checkout before the first write
    /// (`None`: ask the VCS).
    pub before: Option<FileAt>,
}

/// A whole file a tool wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    pub bytes: Arc<Vec<u8>>,
    pub executable: bool,
}

impl Written {
    /// Whether this is `file`.
    pub(super) fn is(&self, file: &FileAt) -> bool {
        file.as_ref()
            .is_some_and(|(b, x)| *self.bytes == *b && self.executable == *x)
    }
}

/// What the tools of one attempt did to its checkout.
#[derive(Default)]
pub struct Tracked {
    inner: Mutex<TrackedState>,
}

impl std::fmt::Debug for Tracked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tracked")
    }
}

/// Run once a move of the files that was abandoned has ended: the slot's way back to the
/// pool.
type Orphan = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct TrackedState {
    wrote: Wrote,
    /// A command ran: anything in the checkout may have changed.
    ran_command: bool,
    /// What the directory still owes the base and the tools' writes kept in memory
    /// ([`Tracked::write_later`]); a path in `wrote` only as such a write (a tool that
    /// writes an owed path brings the directory up to date first).
    behind: Behind,
    /// The directory's content is not known: bringing it up to date failed.
    lost: bool,
    /// The files are being brought up to date on a blocking thread.
    moving: bool,
    /// The lease ended while they were: what gives the slot back once the move ends.
    orphan: Option<Orphan>,
}

/// What a slot's directory holds besides its commit when its lease ends: the paths the
/// tools wrote, and what it still owes the commit.
#[derive(Clone, Debug)]
pub(super) struct Kept {
    pub wrote: Wrote,
    pub behind: Behind,
}

impl TrackedState {
    /// See [`Tracked::owes_on_path`].
    fn owes_on_path(&self, rel: &str) -> bool {
        if self.lost {
            return true;
        }
        if self.behind.is_empty() {
            return false;
        }
        if self.behind.under(rel) {
            return true;
        }
        let mut at = 0;
        loop {
            let end = rel[at..].find('/').map_or(rel.len(), |i| at + i);
            if self.behind.contains(&rel[..end]) {
                return true;
            }
            if end == rel.len() {
                return false;
            }
            at = end + 1;
        }
    }
}

impl Tracked {
    fn lock(&self) -> Option<MutexGuard<'_, TrackedState>> {
        self.inner.lock().ok()
    }

    /// A lease's tracker whose directory owes the base `behind`.
    pub(super) fn behind(behind: Behind) -> Tracked {
        Tracked {
            inner: Mutex::new(TrackedState {
                behind,
                ..TrackedState::default()
            }),
        }
    }

    /// A tool is about to write `path` (relative). `true` the first time.
    pub fn wrote(&self, path: &str) -> bool {
        let Some(mut t) = self.lock() else {
            return false;
        };
        let first = !t.wrote.contains_key(path);
        t.wrote.entry(path.to_owned()).or_default().now = None;
        first
    }

    /// A tool wrote all of `path` (after [`Tracked::wrote`]): its bytes and mode are known
    /// without reading the file.
    pub fn wrote_whole(&self, path: &str, bytes: &[u8], executable: bool) {
        if let Some(mut t) = self.lock() {
            let written = Written {
                bytes: Arc::new(bytes.to_vec()),
                executable,
            };
            t.wrote.entry(path.to_owned()).or_default().now = Some(written);
        }
    }

    /// What the base holds at `path`, read from the checkout before the first write.
    pub fn before(&self, path: &str, before: FileAt) {
        if let Some(mut t) = self.lock() {
            t.wrote.entry(path.to_owned()).or_default().before = Some(before);
        }
    }

    /// A command is about to run in the checkout.
    pub fn ran_command(&self) {
        if let Some(mut t) = self.lock() {
            t.ran_command = true;
        }
    }

    /// Whether a command ran (or is about to) in the checkout.
    pub fn ran(&self) -> bool {
        self.lock().is_none_or(|t| t.ran_command)
    }

    /// The paths written, if they are all that changed (no command ran, and the directory
    /// is where it should be).
    pub fn known(&self) -> Option<Wrote> {
        let t = self.lock()?;
        (!t.ran_command && !t.lost).then(|| t.wrote.clone())
    }

    /// Whether bringing the directory up to date failed: what it holds is not known, and
    /// nothing may be taken from it.
    pub fn lost(&self) -> bool {
        self.lock().is_none_or(|t| t.lost)
    }

    /// The base's file at `rel` if the directory does not hold it yet (`None`: the
    /// directory holds the base's there).
    pub fn owed(&self, rel: &str) -> Option<FileAt> {
        self.lock()?.behind.get(rel).cloned()
    }

    /// Whether writing `rel` straight into the directory would not be writing into the
    /// base: the directory owes the base `rel`, one of its parents or a path under it (the
    /// base, or the directory, has a directory there), or it was lost.
    pub fn owes_on_path(&self, rel: &str) -> bool {
        self.lock().is_none_or(|t| t.owes_on_path(rel))
    }

    /// A whole-file write of `rel` that the directory would take (the caller checked it),
    /// kept in memory instead: the directory owes it, as it owes the files others landed,
    /// until something needs the directory ([`Tracked::ready`]). `false` (write it into
    /// the directory) when the directory owes anything on the path, is being moved, or a
    /// command ran (design: runtime.lazy-checkouts).
    pub fn write_later(&self, rel: &str, bytes: &[u8], executable: bool) -> bool {
        let Some(mut t) = self.lock() else {
            return false;
        };
        if t.ran_command || t.moving || t.owes_on_path(rel) {
            return false;
        }
        let written = Written {
            bytes: Arc::new(bytes.to_vec()),
            executable,
        };
        t.wrote.entry(rel.to_owned()).or_default().now = Some(written);
        t.behind
            .insert(rel.to_owned(), Some((bytes.to_vec(), executable)));
        true
    }

    /// Brings the directory `dir` up to date with the base, on a blocking thread: this
    /// thread's other attempts go on meanwhile. A caller that gives up does not free the
    /// slot while its files are being written: the slot goes back once they are.
    pub async fn ready(self: &Arc<Self>, dir: &Path) -> std::io::Result<()> {
        let changes: Vec<(String, FileAt)> = {
            let Some(mut t) = self.lock() else {
                return Err(std::io::Error::other("the checkout's tracker is poisoned"));
            };
            if t.lost {
                return Err(std::io::Error::other(
                    "the checkout could not be brought up to date",
                ));
            }
            if t.moving {
                return Err(std::io::Error::other(
                    "the checkout is being brought up to date",
                ));
            }
            if t.behind.is_empty() {
                return Ok(());
            }
            t.moving = true;
            // In path order: a file removed before a directory is made where it was.
            std::mem::take(&mut t.behind).files.into_iter().collect()
        };
        let (tracked, at) = (self.clone(), dir.to_owned());
        tokio::task::spawn_blocking(move || {
            let written = apply(&at, &changes);
            let orphan = tracked.lock().and_then(|mut t| {
                t.moving = false;
                t.lost |= written.is_err();
                t.orphan.take()
            });
            if let Some(give_back) = orphan {
                give_back();
            }
            written
        })
        .await
        .map_err(std::io::Error::other)?
    }

    /// The lease ends: `give_back` gets what the directory holds (`None`: not known) now,
    /// or, if its files are being written, once they are (then as not known).
    pub(super) fn end(&self, give_back: impl FnOnce(Option<Kept>) + Send + 'static) {
        let Some(mut t) = self.lock() else {
            return give_back(None);
        };
        if t.moving {
            t.orphan = Some(Box::new(move || give_back(None)));
            return;
        }
        let held = (!t.ran_command && !t.lost).then(|| Kept {
            wrote: std::mem::take(&mut t.wrote),
            behind: std::mem::take(&mut t.behind),
        });
        drop(t);
        give_back(held);
    }
}
