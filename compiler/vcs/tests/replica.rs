//! Replicas (design: vcs.replica): two replicas submit through one upstream, each sees the
//! other's commits under the same ids, a conflict found upstream reaches the replica's merge
//! queue, a replica reopened after its process ended keeps its head, and flags travel up;
//! a submission whose answer was lost is asked again and lands once.

use std::sync::Arc;

use specc_vcs::object::ObjectId;
use specc_vcs::{
    Boxed, Bundle, Change, Options, Outcome, Repo, Submission, Upstream, UpstreamError,
};

/// An upstream in this process: the wire is the bundle's encoding, as over HTTP.
struct Local(Repo);

impl Upstream for Local {
    fn submit<'a>(
        &'a self,
        s: &'a Submission,
        have: ObjectId,
    ) -> Boxed<'a, Result<(Outcome, Bundle), UpstreamError>> {
        Box::pin(async move {
            let lost = |why: &str| UpstreamError::Lost(why.to_owned());
            let outcome = self.0.submit(s.clone()).await;
            let bundle = self.0.bundle(Some(have)).await.ok_or(lost("unavailable"))?;
            let bundle = Bundle::decode(&bundle.encode()).ok_or(lost("damaged"))?;
            Ok((outcome, bundle))
        })
    }

    fn fetch(&self, have: ObjectId) -> Boxed<'_, Result<Bundle, UpstreamError>> {
        Box::pin(async move {
            self.0
                .bundle(Some(have))
                .await
                .ok_or(UpstreamError::Lost("unavailable".into()))
        })
    }

    fn flag(&self, path: &str) {
        self.0.flag(path);
    }
}

fn write(path: &str, text: &str, base: ObjectId, key: &str) -> Submission {
    Submission {
        base,
        changes: vec![Change {
            path: path.into(),
            expected: None,
            new: Some(text.as_bytes().to_vec()),
            executable: false,
        }],
        message: format!("write {path}"),
        task: key.into(),
        idempotency_key: key.into(),
    }
}

#[tokio::test]
async fn replicas_follow_their_upstream_under_the_same_ids() {
    let dir = tempfile::tempdir().expect("dir");
    let up = Repo::open(&dir.path().join("up"), Options::default()).expect("upstream");
    let upstream: Arc<dyn Upstream> = Arc::new(Local(up.clone()));
    let a = Repo::replica(&dir.path().join("a"), Options::default(), upstream.clone()).expect("a");
    let b = Repo::replica(&dir.path().join("b"), Options::default(), upstream.clone()).expect("b");
    a.sync().await.expect("sync a");
    b.sync().await.expect("sync b");
    let root = a.head_now().expect("head");
    assert_eq!(
        Some(root),
        up.head_now(),
        "the empty branch has one root everywhere"
    );

    let one = a.submit(write("src/one.rs", "1\n", root, "k1")).await;
    let Outcome::Committed { id: first, .. } = one else {
        panic!("{one:?}");
    };
    assert_eq!(
        a.head_now(),
        Some(first),
        "the submitter holds its commit at once"
    );
    assert_eq!(up.head_now(), Some(first));
    // b has not synced: it still sees the root, and submits on it.
    let two = b.submit(write("src/two.rs", "2\n", root, "k2")).await;
    let Outcome::Committed { id: second, .. } = two else {
        panic!("{two:?}");
    };
    assert_eq!(
        b.head_now(),
        Some(second),
        "the answer brought b up to date"
    );
    assert_eq!(
        b.read(second, "src/one.rs").await.as_deref().ok(),
        Some(&b"1\n"[..]),
        "a's file came with it"
    );
    a.sync().await.expect("sync");
    assert_eq!(a.head_now(), Some(second));
    assert_eq!(
        a.files(second).await,
        up.files(second).await,
        "the same commit holds the same files on every side"
    );

    // A conflict found upstream is queued on the replica that submitted.
    let mut clash = write("src/one.rs", "a's edit\n", first, "k3");
    clash.changes[0].expected = Some(specc_vcs::object::ObjectId::of(
        specc_vcs::object::Kind::Blob,
        b"1\n",
    ));
    let mut other = clash.clone();
    other.idempotency_key = "k4".into();
    other.task = "k4".into();
    other.changes[0].new = Some(b"b's edit\n".to_vec());
    assert!(matches!(b.submit(other).await, Outcome::Committed { .. }));
    let outcome = a.submit(clash).await;
    assert!(matches!(outcome, Outcome::Conflict(_)), "{outcome:?}");
    assert_eq!(a.queued(), 1, "the conflict waits in a's merge queue");
    assert_eq!(
        a.head_now(),
        up.head_now(),
        "and a holds the head it conflicted with"
    );

    // Flags go upstream and come back with the next sync.
    b.flag("src/two.rs");
    // The flag reaches the upstream's integrator before this submission (one channel).
    let three = b
        .submit(write(
            "src/three.rs",
            "3\n",
            b.head_now().expect("head"),
            "k5",
        ))
        .await;
    assert!(matches!(three, Outcome::Committed { .. }));
    a.sync().await.expect("sync");
    assert_eq!(a.flagged_now(), vec!["src/two.rs".to_owned()]);

    // A replica reopened keeps its head; a resubmitted key gets its first outcome.
    let head = a.head_now();
    drop(a);
    let a = Repo::replica(&dir.path().join("a"), Options::default(), upstream).expect("reopen");
    assert_eq!(a.head_now(), head);
    let again = a.submit(write("src/one.rs", "1\n", root, "k1")).await;
    assert_eq!(again, one, "idempotent across replicas and restarts");
}

