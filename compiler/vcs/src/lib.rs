//! specc-vcs: the agent VCS. Every change of every agent goes through here.
//!
//! * [`object`]: blobs, trees and commits, named by blake3.
//! * `log`: the append-only object log, one fsync per batch, torn tails cut on open.
//! * `state`: the branch in memory and how a submission is applied (pushrebase, 3-way merge
//!   with [`merge::merge3`], the megafile guard, idempotency).
//! * [`Repo`]: the integrator thread and the async handle writers use. Submissions that
//!   arrive while a batch is being made durable form the next batch: group commit.
//! * `checkout`: writing a commit into a directory (modes, stale files, symlinks).
//!
//! design: vcs.store

mod cache;
mod checkout;
mod export;
pub mod git;
mod integrator;
pub use export::{FAST_IMPORT_PID, IMPORTED, imported, init as init_git, record_import};
mod log;
pub mod merge;
pub mod object;
mod published;
mod queue;
mod replica;
mod wire;
pub use bundle::Bundle;
pub use replica::{Boxed, SyncError, Upstream, UpstreamError};
mod bundle;
mod read;
pub use read::{Changes, FileAt};
mod state;
mod view;

pub use queue::{Queued, Resolver};

use std::path::Path;
use std::sync::mpsc;

use object::ObjectId;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

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

enum Request {
    Submit(Box<Submission>, oneshot::Sender<Outcome>),
    ReadHead(String, oneshot::Sender<(ObjectId, Option<HeadFile>)>),
    Read(ObjectId, String, oneshot::Sender<Option<Vec<u8>>>),
    File(ObjectId, String, oneshot::Sender<Option<read::FileAt>>),
    Changes(ObjectId, ObjectId, oneshot::Sender<Option<read::Changes>>),
    Flag(String),
    Stats(oneshot::Sender<Stats>),
    Commit(ObjectId, oneshot::Sender<Option<object::Commit>>),
    Files(ObjectId, oneshot::Sender<Option<FileList>>),
    Export(
        Option<ObjectId>,
        export::Onto,
        oneshot::Sender<Option<(Vec<u8>, usize, ObjectId)>>,
    ),
    Bundle(Option<ObjectId>, oneshot::Sender<Option<Bundle>>),
    Import(Box<Bundle>, oneshot::Sender<bool>),
}

/// A handle on a repository: cheap to clone, usable from any task. When the last clone is
/// dropped, the integrator finishes its batch and the store is closed (its lock released).
#[derive(Clone)]
pub struct Repo {
    inner: std::sync::Arc<Inner>,
    queue: std::sync::Arc<std::sync::Mutex<queue::MergeQueue>>,
}

struct Inner {
    tx: Option<mpsc::Sender<Request>>,
    thread: Option<std::thread::JoinHandle<()>>,
    line_budget: usize,
    published: published::Published,
    /// A replica's upstream: submissions and flags go there (design: vcs.replica).
    upstream: Option<std::sync::Arc<dyn replica::Upstream>>,
    /// Submissions sent and not yet answered (`specc build --gauges`).
    submissions: std::sync::atomic::AtomicUsize,
    /// What the checkouts' git views share (design: vcs.checkout-view).
    views: view::Shared,
}

impl Drop for Inner {
    fn drop(&mut self) {
        drop(self.tx.take()); // the integrator's channel closes...
        if let Some(t) = self.thread.take() {
            let _ = t.join(); // ...and it returns once its last batch is answered
        }
    }
}

impl Repo {
    /// Opens (or creates) the repository whose log is `path`, recovering from a crash. The
    /// integrator thread ends when the last handle is dropped; every answered submission is
    /// durable by then, so there is nothing to wait for.
    pub fn open(path: &Path, options: Options) -> std::io::Result<Repo> {
        Repo::open_with(path, options, None)
    }

    fn open_with(
        path: &Path,
        options: Options,
        upstream: Option<std::sync::Arc<dyn replica::Upstream>>,
    ) -> std::io::Result<Repo> {
        let recovered = log::Log::open(path)?;
        let mut state = state::State::new(
            recovered.log,
            recovered.index,
            options.line_budget,
            options.head_cache_bytes,
        );
        if recovered.heads.is_empty() {
            state.init();
            state.log.sync()?;
        } else if state.load(&recovered.heads).is_none() {
            return Err(std::io::Error::other(
                "the log's head does not resolve to a commit",
            ));
        }
        state.flagged.extend(recovered.flags);
        let published = published::Published::default();
        published.set(state.head, Some(&state.flagged));
        let (tx, rx) = mpsc::channel();
        let shared = published.clone();
        let thread = std::thread::Builder::new()
            .name("specc-vcs-integrator".into())
            .spawn(move || integrator::integrate(state, rx, options, &shared))?;
        Ok(Repo {
            inner: std::sync::Arc::new(Inner {
                tx: Some(tx),
                thread: Some(thread),
                line_budget: options.line_budget,
                published,
                upstream,
                submissions: Default::default(),
                views: Default::default(),
            }),
            queue: Default::default(),
        })
    }

