//! Checkout slots: the attempts' working directories, reused so that moving one to a new
//! base costs what changed, not the tree. A slot remembers what it holds: a commit, plus
//! the paths specc's tools wrote since (the tools are the only writers while no command
//! runs) and the paths where its directory still holds an older commit (it is moved
//! lazily: design: runtime.lazy-checkouts); a slot in which a command ran, or one this
//! process has not written, holds something unknown and gets a full checkout. An attempt
//! leases a slot, its tools record what they write in the lease's `Tracked`, and the lease
//! goes back to the pool when dropped, however the attempt ended.
//! design: runtime.workspace

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use specc_vcs::Repo;
use specc_vcs::object::ObjectId;

use super::tracked::{Behind, Kept, Tracked};
use super::tree::KEPT;

/// A lazily moved slot's directory is brought up to date at its lease once it owes its
/// base more than this many files, or more than this many bytes of them: what the pool
/// keeps in memory for the files it has not written yet is bounded.
const OWED_FILES: usize = 65_536;
const OWED_BYTES: usize = 8 << 20;

/// What a free slot's directory holds.
#[derive(Clone, Debug)]
enum Held {
    /// Not known (new to this process, or a command ran in it).
    Unknown,
    /// `base`, except what the last tools wrote and what it owes `base`.
    Commit { base: ObjectId, kept: Kept },
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

    /// The directory the slots are made in (`.specc/work/`).
    pub fn work(&self) -> &std::path::Path {
        &self.work
    }

    /// A slot holding exactly `base` (outside `KEPT`), for a re-check that runs commands.
    pub async fn lease(&self, repo: &Repo, base: ObjectId) -> std::io::Result<Lease<'_>> {
        let lease = self.lease_lazily(repo, base).await?;
        lease.tracked.ready(&lease.dir).await?;
        Ok(lease)
    }

    /// A slot for an attempt at `base`: its directory may still owe the base some files,
    /// which [`Tracked::ready`] writes when a tool needs them (design:
    /// runtime.lazy-checkouts).
    pub async fn lease_lazily(&self, repo: &Repo, base: ObjectId) -> std::io::Result<Lease<'_>> {
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
        if matches!(held, Held::Unknown) {
            std::fs::create_dir_all(&dir)?;
        }
        let (behind, mut pending) = match held {
            Held::Commit { base: from, kept } => (owed(repo, from, base, kept).await?, pending),
            Held::Unknown => {
                // The checkout writes on a blocking thread: run as a task of its own that
                // keeps the slot until it is done, even if this caller gives up.
                let (repo, at) = (repo.clone(), dir.clone());
                let (written, back) =
                    tokio::spawn(async move { (repo.checkout(base, &at, KEPT).await, pending) })
                        .await
                        .map_err(std::io::Error::other)?;
                written?;
                (Behind::default(), back)
            }
        };
        pending.armed = false;
        let (files, bytes) = behind.owed();
        let too_much = files > OWED_FILES || bytes > OWED_BYTES;
        let lease = Lease {
            slots: self,
            id,
            dir,
            base,
            tracked: Arc::new(Tracked::behind(behind)),
        };
        if too_much {
            lease.tracked.ready(&lease.dir).await?;
        }
        Ok(lease)
    }
}

/// What a slot's directory owes `base` when it held `from` (owing `from` `behind`) and its
/// last tools wrote `wrote`: every path the commits between changed, with `base`'s file,
/// and every path the tools wrote that does not already hold `base`'s file.
async fn owed(
    repo: &Repo,
    from: ObjectId,
    base: ObjectId,
    Kept { wrote, mut behind }: Kept,
) -> std::io::Result<Behind> {
    // The tools' writes the directory never took (`Tracked::write_later`): owed still,
    // whatever the base holds there.
    let unwritten: Vec<bool> = wrote.keys().map(|p| behind.get(p).is_some()).collect();
    for p in wrote.keys() {
        behind.remove(p); // what the directory owes there is the base's file, found below
    }
    // The recent commits' files, without a round trip through the integrator (design:
    // vcs.recent-changes); the VCS's tree diff when they are not recent.
    let changes = match repo.changes_now(from, base) {
        Some(changes) => changes,
        None => repo.changes(from, base).await?,
    };
    for (p, file) in changes {
        behind.insert(p, file);
    }
    for ((p, touched), unwritten) in wrote.into_iter().zip(unwritten) {
        let file = match (behind.get(&p), touched.before) {
            (Some(file), _) => file.clone(),
            // Unchanged since `from`: the base's file is `from`'s, which the tools overwrote
            // and, when they wrote it while the directory held `from` there, read first.
            (None, Some(before)) => before,
            (None, None) => repo.file(base, &p).await?,
        };
        // A file the last tools wrote whole into the directory as it now lands is there
        // already.
        if !unwritten && touched.now.as_ref().is_some_and(|w| w.is(&file)) {
            behind.remove(&p);
        } else {
            behind.insert(p, file);
        }
    }
    Ok(behind)
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
        let (free, id, base) = (self.slots.free.clone(), self.id, self.base);
        self.tracked.end(move |held| {
            let held = held.map_or(Held::Unknown, |kept| Held::Commit { base, kept });
            if let Ok(mut free) = free.lock() {
                free.push((id, held));
            }
        });
    }
}
