//! Checkout slots: the attempts' working directories, reused so that moving one to a new
//! base costs what changed, not the tree. A slot remembers what it holds: a commit, plus
//! the paths specc's tools wrote since (the tools are the only writers while no command
//! runs); a slot in which a command ran, or one this process has not written, holds
//! something unknown and gets a full checkout. An attempt leases a slot, its tools record
//! what they write in the lease's `Tracked`, and the lease goes back to the pool when
//! dropped, however the attempt ended.
//! design: runtime.workspace

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use specc_vcs::object::ObjectId;
use specc_vcs::{FileAt, Repo};

use super::tree::KEPT;

/// What the tools of one attempt did to its checkout.
#[derive(Debug, Default)]
pub struct Tracked {
    inner: Mutex<TrackedState>,
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

#[derive(Clone, Debug, Default)]
struct TrackedState {
    wrote: Wrote,
    /// A command ran: anything in the checkout may have changed.
    ran_command: bool,
}

impl Tracked {
    /// A tool is about to write `path` (relative). `true` the first time.
    pub fn wrote(&self, path: &str) -> bool {
        let Ok(mut t) = self.inner.lock() else {
            return false;
        };
        let first = !t.wrote.contains_key(path);
        t.wrote.entry(path.to_owned()).or_default().now = None;
        first
    }

    /// A tool wrote all of `path` (after [`Tracked::wrote`]): its bytes and mode are known
    /// without reading the file.
    pub fn wrote_whole(&self, path: &str, bytes: &[u8], executable: bool) {
        if let Ok(mut t) = self.inner.lock() {
            let written = Written {
                bytes: Arc::new(bytes.to_vec()),
                executable,
            };
            t.wrote.entry(path.to_owned()).or_default().now = Some(written);
        }
    }

    /// What the base holds at `path`, read from the checkout before the first write.
    pub fn before(&self, path: &str, before: FileAt) {
        if let Ok(mut t) = self.inner.lock() {
            t.wrote.entry(path.to_owned()).or_default().before = Some(before);
        }
    }

    /// A command is about to run in the checkout.
    pub fn ran_command(&self) {
        if let Ok(mut t) = self.inner.lock() {
            t.ran_command = true;
        }
    }

    /// Whether a command ran (or is about to) in the checkout.
    pub fn ran(&self) -> bool {
        self.inner.lock().map_or(true, |t| t.ran_command)
    }

    /// The paths written, if they are all that changed (no command ran).
    pub fn known(&self) -> Option<Wrote> {
        let t = self.inner.lock().ok()?;
        (!t.ran_command).then(|| t.wrote.clone())
    }
}

/// What a free slot's directory holds.
#[derive(Clone, Debug)]
enum Held {
    /// Not known (new to this process, or a command ran in it).
    Unknown,
    /// `base`, except the `wrote` paths.
    Commit { base: ObjectId, wrote: Wrote },
}

/// The pool of slots under `.specc/work/`.
pub struct Slots {
    work: PathBuf,
    free: Arc<Mutex<Vec<(usize, Held)>>>,
    made: Mutex<usize>,
}

/// A slot being brought to its base: back to the pool, holding something unknown, if that
/// ends early (a failure, or the lease's caller gone). It goes with the files' blocking
/// write, so the slot is not handed out while that write still runs.
struct Pending {
    free: Arc<Mutex<Vec<(usize, Held)>>>,
    id: usize,
    armed: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.armed
            && let Ok(mut free) = self.free.lock()
        {
            free.push((self.id, Held::Unknown));
        }
    }
}

impl Slots {
    pub fn new(work: PathBuf) -> Slots {
        Slots {
            work,
            free: Arc::new(Mutex::new(Vec::new())),
            made: Mutex::new(0),
        }
    }