#[tokio::test]
async fn a_bundle_that_does_not_resolve_leaves_the_replica_as_it_was() {
    let dir = tempfile::tempdir().expect("dir");
    let up = Repo::open(&dir.path().join("up"), Options::default()).expect("upstream");
    let root = up.head_now().expect("root");
    let Outcome::Committed { id, .. } = up.submit(write("f", "x\n", root, "k")).await else {
        panic!("commit");
    };
    let replica = Repo::open(&dir.path().join("r"), Options::default()).expect("replica");
    let mut bundle = up.bundle(Some(root)).await.expect("bundle");
    assert!(bundle.objects.len() >= 3, "a commit, a tree and a blob");
    bundle
        .objects
        .retain(|(k, _)| *k != specc_vcs::object::Kind::Blob);
    assert!(!replica.import(bundle).await, "the blob is missing");
    assert_eq!(replica.head_now(), Some(root));
    let whole = up.bundle(None).await.expect("bundle");
    assert!(replica.import(whole).await);
    assert_eq!(replica.head_now(), Some(id));
    assert_eq!(
        replica.read(id, "f").await.as_deref().ok(),
        Some(&b"x\n"[..])
    );
}

/// An upstream whose first answer to a submission is lost on the way back, after it was
/// applied.
struct LosesFirstAnswer {
    inner: Local,
    lost: std::sync::atomic::AtomicUsize,
}

impl Upstream for LosesFirstAnswer {
    fn submit<'a>(
        &'a self,
        s: &'a Submission,
        have: ObjectId,
    ) -> Boxed<'a, Result<(Outcome, Bundle), UpstreamError>> {
        Box::pin(async move {
            let answer = self.inner.submit(s, have).await;
            if self.lost.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return Err(UpstreamError::Lost("the connection dropped".into()));
            }
            answer
        })
    }

    fn fetch(&self, have: ObjectId) -> Boxed<'_, Result<Bundle, UpstreamError>> {
        self.inner.fetch(have)
    }

    fn flag(&self, path: &str) {
        self.inner.flag(path);
    }
}

#[tokio::test]
async fn a_submission_whose_answer_was_lost_is_asked_again_and_lands_once() {
    let dir = tempfile::tempdir().expect("dir");
    let up = Repo::open(&dir.path().join("up"), Options::default()).expect("upstream");
    let lossy = Arc::new(LosesFirstAnswer {
        inner: Local(up.clone()),
        lost: std::sync::atomic::AtomicUsize::new(0),
    });
    let a = Repo::replica(&dir.path().join("a"), Options::default(), lossy.clone()).expect("a");
    a.sync().await.expect("sync");
    let root = a.head_now().expect("head");
    let before = up.stats().await.seq;
    let one = a.submit(write("src/one.rs", "1\n", root, "k1")).await;
    let Outcome::Committed { id, .. } = one else {
        panic!("{one:?}");
    };
    assert_eq!(
        lossy.lost.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "asked twice"
    );
    assert_eq!(up.stats().await.seq, before + 1, "landed once");
    assert_eq!((a.head_now(), up.head_now()), (Some(id), Some(id)));
}
