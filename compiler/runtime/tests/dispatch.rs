//! Serve's dispatch (design: state.deployment): a worker's claim held while nothing is ready
//! takes a leaf the moment it is offered, and is let go when the build stops.

use std::sync::Arc;
use std::time::Duration;

use specc_ir::plan::{ChildKind, TaskNode};
use specc_llm::Ledger;
use specc_runtime::{Dispatch, TaskEnd, WorkOrder};
use specc_state::LeaseStore;
use specc_vcs::Repo;

/// Longer than any test waits: a claim that returns within it was woken, not timed out.
const WINDOW: Duration = Duration::from_secs(60);

fn order(id: &str) -> Arc<WorkOrder> {
    Arc::new(WorkOrder {
        parent: None,
        spec: Vec::new(),
        other_decisions: Vec::new(),
        origin: None,
        task: TaskNode {
            id: id.into(),
            parent: Some(String::new()),
            kind: ChildKind::Work,
            role: "worker".into(),
            model: "w".into(),
            title: id.into(),
            instructions: String::new(),
            decisions_to_read: Vec::new(),
            write_scope: vec![format!("{id}.txt")],
            read_scope: Vec::new(),
            acceptance: Vec::new(),
            dependencies: Vec::new(),
            covers_requirements: Vec::new(),
            covers_nodes: Vec::new(),
            budget: 1000,
            fingerprint: id.into(),
        },
        fingerprint: id.into(),
        decisions: Vec::new(),
        requirements: Vec::new(),
        checks: Vec::new(),
    })
}

fn dispatch(dir: &std::path::Path) -> (Arc<Dispatch>, Arc<Ledger>) {
    dispatch_with(dir, Duration::from_secs(30))
}

