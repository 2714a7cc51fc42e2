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
mod channel;
mod checkout;
mod export;
pub mod git;
mod integrator;
pub(crate) use export::{FAST_IMPORT_PID, IMPORTED, imported, init as init_git, record_import};
mod log;
pub mod merge;
mod model;
pub mod object;
mod published;
mod queue;
mod replica;
mod wire;
pub use bundle::Bundle;
pub use replica::{Boxed, SyncError, Upstream, UpstreamError};
mod bundle;
mod error;
mod read;
pub use error::ReadError;
pub use read::{Changes, FileAt};
mod state;
mod view;

pub use queue::{Queued, Resolver};

use std::path::Path;
use std::sync::mpsc;

use channel::Request;
pub use model::{
    Change, Conflict, FileEntry, FileList, HeadFile, Options, Outcome, Refusal, Stats, Submission,
    line_count,
};
use object::ObjectId;
use tokio::sync::oneshot;

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

    /// Asks the integrator and waits for its answer: `Stopped` if the store stopped (or
    /// dropped the answer), `Missing(commit)` if it answered that it has no such commit.
    async fn ask<T>(
        &self,
        commit: ObjectId,
        make: impl FnOnce(oneshot::Sender<Option<T>>) -> Request,
    ) -> Result<T, ReadError> {
        let (tx, rx) = oneshot::channel();
        self.send(make(tx)).map_err(|()| ReadError::Stopped)?;
        rx.await
            .map_err(|_| ReadError::Stopped)?
            .ok_or(ReadError::Missing(commit))
    }

    /// The head commit and the file at `path` there (durable state only).
    pub async fn read_head(&self, path: &str) -> Result<(ObjectId, Option<HeadFile>), ReadError> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::ReadHead(path.to_owned(), tx))
            .map_err(|()| ReadError::Stopped)?;
        rx.await.map_err(|_| ReadError::Stopped)
    }

    /// The content of `path` at `commit`, read through its trees without a checkout.
    pub async fn read(&self, commit: ObjectId, path: &str) -> Result<Vec<u8>, ReadError> {
        match self.file(commit, path).await? {
            Some((bytes, _)) => Ok(bytes),
            None => Err(ReadError::NoFile {
                commit,
                path: path.to_owned(),
            }),
        }
    }

    /// The content and mode of `path` at `commit` (`None`: it has no file there).
    pub async fn file(&self, commit: ObjectId, path: &str) -> Result<FileAt, ReadError> {
        let path = path.to_owned();
        self.ask(commit, |tx| Request::File(commit, path, tx)).await
    }

    /// What moving a checkout from commit `from` to commit `to` writes: each path whose
    /// content or mode differs, with `to`'s (`None`: removed). It costs what changed, not
    /// the tree: equal subtrees are skipped.
    pub async fn changes(&self, from: ObjectId, to: ObjectId) -> Result<read::Changes, ReadError> {
        let answer = self.ask(to, |tx| Request::Changes(from, to, tx)).await;
        // The integrator does not say which of the two it lacks: name `from` if it is that.
        if answer == Err(ReadError::Missing(to)) && self.commit(from).await.is_err() {
            return Err(ReadError::Missing(from));
        }
        answer
    }

    /// Flags a file for the megafile guard: it may not grow until a split lands.
    pub fn flag(&self, path: &str) {
        let _ = self.send(Request::Flag(path.to_owned()));
        if let Some(up) = &self.inner.upstream {
            up.flag(path);
        }
    }

    /// The commit `id`, if it is on the branch.
    pub async fn commit(&self, id: ObjectId) -> Result<object::Commit, ReadError> {
        self.ask(id, |tx| Request::Commit(id, tx)).await
    }

    /// Every file of `commit`, with its content and mode, sorted by path.
    pub async fn files(&self, commit: ObjectId) -> Result<FileList, ReadError> {
        self.ask(commit, |tx| Request::Files(commit, tx)).await
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
        let files = self.files(commit).await?;
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
