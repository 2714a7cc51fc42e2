//! The state database on PostgreSQL (design: state.backends): owners that migrate their
//! tables together migrate them once, one build holds a database at a time, and every
//! connection reads committed whatever the server's default. Each test makes a database of
//! its own in a throwaway cluster (specc-test-support's `pg`) or in `SPECC_TEST_PG_URL`'s.

use specc_test_support::pg;

use std::time::Duration;

use specc_state::{JOURNAL, LEASES, PgState, StateDb};

#[tokio::test]
async fn workers_starting_together_migrate_once() {
    let db = pg::database().await;
    let connects = (0..4).map(|_| async {
        let state = PgState::connect(&db.url)?;
        state.migrate(&[&JOURNAL, &LEASES]).await
    });
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
    let versions: Vec<(String, i64)> = client
        .query(
            "SELECT owner::TEXT, version FROM schema_owners ORDER BY owner",
            &[],
        )
        .await
        .expect("versions")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        versions,
        vec![
            ("journal".to_owned(), JOURNAL.newest()),
            ("leases".to_owned(), LEASES.newest()),
            ("shared-schema".to_owned(), 0),
        ],
        "each owner once"
    );
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
    let pooled = PgState::connect(&db.url).expect("pool");
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
