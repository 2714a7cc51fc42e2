//! The state database's two backends (design: state.backends): the same schema from the
//! same migrations on SQLite and PostgreSQL, migrations that run once however many workers
//! start together, and budget leases that hold one cap across workers on PostgreSQL as
//! they do on SQLite (budget_lease.rs).

#[path = "common/pg.rs"]
mod pg;

#[path = "common/row.rs"]
mod rows;

use std::sync::Arc;
use std::time::Duration;

use rows::row;
use specc_llm::LlmError;
use specc_llm::pg::PgState;
use specc_llm::{Ledger, StateDb};

/// A column's type, in words both backends' names map to.
fn kind(ty: &str) -> &'static str {
    match ty.to_ascii_lowercase().as_str() {
        "integer" | "bigint" => "int",
        "real" | "double precision" => "real",
        "text" => "text",
        other => panic!("a type the schema does not use: {other}"),
    }
}

fn sqlite_columns(path: &std::path::Path) -> Vec<(String, String, &'static str)> {
    let mut conn = specc_llm::open_state_db(path).expect("open");
    specc_llm::schema::migrate(&mut conn).expect("migrate");
    let mut tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("tables");
    tables.sort();
    let mut out = Vec::new();
    for t in tables {
        let cols: Vec<(String, String)> = conn
            .prepare(&format!("PRAGMA table_info({t})"))
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(1)?, r.get(2)?)))?.collect())
            .expect("columns");
        for (c, ty) in cols {
            out.push((t.clone(), c, kind(&ty)));
        }
    }
    out
}

#[tokio::test]
async fn both_backends_have_the_same_schema() {
    let db = pg::database().await;
    let state = PgState::connect(&db.url).await.expect("connect");
    let mut on_pg: Vec<(String, String, &'static str)> = state
        .columns()
        .await
        .expect("columns")
        .into_iter()
        .map(|(t, c, ty)| (t, c, kind(&ty)))
        .collect();
    on_pg.sort_by(|a, b| a.0.cmp(&b.0));
    let dir = tempfile::tempdir().expect("dir");
    let on_sqlite = sqlite_columns(&dir.path().join("state.db"));
    assert_eq!(on_pg.len(), on_sqlite.len());
    assert!(on_sqlite.iter().any(|(t, _, _)| t == "steps"));
    assert_eq!(on_pg, on_sqlite);
}

#[tokio::test]
async fn workers_starting_together_migrate_once() {
    let db = pg::database().await;
    let connects = (0..4).map(|_| PgState::connect(&db.url));
    let states = futures_util::future::join_all(connects).await;
    assert!(
        states.iter().all(Result::is_ok),
        "{:?}",
        states.iter().find(|s| s.is_err()).map(|s| s.as_ref().err())
    );
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let versions: Vec<i64> = client
        .query("SELECT version FROM schema_version ORDER BY version", &[])
        .await
        .expect("versions")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        versions,
        (1..=specc_llm::schema::newest()).collect::<Vec<_>>(),
        "each migration once"
    );
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
    let state = PgState::connect(&db.url).await.expect("connect");
    let (cap, worst, cost) = (1.0, 0.01, 0.004);
    let workers: Vec<Arc<Ledger>> = (0..3)
        .map(|_| {
            let db = StateDb::connect_postgres(&db.url, None).expect("connect");
            Arc::new(Ledger::on_state(Arc::new(db)))
        })
        .collect();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A watcher reads spent plus reserved while the workers run: it never passes the cap.
    let watcher = {
        let (state, done) = (state.clone(), done.clone());
        tokio::spawn(async move {
            let mut worst_seen = 0.0f64;
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                // One snapshot for both figures: a transaction at REPEATABLE READ.
                let seen = state.committed_snapshot("run").await.expect("read");
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
    let spent = state.spent("run").await.expect("spent");
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
    assert_eq!(state.reserved("run").await.expect("reserved"), 0.0);
}

/// One build per PostgreSQL state database: the advisory lock a build takes is refused to
/// a second connection while the first holds it, and free again once that one is gone (as a
/// process's connection goes when it dies).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_database_holds_one_build_at_a_time() {
    let db = pg::database().await;
    let url = db.url.clone();
    tokio::task::spawn_blocking(move || {
        const KEY: i64 = 42;
        let first = StateDb::connect_postgres(&url, None).expect("first");
        let second = StateDb::connect_postgres(&url, None).expect("second");
        assert_eq!(first.try_advisory_lock(KEY), Ok(true));
        assert_eq!(
            second.try_advisory_lock(KEY),
            Ok(false),
            "held by the first"
        );
        drop(first);
        // The server notices the closed connection at once, but let it.
        let mut got = false;
        for _ in 0..50 {
            got = second.try_advisory_lock(KEY).expect("lock");
            if got {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(got, "free once its holder's connection is gone");
    })
    .await
    .expect("test");
}

/// specc's connections run at READ COMMITTED even on a server whose default is stricter
/// (the budget's growth and the claims rely on it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connection_reads_committed_whatever_the_servers_default() {
    let db = pg::database().await;
    let (admin, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let name: String = admin
        .query_one("SELECT current_database()", &[])
        .await
        .expect("name")
        .get(0);
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {name} SET default_transaction_isolation = 'repeatable read'"
        ))
        .await
        .expect("a stricter default");
    let url = db.url.clone();
    let seen = tokio::task::spawn_blocking(move || {
        let state = StateDb::connect_postgres(&url, None).expect("connect");
        state
            .now(|c| c.query_one("SHOW transaction_isolation", &[])?.text(0))
            .expect("show")
    })
    .await
    .expect("joined");
    assert_eq!(seen, "read committed");
    let pooled = PgState::connect(&db.url).await.expect("pool");
    let shown: String = pooled
        .client()
        .await
        .expect("client")
        .query_one("SHOW transaction_isolation", &[])
        .await
        .expect("show")
        .get(0);
    assert_eq!(shown, "read committed");
}