    /// The megafile guard's line budget.
    pub fn line_budget(&self) -> usize {
        self.inner.line_budget
    }

    /// The durable head, without waiting for the integrator (`None`: the store stopped).
    pub fn head_now(&self) -> Option<ObjectId> {
        self.inner.published.head()
    }

    /// What [`Repo::changes`] answers, without waiting for the integrator, when both
    /// commits are among the recent durable ones this handle saw land (`None`: ask
    /// [`Repo::changes`]). A path that changed and changed back may be listed, with its
    /// file at `to` (design: vcs.recent-changes).
    pub fn changes_now(&self, from: ObjectId, to: ObjectId) -> Option<read::Changes> {
        self.inner.published.changes(from, to)
    }

    /// The files the megafile guard flagged, as of the last durable batch, without waiting
    /// for the integrator.
    pub fn flagged_now(&self) -> Vec<String> {
        self.inner.published.flagged()
    }

    fn send(&self, r: Request) -> Result<(), ()> {
        match &self.inner.tx {
            Some(tx) => tx.send(r).map_err(|_| ()),
            None => Err(()),
        }
    }

    /// Submits a change; resolves once its outcome is durable. A conflict is also queued for
    /// [`Repo::resolve_next`].
    pub async fn submit(&self, s: Submission) -> Outcome {
        // Counted until answered, or until the caller gives up on it.
        struct InFlight<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for InFlight<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        self.inner
            .submissions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let counted = InFlight(&self.inner.submissions);
        let outcome = self.submit_counted(&s).await;
        drop(counted);
        if let Outcome::Conflict(c) = &outcome
            && let Ok(mut q) = self.queue.lock()
        {
            q.push(Queued {
                writer: s.task.clone(),
                head_intent: c.head_intent.clone(),
                conflict: c.clone(),
                submission: s,
            });
        }
        outcome
    }

