//! The ledger on PostgreSQL (design: llm.budget-lease, state.backends): budget leases hold
//! one cap across workers there as they do on SQLite (budget_lease.rs).

use specc_test_support::pg;

#[path = "common/row.rs"]
mod rows;

use std::sync::Arc;
use std::time::Duration;

use rows::row;
use specc_llm::{Ledger, LlmError};
use specc_state::StateDb;

/// The ledger's figures of `run`, read by a pooled client of the test's own.
struct Watch {
    client: tokio_postgres::Client,
}

impl Watch {
    async fn connect(url: &str) -> Watch {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        Watch { client }
    }

    /// Dollars spent by `run`.
    async fn spent(&self, run: &str) -> f64 {
        let row = self
            .client
            .query_opt("SELECT dollars FROM llm_run_spent WHERE run = $1", &[&run])
            .await
            .expect("spent");
        row.map_or(0.0, |r| r.get(0))
    }

    /// Dollars every reservation of `run` holds.
    async fn reserved(&self, run: &str) -> f64 {
        self.client
            .query_one(
                "SELECT COALESCE(SUM(dollars), 0)::DOUBLE PRECISION FROM llm_reservations
                 WHERE run = $1",
                &[&run],
            )
            .await
            .expect("reserved")
            .get(0)
    }

    /// Spent plus reserved for `run`, read in one snapshot (what another worker's cap
    /// check counts).
    async fn committed_snapshot(&mut self, run: &str) -> f64 {
        let tx = self
            .client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .expect("snapshot");
        let row = tx
            .query_one(
                "SELECT COALESCE((SELECT dollars FROM llm_run_spent WHERE run = $1), 0)
                      + COALESCE((SELECT SUM(dollars) FROM llm_reservations WHERE run = $1), 0)",
                &[&run],
            )
            .await
            .expect("read");
        tx.commit().await.expect("commit");
        row.get(0)
    }
}

/// One worker: reserves and records calls until the cap refuses it; returns the calls.
fn spend(ledger: Arc<Ledger>, cap: f64, worst: f64, cost: f64) -> usize {
    let mut calls = 0;
    loop {
        match ledger.reserve("run", worst, Some(cap)) {
            Ok(r) => {
                std::thread::yield_now();
                ledger
                    .record_with(&row(cost), None, Some(r))
                    .expect("record");
                ledger.state_db().commit().expect("commit");
                calls += 1;
            }
            Err(LlmError::Budget { .. }) => return calls,
            Err(e) => panic!("{e}"),
        }
    }
}

/// Three processes' ledgers (a connection each, as three serve or build processes would
/// have) spend against one cap on PostgreSQL through the same budget leases as on SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_never_pass_the_cap_together_on_postgres() {
    let db = pg::database().await;
    let (cap, worst, cost) = (1.0, 0.01, 0.004);
    let workers: Vec<Arc<Ledger>> = (0..3)
        .map(|_| {
            let db = StateDb::connect_postgres(&db.url, None).expect("connect");
            Arc::new(Ledger::writing_to(Arc::new(db)).expect("ledger"))
        })
        .collect();
    let state = Watch::connect(&db.url).await;
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A watcher reads spent plus reserved while the workers run: it never passes the cap.
    let watcher = {
        let done = done.clone();
        let mut watch = Watch::connect(&db.url).await;
        tokio::spawn(async move {
            let mut worst_seen = 0.0f64;
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                // One snapshot for both figures: a transaction at REPEATABLE READ.
                let seen = watch.committed_snapshot("run").await;
                worst_seen = worst_seen.max(seen);
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            worst_seen
        })
    };
    let runs: Vec<_> = workers
        .iter()
        .map(|w| {
            let w = w.clone();
            std::thread::spawn(move || spend(w, cap, worst, cost))
        })
        .collect();
    let calls: Vec<usize> = tokio::task::spawn_blocking(move || {
        runs.into_iter()
            .map(|r| r.join().expect("worker"))
            .collect()
    })
    .await
    .expect("join");
    done.store(true, std::sync::atomic::Ordering::Release);
    let worst_seen = watcher.await.expect("watcher");
    assert!(
        worst_seen <= cap + 1e-9,
        "spent + reserved reached {worst_seen}"
    );
    let spent = state.spent("run").await;
    assert!(spent <= cap + 1e-9, "{spent}");
    assert!(calls.iter().filter(|&&n| n > 0).count() >= 2, "{calls:?}");
    // Once every worker is refused, no lease has a call's room free and no call is out, so
    // the workers together spent all but a few calls' worth of the cap.
    assert!(spent > cap - 10.0 * worst, "{spent}: {calls:?}");
    let recorded = workers[0].rows().expect("rows").len();
    assert_eq!(
        recorded,
        calls.iter().sum::<usize>(),
        "every call recorded once"
    );
    drop(workers); // each gives its lease back
    assert_eq!(state.reserved("run").await, 0.0);
}
