//! Task leases and fencing (design: state.leases), each test on both backends: SQLite and
//! a PostgreSQL database of its own (specc-test-support's `pg`).

use specc_test_support::pg;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use specc_state::{Claim, LeaseError, LeaseStore, PgState, StateDb, StepRecord};

type Connect = Box<dyn Fn() -> LeaseStore + Send + Sync>;

/// A SQLite store and a PostgreSQL one: each call of the second member connects again
/// (a SQLite connection of its own, as another process would have; a PostgreSQL pool's
/// connections), with what keeps the store alive.
async fn stores() -> Vec<(&'static str, Connect, Box<dyn std::any::Any>)> {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("state.db");
    let sqlite: Connect = Box::new(move || {
        LeaseStore::sqlite(Arc::new(StateDb::open(&path).expect("connect"))).expect("migrated")
    });
    let db = pg::database().await;
    let pool = PgState::connect(&db.url).expect("connect");
    let postgres = LeaseStore::postgres(pool).await.expect("migrated");
    let postgres: Connect = Box::new(move || postgres.clone());
    vec![
        ("sqlite", sqlite, Box::new(dir) as Box<dyn std::any::Any>),
        ("postgres", postgres, Box::new(db)),
    ]
}

const LONG: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_workers_claim_each_task_once_in_priority_order() {
    for (name, connect, _keep) in stores().await {
        let store = connect();
        let tasks: Vec<(String, i64)> = (0..300).map(|i| (format!("t{i:03}"), i % 7)).collect();
        store.offer("run", &tasks).await.expect("offer");
        store
            .offer("run", &tasks)
            .await
            .expect("offering again changes nothing");
        let workers = (0..8).map(|w| {
            let store = connect();
            tokio::spawn(async move {
                let mut got = Vec::new();
                // Claiming only, so that every worker goes for the same top task at once.
                while let Some(c) = store
                    .claim("run", &format!("w{w}"), LONG)
                    .await
                    .expect("claim")
                {
                    got.push(c);
                }
                got
            })
        });
        let mut claims: Vec<Claim> = Vec::new();
        for w in workers {
            claims.extend(w.await.expect("worker"));
        }
        for c in &claims {
            store.finish("run", c, true).await.expect("finish");
        }
        let mut by_task: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for c in &claims {
            by_task.entry(c.task.clone()).or_default().push(c.attempt);
        }
        assert_eq!(by_task.len(), 300, "{name}: every task claimed");
        assert!(
            by_task.values().all(|a| a == &[1]),
            "{name}: each task claimed once, as attempt 1: {by_task:?}"
        );
        // One worker alone takes them highest priority first.
        store
            .offer(
                "other",
                &[("low".into(), 1), ("high".into(), 9), ("mid".into(), 5)],
            )
            .await
            .expect("offer");
        let mut order = Vec::new();
        while let Some(c) = store.claim("other", "w", LONG).await.expect("claim") {
            order.push(c.task.clone());
            store.finish("other", &c, true).await.expect("finish");
        }
        assert_eq!(order, ["high", "mid", "low"], "{name}");
    }
}

/// One step a worker journaled under claim `c`.
fn step(c: &Claim, n: u32, kind: &str) -> Vec<StepRecord> {
    vec![StepRecord {
        run: format!("run@{}", c.attempt),
        attempt: 1,
        step: n,
        kind: kind.into(),
        body: "{}".into(),
    }]
}

#[tokio::test]
async fn a_worker_whose_lease_expired_is_fenced_out() {
    for (name, connect, _keep) in stores().await {
        let store = connect();
        store.offer("run", &[("t".into(), 1)]).await.expect("offer");
        // Long enough that a loaded machine does not let it lapse between two steps.
        let short = Duration::from_millis(1000);
        let a = store
            .claim("run", "a", short)
            .await
            .expect("claim")
            .expect("a task");
        assert_eq!(a.attempt, 1);
        store
            .journal("run", &a, &step(&a, 1, "model"))
            .await
            .expect("a journals");
        store
            .heartbeat("run", &a, short)
            .await
            .expect("a heartbeat");
        assert_eq!(
            store.claim("run", "b", LONG).await.expect("claim"),
            None,
            "{name}: a held lease is not claimable"
        );
        // a pauses past its lease; b takes the task over as attempt 2.
        tokio::time::sleep(Duration::from_millis(1300)).await;
        let b = store
            .claim("run", "b", LONG)
            .await
            .expect("claim")
            .expect("expired");
        assert_eq!(b.attempt, 2, "{name}");
        // Every late write of a is refused by its token.
        assert_eq!(
            store.heartbeat("run", &a, short).await,
            Err(LeaseError::Fenced),
            "{name}"
        );
        assert_eq!(
            store.journal("run", &a, &step(&a, 2, "model")).await,
            Err(LeaseError::Fenced),
            "{name}"
        );
        assert_eq!(
            store.finish("run", &a, true).await,
            Err(LeaseError::Fenced),
            "{name}"
        );
        store
            .journal("run", &b, &step(&b, 1, "model"))
            .await
            .expect("b journals");
        store.finish("run", &b, true).await.expect("b lands");
        assert_eq!(
            store.journal("run", &b, &step(&b, 2, "tool")).await,
            Err(LeaseError::Fenced)
        );
        assert_eq!(
            store.claim("run", "c", LONG).await.expect("claim"),
            None,
            "{name}: done"
        );
        // An expired lease with no successor fences its holder too.
        store.offer("run", &[("u".into(), 1)]).await.expect("offer");
        let u = store
            .claim("run", "a", short)
            .await
            .expect("claim")
            .expect("u");
        tokio::time::sleep(Duration::from_millis(1300)).await;
        assert_eq!(
            store.journal("run", &u, &step(&u, 1, "model")).await,
            Err(LeaseError::Fenced)
        );
        // A released task is claimable again, as the next attempt.
        let u2 = store
            .claim("run", "b", LONG)
            .await
            .expect("claim")
            .expect("u again");
        store.finish("run", &u2, false).await.expect("release");
        let u3 = store
            .claim("run", "c", LONG)
            .await
            .expect("claim")
            .expect("released");
        assert_eq!((u2.attempt, u3.attempt), (2, 3), "{name}");
    }
}
