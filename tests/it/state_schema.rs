//! The state database's schema is the same on both backends (design: state.backends,
//! state.owners): every owner's tables, migrated on SQLite and on PostgreSQL, have the same
//! columns of the same kinds.

use specc_state::schema::{Tables, migrate};
use specc_state::{JOURNAL, LEASES, PgState, StateDb};

/// Every owner of tables.
const OWNERS: [&Tables; 4] = [
    &specc_llm::LEDGER,
    &JOURNAL,
    &LEASES,
    &specc_runtime::eval::EVAL,
];

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
    let db = StateDb::open(path).expect("open");
    db.now(|c| OWNERS.iter().try_for_each(|t| migrate(c, t)))
        .expect("migrate");
    drop(db);
    let conn = rusqlite::Connection::open(path).expect("reopen");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("tables");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_backends_have_the_same_schema() {
    let db = specc_test_support::pg::database().await;
    let state = PgState::connect(&db.url).expect("connect");
    state.migrate(&OWNERS).await.expect("migrate");
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
    for table in [
        "steps",
        "llm_calls",
        "eval_points",
        "task_leases",
        "schema_owners",
    ] {
        assert!(on_sqlite.iter().any(|(t, _, _)| t == table), "{table}");
    }
    assert_eq!(on_pg, on_sqlite);
}
