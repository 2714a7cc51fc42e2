//! Decisions stay one and current (design: runtime.contested-decisions): a worker contests
//! a decision the spec contradicts and a planner contests an ancestor's; the coordinator
//! settles each, and every later worker reads the settled text alone.

use serde_json::{Value, json};

use crate::build::{TOML, build_book, done, project, write};

fn leaf(key: &str, req: &str, scope: &str, deps: &[&str]) -> Value {
    json!({"key": key, "kind": "work", "title": format!("make {key}"),
           "covers_requirements": [req], "instructions": format!("write {scope}"),
           "write_scope": [scope], "depends_on": deps})
}

/// What attempt `n` of `task` was told as it started (its opening messages, as JSON).
fn told(dir: &std::path::Path, task: &str, n: u32) -> String {
    let db = rusqlite::Connection::open(dir.join(".specc/state.db")).expect("db");
    db.query_row(
        "SELECT messages FROM contexts WHERE task = ?1 AND attempt = ?2",
        rusqlite::params![task, n],
        |r| r.get(0),
    )
    .expect("context")
}

#[test]
fn a_workers_contest_is_settled_and_a_later_worker_reads_only_the_settled_text() {
    let planner = json!({"": {
        "decisions": [{"id": "core.format", "decision": "Records are JSON lines.",
                       "rationale": "easy to read"}],
        "children": [leaf("a", "R-1", "core.rs", &[]), leaf("b", "R-2", "b.rs", &["a"])]}});
    let contest = json!({"name": "contest_decision", "arguments": {
        "decision": "core.format",
        "evidence": "R-1 says \"Alpha MUST exist\" as a binary record: JSON lines cannot hold it",
        "proposed": "Records are CBOR."}});
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "a": [[[contest], [write("core.rs", "// design: core.format\n// req: R-1\n")],
                       [done()]]],
                "b": [[[write("b.rs", "// req: R-2\n")], [done()]]],
            },
            "coordinator": {"core.format": {"decision": "Records are CBOR, one per frame.",
                                            "rationale": "the spec needs binary records"}},
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    // The worker is told the settled text as the call's result.
    let result = b.results_of("a", "contest_decision");
    assert!(
        result[0].contains(
            "The coordinator settled `core.format`: \\\"Records are CBOR, one per frame.\\\""
        ),
        "{result:?}"
    );
    // The coordinator saw both sides, each with its own rationale.
    assert!(b.book.seen().contains(&"coordinate:core.format".to_owned()));
    // The later worker reads the settled text, and only it.
    let b_told = told(b.dir.path(), "b", 1);
    assert!(
        b_told.contains("Records are CBOR, one per frame."),
        "{b_told}"
    );
    assert!(!b_told.contains("JSON lines"), "{b_told}");
    // The decision's entry holds it once the contesting task landed.
    let doc = b.file("design-docs/planned-core.md").expect("doc");
    assert!(
        doc.contains("Decision: Records are CBOR, one per frame."),
        "{doc}"
    );
    // Journaled: a later build reads it too.
    let journal =
        specc_state::Journal::open(&b.dir.path().join(".specc/state.db")).expect("journal");
    let settled = journal.settled().expect("settled");
    assert_eq!(settled.len(), 1, "{settled:?}");
    assert_eq!(settled[0].replaced, "Records are JSON lines.");
}

#[test]
fn a_decision_the_task_was_not_given_cannot_be_contested() {
    let planner = json!({"": {"decisions": [],
        "children": [leaf("a", "R-1", "a.txt", &[]), leaf("b", "R-2", "b.txt", &[])]}});
    let contest = |id: &str| {
        json!({"name": "contest_decision", "arguments": {
        "decision": id, "evidence": "the spec", "proposed": "something else"}})
    };
    let b = build_book(
        project(TOML),
        json!({"planner": planner, "workers": {
            "a": [[[contest("nope.nothing")], [write("a.txt", "// req: R-1\n")], [done()]]],
            "b": [[[write("b.txt", "// req: R-2\n")], [done()]]],
        }}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let result = b.results_of("a", "contest_decision");
    assert!(
        result[0].contains("\"failed\":true")
            && result[0].contains("this task was given no decision"),
        "{result:?}"
    );
}

#[test]
fn a_planners_contest_of_an_ancestors_decision_is_settled_and_read_by_every_worker() {
    let planner = json!({
        "": {"decisions": [{"id": "pair.format", "decision": "Records are JSON lines.",
                            "rationale": "easy to read"}],
             "children": [
                 {"key": "alpha", "kind": "plan", "title": "Alpha", "covers_nodes": ["alpha"],
                  "instructions": "Plan alpha."},
                 leaf("b", "R-2", "b.txt", &[])]},
        "alpha": {"decisions": [],
                  "contested": [{"id": "pair.format", "decision": "Records are CBOR.",
                                 "evidence": "the Alpha section asks for binary records"}],
                  "children": [{"key": "a", "kind": "work", "title": "make a",
                                "covers_requirements": ["R-1"],
                                "instructions": "write a.txt in the format pair.format fixes",
                                "write_scope": ["a.txt"]}]},
    });
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "alpha/a": [[[write("a.txt", "// req: R-1\n")], [done()]]],
                "b": [[[write("b.txt", "// req: R-2\n")], [done()]]],
            },
            "coordinator": {"pair.format": {"decision": "Records are CBOR.",
                                            "rationale": "the spec asks for binary records"}},
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.err.contains("W0321"), "{}", b.err);
    for (task, n) in [("alpha/a", 1), ("b", 1)] {
        let t = told(b.dir.path(), task, n);
        assert!(t.contains("Records are CBOR."), "{task}: {t}");
        assert!(!t.contains("JSON lines"), "{task}: {t}");
    }
}