    /// Submissions sent and not answered yet: queued for the integrator or in its batch.
    pub fn submissions_in_flight(&self) -> usize {
        self.inner
            .submissions
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    async fn submit_counted(&self, s: &Submission) -> Outcome {
        match &self.inner.upstream {
            Some(up) => self.submit_upstream(up.as_ref(), s).await,
            None => {
                let (tx, rx) = oneshot::channel();
                if self.send(Request::Submit(Box::new(s.clone()), tx)).is_err() {
                    return Outcome::Refused(Refusal::Unavailable);
                }
                rx.await.unwrap_or(Outcome::Refused(Refusal::Unavailable))
            }
        }
    }

    /// Takes `writer`'s oldest conflict out of the queue: its merge is handled by the
    /// caller (the runtime's merge agent, which serves conflicts in the order they came).
    pub fn withdraw(&self, writer: &str) -> Option<Queued> {
        self.queue.lock().ok()?.withdraw(writer)
    }

    /// Conflicts waiting for a resolution.
    pub fn queued(&self) -> usize {
        self.queue.lock().map_or(0, |q| q.len())
    }

    /// The head commit and the file at `path` there (durable state only).
    pub async fn read_head(&self, path: &str) -> Option<(ObjectId, Option<HeadFile>)> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::ReadHead(path.to_owned(), tx)).ok()?;
        rx.await.ok()
    }

    /// The content of `path` at `commit`, read through its trees without a checkout.
    pub async fn read(&self, commit: ObjectId, path: &str) -> Option<Vec<u8>> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::Read(commit, path.to_owned(), tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// The content and mode of `path` at `commit`: `None` if the commit is unknown,
    /// `Some(None)` if it has no file there.
    pub async fn file(&self, commit: ObjectId, path: &str) -> Option<FileAt> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::File(commit, path.to_owned(), tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// What moving a checkout from commit `from` to commit `to` writes: each path whose
    /// content or mode differs, with `to`'s (`None`: removed). It costs what changed, not
    /// the tree: equal subtrees are skipped. `None` if either commit is unknown.
    pub async fn changes(&self, from: ObjectId, to: ObjectId) -> Option<read::Changes> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::Changes(from, to, tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// Flags a file for the megafile guard: it may not grow until a split lands.
    pub fn flag(&self, path: &str) {
        let _ = self.send(Request::Flag(path.to_owned()));
        if let Some(up) = &self.inner.upstream {
            up.flag(path);
        }
    }

    /// The commit `id`, if it is on the branch.
    pub async fn commit(&self, id: ObjectId) -> Option<object::Commit> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::Commit(id, tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// Every file of `commit`, with its content and mode, sorted by path.
    pub async fn files(&self, commit: ObjectId) -> Option<FileList> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::Files(commit, tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// Makes `dir` (created if needed) hold exactly the files of `commit`, for a worker that
    /// must run a build: every file is written with mode 755 if executable, else 644; every
    /// other file and symlink is removed, and directories left empty with them. Anything
    /// under a top-level entry of `dir` named in `keep` (e.g. `.git`, `target`) is left
    /// alone, unless the commit itself has a file there. Symlinks are never followed: one in
    /// the way is removed, not written through. Anything else in `dir` is deleted, so the
    /// store's own log must not be there (outside `keep`). Returns how many files were
    /// written.
    pub async fn checkout(
        &self,
        commit: ObjectId,
        dir: &Path,
        keep: &[&str],
    ) -> std::io::Result<usize> {
        let files = self
            .files(commit)
            .await
            .ok_or_else(|| std::io::Error::other("no such commit"))?;
        self.checkout_files(files, dir, keep).await
    }

    /// [`Repo::checkout`] of a commit whose files the caller already read with
    /// [`Repo::files`].
    pub async fn checkout_files(
        &self,
        files: FileList,
        dir: &Path,
        keep: &[&str],
    ) -> std::io::Result<usize> {
        let dir = dir.to_owned();
        let keep: Vec<std::ffi::OsString> = keep.iter().map(Into::into).collect();
        tokio::task::spawn_blocking(move || checkout::run(&dir, &files, &keep))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Exports the commits not yet exported into the git repository at `dir` (created if
    /// needed) with `git fast-import`: onto `main`, or with `branch` = `(name, git commit,
    /// store commit)` the commits after that store commit onto branch `name`, made anew from
    /// that git commit. Returns how many commits were added.
    pub async fn export_git(
        &self,
        dir: &Path,
        branch: Option<(&str, &str, ObjectId)>,
    ) -> std::io::Result<usize> {
        let (dir, repo) = (dir.to_owned(), self.clone());
        let branch = branch.map(|(b, from, since)| (b.to_owned(), from.to_owned(), since));
        let make = move |since, onto| {
            let (reply, rx) = oneshot::channel();
            repo.send(Request::Export(since, onto, reply)).ok()?;
            rx.blocking_recv().ok().flatten()
        };
        tokio::task::spawn_blocking(move || match branch {
            None => export::run(&dir, make),
            Some((b, from, since)) => export::run_branch(&dir, &b, &from, since, make),
        })
        .await
        .map_err(std::io::Error::other)?
    }

    /// Makes `git_dir` a git repository whose `main` is this store's history up to `base`
    /// and whose index is `base`'s tree, and `work_tree/.git` a file naming it, so that git
    /// answers in a checkout of `base`; its objects are shared by every view beside it.
    /// Returns the shared repository, which whoever reads the view must read too (design:
    /// vcs.checkout-view).
    pub async fn git_view(
        &self,
        git_dir: &Path,
        work_tree: &Path,
        base: ObjectId,
    ) -> std::io::Result<std::path::PathBuf> {
        let (git_dir, work_tree, repo) = (git_dir.to_owned(), work_tree.to_owned(), self.clone());
        tokio::task::spawn_blocking(move || {
            let make = |since, onto| {
                let (reply, rx) = oneshot::channel();
                repo.send(Request::Export(since, onto, reply)).ok()?;
                rx.blocking_recv().ok().flatten()
            };
            view::run(&git_dir, &work_tree, base, &make, &repo.inner.views)
        })
        .await
        .map_err(std::io::Error::other)?
    }

    pub async fn stats(&self) -> Stats {
        let (tx, rx) = oneshot::channel();
        if self.send(Request::Stats(tx)).is_err() {
            return Stats::default();
        }
        rx.await.unwrap_or_default()
    }
}