    /// A slot holding exactly `base` (outside `KEPT`), for one attempt or re-check.
    pub async fn lease(&self, repo: &Repo, base: ObjectId) -> std::io::Result<Lease<'_>> {
        let taken = self.free.lock().ok().and_then(|mut free| {
            // A slot already at `base` first, then the most recently freed.
            let at = free
                .iter()
                .rposition(|(_, h)| matches!(h, Held::Commit { base: b, .. } if *b == base))
                .or_else(|| free.len().checked_sub(1))?;
            Some(free.swap_remove(at))
        });
        let (id, held) = match taken {
            Some(t) => t,
            None => {
                let mut made = self
                    .made
                    .lock()
                    .map_err(|_| std::io::Error::other("slots"))?;
                *made += 1;
                (*made, Held::Unknown)
            }
        };
        let dir = self.work.join(format!("slot-{id}"));
        let pending = Pending {
            free: self.free.clone(),
            id,
            armed: true,
        };
        std::fs::create_dir_all(&dir)?;
        let mut pending = match held {
            Held::Commit { base: from, wrote } => {
                let mut changes = repo.changes(from, base).await.ok_or_else(|| {
                    std::io::Error::other("the VCS does not know the slot's commit")
                })?;
                // What the last tools wrote and the commits did not change goes back to `base`.
                let changed: BTreeSet<String> = changes.iter().map(|(p, _)| p.clone()).collect();
                // A file the last tools wrote whole as it now lands is there already.
                changes.retain(|(p, file)| {
                    match (wrote.get(p).and_then(|t| t.now.as_ref()), file) {
                        (Some(w), Some((bytes, x))) => *w.bytes != *bytes || w.executable != *x,
                        _ => true,
                    }
                });
                for p in wrote.keys().filter(|p| !changed.contains(*p)) {
                    let file = repo
                        .file(base, p)
                        .await
                        .ok_or_else(|| std::io::Error::other("the VCS does not know the base"))?;
                    changes.push((p.clone(), file));
                }
                // The files are written on a blocking thread: this thread's other attempts go
                // on meanwhile. The slot goes with the write (`Pending`), so a caller that
                // gives up does not free it while it is being written.
                let at = dir.clone();
                let (written, back) =
                    tokio::task::spawn_blocking(move || (apply(&at, &changes), pending))
                        .await
                        .map_err(std::io::Error::other)?;
                written?;
                back
            }
            Held::Unknown => {
                // The checkout writes on a blocking thread too: run as a task of its own that
                // keeps the slot until it is done, even if this caller gives up.
                let (repo, at) = (repo.clone(), dir.clone());
                let (written, back) =
                    tokio::spawn(async move { (repo.checkout(base, &at, KEPT).await, pending) })
                        .await
                        .map_err(std::io::Error::other)?;
                written?;
                back
            }
        };
        pending.armed = false;
        Ok(Lease {
            slots: self,
            id,
            dir,
            base,
            tracked: Arc::new(Tracked::default()),
        })
    }
}

/// One slot, leased: it goes back to the pool when dropped.
pub struct Lease<'a> {
    slots: &'a Slots,
    id: usize,
    pub dir: PathBuf,
    pub base: ObjectId,
    pub tracked: Arc<Tracked>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let held = match self.tracked.known() {
            Some(wrote) => Held::Commit {
                base: self.base,
                wrote,
            },
            None => Held::Unknown,
        };
        if let Ok(mut free) = self.slots.free.lock() {
            free.push((self.id, held));
        }
    }
}

/// Writes `changes` into the checkout at `dir`: each file with its mode (a link or anything
/// else in the way removed first, never written through), each removed path deleted with
/// the directories it leaves empty. A file already there is rewritten in place, its mode
/// changed only if it differs.
pub fn apply(dir: &Path, changes: &[(String, FileAt)]) -> std::io::Result<()> {
    for (path, file) in changes {
        let full = dir.join(path);
        match file {
            Some((bytes, executable)) => write_file(dir, &full, bytes, mode_of(*executable))?,
            None => {
                match std::fs::symlink_metadata(&full) {
                    Ok(m) if m.is_dir() => std::fs::remove_dir_all(&full)?,
                    Ok(_) => std::fs::remove_file(&full)?,
                    Err(_) => continue,
                }
                let mut at = full.parent();
                while let Some(p) = at.filter(|p| *p != dir) {
                    if std::fs::remove_dir(p).is_err() {
                        break; // not empty
                    }
                    at = p.parent();
                }
            }
        }
    }
    Ok(())
}