fn dispatch_with(dir: &std::path::Path, lease: Duration) -> (Arc<Dispatch>, Arc<Ledger>) {
    let ledger = Arc::new(Ledger::open(&dir.join("state.db")).expect("state"));
    std::fs::create_dir_all(dir.join("vcs")).expect("dir");
    let repo = Repo::open(&dir.join("vcs/log"), specc_vcs::Options::default()).expect("repo");
    let store = LeaseStore::sqlite(ledger.state_db()).expect("leases");
    let d = Dispatch::new(store, "run", lease, repo);
    (Arc::new(d), ledger)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_claim_takes_a_leaf_as_soon_as_it_is_offered() {
    let dir = tempfile::tempdir().expect("dir");
    let (d, _ledger) = dispatch(dir.path());
    let waiting = {
        let d = d.clone();
        tokio::spawn(async move { d.claim_within("w1", WINDOW).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !waiting.is_finished(),
        "nothing is offered: the claim is held"
    );
    let runs = {
        let d = d.clone();
        tokio::spawn(async move { d.run_task(order("a"), 1).await })
    };
    let claimed = tokio::time::timeout(WINDOW / 2, waiting)
        .await
        .expect("the offer woke the held claim")
        .expect("joined")
        .expect("the store answered")
        .expect("a leaf");
    assert_eq!(claimed.claim.task, "a");
    assert_eq!(claimed.claim.attempt, 1);
    let end = TaskEnd::Failed {
        reason: "test".into(),
        attempts: 1,
    };
    d.finish(&claimed.claim, end)
        .await
        .expect("the claim holds");
    let ended = runs.await.expect("joined");
    assert!(matches!(ended, TaskEnd::Failed { .. }), "{ended:?}");
    assert_eq!(
        d.counters.claims.load(std::sync::atomic::Ordering::Relaxed),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_lets_a_held_claim_go_with_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let (d, _ledger) = dispatch(dir.path());
    let waiting = {
        let d = d.clone();
        tokio::spawn(async move { d.claim_within("w1", WINDOW).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    d.stop();
    let answer = tokio::time::timeout(WINDOW / 2, waiting)
        .await
        .expect("stopping woke the held claim")
        .expect("joined")
        .expect("the store answered");
    assert!(answer.is_none());
    assert!(d.stopped());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leaf_offered_before_anyone_asks_is_found_by_the_next_claim() {
    let dir = tempfile::tempdir().expect("dir");
    let (d, _ledger) = dispatch(dir.path());
    let runs = {
        let d = d.clone();
        tokio::spawn(async move { d.run_task(order("b"), 1).await })
    };
    // The offer lands in the store; a claim asked afterwards finds it without waiting.
    let claimed = loop {
        if let Some(c) = d.claim_within("w1", Duration::ZERO).await.expect("store") {
            break c;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(claimed.claim.task, "b");
    d.release(&claimed.claim).await.expect("released");
    // Released, it is ready again: the next claim takes it as the next attempt.
    let again = tokio::time::timeout(WINDOW / 2, d.claim_within("w2", WINDOW))
        .await
        .expect("the released leaf is claimed again")
        .expect("store")
        .expect("a leaf");
    assert_eq!((again.claim.task.as_str(), again.claim.attempt), ("b", 2));
    d.stop();
    d.release(&again.claim).await.expect("released");
    let ended = tokio::time::timeout(WINDOW / 2, runs)
        .await
        .expect("a stopped build's unheld leaf ends")
        .expect("joined");
    assert!(matches!(ended, TaskEnd::Budget { .. }), "{ended:?}");
}

fn submission(base: specc_vcs::object::ObjectId, key: &str) -> specc_vcs::Submission {
    specc_vcs::Submission {
        base,
        changes: vec![specc_vcs::Change {
            path: "a.txt".into(),
            expected: None,
            new: Some(b"a\n".to_vec()),
            executable: false,
        }],
        message: "a: write".into(),
        task: "a".into(),
        idempotency_key: key.into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_landed_submission_wins_over_the_end_its_worker_reports() {
    let dir = tempfile::tempdir().expect("dir");
    let (d, _ledger) = dispatch(dir.path());
    let runs = {
        let d = d.clone();
        tokio::spawn(async move { d.run_task(order("a"), 1).await })
    };
    let c = d
        .claim_within("w1", WINDOW)
        .await
        .expect("store")
        .expect("a leaf")
        .claim;
    let head = d.repo().stats().await.head.expect("a head");
    // A submission under another claim's key is refused, whatever its token.
    let other = d.submit(&c, submission(head, "run@7/a/7")).await;
    assert_eq!(other, Err(specc_state::LeaseError::Fenced));
    let landed = d
        .submit(&c, submission(head, "run@1/a/1"))
        .await
        .expect("the claim holds");
    let specc_vcs::Outcome::Committed { id, .. } = landed else {
        panic!("{landed:?}")
    };
    // Its worker never heard the answer and says the attempt failed: it landed all the same.
    let failed = TaskEnd::Failed {
        reason: "the submission's answer was lost".into(),
        attempts: 1,
    };
    d.finish(&c, failed).await.expect("the claim holds");
    match runs.await.expect("joined") {
        TaskEnd::Landed(l) => assert_eq!(l.commit, Some(id)),
        other => panic!("{other:?}"),
    }
}

/// A serve that died after a worker's submission landed and before the worker reported its
/// end: the serve that resumes the run finds the landing on the branch, and the task's next
/// claim ends it as landed with that commit instead of handing it out again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_serve_ends_a_landed_but_unreported_task_as_landed() {
    let dir = tempfile::tempdir().expect("dir");
    let lease = Duration::from_millis(300);
    let landed = {
        let (d, _ledger) = dispatch_with(dir.path(), lease);
        let runs = {
            let d = d.clone();
            tokio::spawn(async move { d.run_task(order("a"), 1).await })
        };
        let claimed = tokio::time::timeout(WINDOW / 2, d.claim_within("w1", WINDOW))
            .await
            .expect("claimed")
            .expect("store")
            .expect("a leaf");
        let submission = specc_vcs::Submission {
            base: d.repo().head_now().expect("a head"),
            changes: vec![specc_vcs::Change {
                path: "a.txt".into(),
                expected: None,
                new: Some(b"a\n".to_vec()),
                executable: false,
            }],
            message: "a".into(),
            task: "a".into(),
            idempotency_key: format!("run@{}/a/1", claimed.claim.attempt),
        };
        let outcome = d.submit(&claimed.claim, submission).await.expect("holds");
        let specc_vcs::Outcome::Committed { id, .. } = outcome else {
            panic!("{outcome:?}");
        };
        // Serve dies here: the worker's end is never reported.
        runs.abort();
        let _ = runs.await;
        id
    };
    let (d, _ledger) = dispatch_with(dir.path(), lease);
    let found = d.recover_landings(&Default::default()).await;
    assert_eq!(found, 1, "the unreported landing is found on the branch");
    let runs = {
        let d = d.clone();
        tokio::spawn(async move { d.run_task(order("a"), 1).await })
    };
    // Once the dead claim's lease runs out, the next claim finds the landing.
    tokio::time::sleep(lease * 2).await;
    let next = d
        .claim_within("w2", Duration::from_secs(2))
        .await
        .expect("store");
    assert!(
        next.is_none(),
        "the landed task is not handed out again: {:?}",
        next.map(|c| c.claim)
    );
    let ended = tokio::time::timeout(WINDOW / 2, runs)
        .await
        .expect("the task ended")
        .expect("joined");
    match ended {
        TaskEnd::Landed(l) => assert_eq!(l.commit, Some(landed)),
        other => panic!("{other:?}"),
    }
}
