//! A replica: a repository on a worker's machine whose branch follows an upstream one (the
//! `specc serve` that hosts the integrator). Reads, checkouts and diffs are local; a
//! submission goes upstream, which applies it, and the answer carries the objects between
//! the replica's head and the upstream head, so the replica then holds the upstream head and
//! the same object ids (content addressing makes them equal). Flags go upstream too. The
//! replica never commits on its own.
//! design: vcs.replica

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use tokio::sync::oneshot;

use crate::object::ObjectId;
use crate::{Bundle, Options, Outcome, Refusal, Repo, Request, Submission};

/// A boxed future that may move between threads.
pub type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a submission upstream has no outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpstreamError {
    /// The answer did not come back: the submission may or may not have been applied.
    /// Sending it again under the same idempotency key is safe (the first outcome comes
    /// back), so the replica does, a few times.
    Lost(String),
    /// The upstream would not take it from this writer (a claim it no longer holds): not
    /// sent again.
    Refused(String),
}

/// Why a replica could not catch up with its upstream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncError {
    /// The local store is unavailable (its integrator stopped).
    Unavailable,
    /// The upstream's objects could not be fetched.
    Fetch(UpstreamError),
    /// The objects fetched do not resolve to the upstream's head.
    Unresolved,
}

impl std::fmt::Display for SyncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyncError::Unavailable => write!(f, "the local store is unavailable"),
            SyncError::Fetch(e) => write!(f, "{e}"),
            SyncError::Unresolved => write!(f, "the upstream's objects do not resolve to its head"),
        }
    }
}

impl std::error::Error for SyncError {}

impl std::fmt::Display for UpstreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamError::Lost(why) | UpstreamError::Refused(why) => write!(f, "{why}"),
        }
    }
}

/// Where a replica's submissions go.
pub trait Upstream: Send + Sync {
    /// Applies `s` upstream; its outcome and the objects from `have` to the head after it.
    fn submit<'a>(
        &'a self,
        s: &'a Submission,
        have: ObjectId,
    ) -> Boxed<'a, Result<(Outcome, Bundle), UpstreamError>>;
    /// The objects from `have` to the upstream head.
    fn fetch(&self, have: ObjectId) -> Boxed<'_, Result<Bundle, UpstreamError>>;
    /// Flags `path` upstream for the megafile guard (best effort).
    fn flag(&self, path: &str);
}

impl Repo {
    /// Opens (or creates) a replica whose log is `path`, following `upstream`. Call
    /// [`Repo::sync`] before reading its head.
    pub fn replica(
        path: &Path,
        options: Options,
        upstream: Arc<dyn Upstream>,
    ) -> std::io::Result<Repo> {
        Repo::open_with(path, options, Some(upstream))
    }

    /// The objects a replica at `have` lacks to reach this head (`None`: the store is
    /// unavailable).
    pub async fn bundle(&self, have: Option<ObjectId>) -> Option<Bundle> {
        let (tx, rx) = oneshot::channel();
        self.send(Request::Bundle(have, tx)).ok()?;
        rx.await.ok().flatten()
    }

    /// Takes a bundle in: `true` once the head is the bundle's (or a newer one) and durable.
    pub async fn import(&self, b: Bundle) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.send(Request::Import(Box::new(b), tx)).is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }

    /// Brings a replica's head up to its upstream's; a repository that is not a replica is
    /// always in sync.
    pub async fn sync(&self) -> Result<(), SyncError> {
        let Some(up) = &self.inner.upstream else {
            return Ok(());
        };
        let have = self.head_now().ok_or(SyncError::Unavailable)?;
        let bundle = up.fetch(have).await.map_err(SyncError::Fetch)?;
        if self.import(bundle).await {
            Ok(())
        } else {
            Err(SyncError::Unresolved)
        }
    }

    pub(crate) async fn submit_upstream(&self, up: &dyn Upstream, s: &Submission) -> Outcome {
        let Some(have) = self.head_now() else {
            return Outcome::Refused(Refusal::Unavailable);
        };
        // A lost answer is asked again under the same idempotency key: the upstream answers
        // with the first outcome, so a submission that landed is not landed twice.
        for pause_ms in [0, 200, 1000, 3000] {
            tokio::time::sleep(std::time::Duration::from_millis(pause_ms)).await;
            match up.submit(s, have).await {
                // The outcome stands whether or not the objects came in whole: the next
                // sync fetches what is missing.
                Ok((outcome, bundle)) => {
                    self.import(bundle).await;
                    return outcome;
                }
                // The upstream's side says why (a worker logs it).
                Err(UpstreamError::Lost(_)) => {}
                Err(UpstreamError::Refused(_)) => break,
            }
        }
        Outcome::Refused(Refusal::Unavailable)
    }
}