/// A file's mode in a checkout: 755 if executable, else 644.
pub(crate) fn mode_of(executable: bool) -> u32 {
    if executable { 0o755 } else { 0o644 }
}

/// Writes one file of a checkout. The common case costs one path lookup ([`open_regular`]);
/// anything else (a missing directory, a link, a directory or another kind of file in the
/// way) takes the careful path, which looks first.
/// design: perf.orchestration
fn write_file(dir: &Path, full: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let opened = match open_regular(full, mode) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match full.parent() {
            Some(parent) => {
                make_dirs(dir, parent)?;
                open_regular(full, mode)
            }
            None => Err(e),
        },
        other => other,
    };
    match opened {
        Ok(Some((f, meta))) => fill(f, &meta, bytes, mode),
        // A link, a directory, a FIFO or anything else in the way.
        Ok(None) | Err(_) => write_carefully(dir, full, bytes, mode),
    }
}

/// Opens `full` for writing as a regular file, created with `mode` (less the umask) if
/// missing, in one path lookup: a link is not followed (`O_NOFOLLOW`) and a FIFO cannot
/// block the open (`O_NONBLOCK`). `Ok(None)`: something other than a regular file is
/// there; `NotFound`: its directory is missing.
pub(crate) fn open_regular(
    full: &Path,
    mode: u32,
) -> std::io::Result<Option<(std::fs::File, std::fs::Metadata)>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(full);
    let f = match opened {
        Ok(f) => f,
        // A link (ELOOP), a directory (EISDIR), a FIFO nobody reads (ENXIO).
        Err(e)
            if e.raw_os_error()
                .is_some_and(|c| [libc::ELOOP, libc::EISDIR, libc::ENXIO].contains(&c)) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    Ok(meta.is_file().then_some((f, meta)))
}

/// Writes `bytes` into a file [`open_regular`] opened, then gives it `mode` if it has
/// another (a new file's mode went through the umask; an old file kept its own).
pub(crate) fn fill(
    mut f: std::fs::File,
    meta: &std::fs::Metadata,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<()> {
    use std::io::Write as _;
    f.write_all(bytes)?;
    if meta.permissions().mode() & 0o777 != mode {
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// [`write_file`] for when something may be in the way: whatever is not a regular file is
/// removed first, and the parent directories made.
fn write_carefully(dir: &Path, full: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write as _;
    let existing = match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_file() => Some(m.permissions().mode() & 0o777),
        Ok(m) if m.is_dir() => {
            std::fs::remove_dir_all(full)?;
            None
        }
        Ok(_) => {
            std::fs::remove_file(full)?;
            None
        }
        Err(_) => None,
    };
    if existing.is_none()
        && let Some(parent) = full.parent()
    {
        make_dirs(dir, parent)?;
    }
    let mut f = std::fs::File::create(full)?;
    f.write_all(bytes)?;
    if existing != Some(mode) {
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Creates `parent` under `dir`, replacing any file or link in the way of a directory. A
/// slot in a known state holds no link (only specc's tools, which make none, wrote since a
/// checkout removed them all), so a parent that is already a directory is taken as is.
fn make_dirs(dir: &Path, parent: &Path) -> std::io::Result<()> {
    let Ok(rel) = parent.strip_prefix(dir) else {
        return Err(std::io::Error::other("a path outside the checkout"));
    };
    if std::fs::symlink_metadata(parent).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let mut at = dir.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&at)?;
                std::fs::create_dir(&at)?;
            }
            Err(_) => std::fs::create_dir(&at)?,
        }
    }
    Ok(())
}
