use rusqlite::Connection;

use super::*;
use crate::{JOURNAL, LEASES};

fn versions(conn: &Connection) -> Vec<(String, i64)> {
    conn.prepare("SELECT owner, version FROM schema_owners ORDER BY owner")
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .expect("versions")
}

fn legacy(conn: &Connection) -> i64 {
    conn.query_row(LEGACY_QUERY, [], |r| r.get(0))
        .expect("legacy")
}

fn tables(conn: &Connection) -> i64 {
    conn.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'
         AND name NOT IN ('schema_owners', 'schema_version')",
        [],
        |r| r.get(0),
    )
    .expect("tables")
}

#[test]
fn each_owner_migrates_its_own_tables_once() {
    let mut conn = Connection::open_in_memory().expect("open");
    migrate(&mut conn, &JOURNAL).expect("journal");
    assert_eq!(tables(&conn), 9, "the journal's nine tables, nobody else's");
    migrate(&mut conn, &JOURNAL).expect("again");
    migrate(&mut conn, &LEASES).expect("leases");
    assert_eq!(tables(&conn), 10);
    assert_eq!(
        versions(&conn),
        vec![
            ("journal".to_owned(), JOURNAL.newest()),
            ("leases".to_owned(), LEASES.newest()),
            (SHARED.to_owned(), 0),
        ]
    );
    assert_eq!(
        legacy(&conn),
        LEGACY_SEALED,
        "a specc from before refuses it"
    );
}

#[test]
fn a_database_of_the_one_shared_schema_is_read_as_its_owners_steps() {
    // Version 2 of the shared schema: the journal's first step and the leases', not the
    // journal's second (version 3).
    let mut conn = Connection::open_in_memory().expect("open");
    conn.execute_batch(&format!(
        "{};
         CREATE TABLE schema_version (version INTEGER NOT NULL);
         INSERT INTO schema_version VALUES (1), (2);
         INSERT INTO followups (run, task, why, work_order) VALUES ('r', 't', 'w', '{{}}');",
        Dialect::Sqlite.spell(JOURNAL.migrations[0].sql)
    ))
    .expect("old");
    migrate(&mut conn, &JOURNAL).expect("journal");
    migrate(&mut conn, &LEASES).expect("leases");
    let kept: String = conn
        .query_row("SELECT why FROM followups", [], |r| r.get(0))
        .expect("kept");
    assert_eq!(kept, "w", "an old database keeps its rows");
    let seq: Option<i64> = conn
        .query_row("SELECT seq FROM followups", [], |r| r.get(0))
        .expect("the journal's second step ran");
    assert_eq!(seq, None);
    assert_eq!(
        versions(&conn),
        vec![
            ("journal".to_owned(), JOURNAL.newest()),
            ("leases".to_owned(), 1),
            (SHARED.to_owned(), 2)
        ]
    );
    // The leases' table was made by version 2: recorded, not made again. The journal's
    // third step adds `contexts`, its fourth `settled`.
    assert_eq!(
        tables(&conn),
        9,
        "no task_leases: version 2 held it already"
    );
    assert_eq!(legacy(&conn), LEGACY_SEALED);
}

#[test]
fn tables_newer_than_this_specc_knows_are_refused() {
    let mut conn = Connection::open_in_memory().expect("open");
    migrate(&mut conn, &JOURNAL).expect("journal");
    conn.execute(
        "UPDATE schema_owners SET version = ?1 WHERE owner = 'journal'",
        [JOURNAL.newest() + 1],
    )
    .expect("newer");
    let e = migrate(&mut conn, &JOURNAL).expect_err("newer");
    assert!(e.to_string().contains("journal tables"), "{e}");
    assert!(e.to_string().contains("newer than this specc knows"), "{e}");
}

#[test]
fn the_dialects_spell_every_type_word() {
    for d in [Dialect::Sqlite, Dialect::Postgres] {
        for t in [&JOURNAL, &LEASES] {
            for m in t.migrations {
                let sql = d.spell(m.sql);
                assert!(!sql.contains('{'), "{d:?}: {sql}");
            }
        }
    }
    assert!(
        Dialect::Postgres
            .spell("{real}")
            .contains("DOUBLE PRECISION")
    );
}
