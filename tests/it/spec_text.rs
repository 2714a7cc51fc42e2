//! Every word of the spec reaches the model that needs it (design: spec.node-text): a rule
//! written as prose without a keyword, a table and a fenced block reach the planner's request
//! and the request of the worker whose task covers their section; a requirement the planner
//! waives as needing no code is covered for the build and shown apart by `specc trace`
//! (design: spec.no-code). Scripted models; the requests are read back from the answer book
//! and the journal.

use serde_json::json;

use crate::build::{TOML, build_book, done, write};

/// A section whose rules live in prose, a table and a code block, and a section of rules
/// about releases.
const SPEC: &str = "# Tabline\n\n## Format {#format}\n\nFields are separated by exactly one tab character.\n\n| code | meaning |\n| --- | --- |\n| T7 | a line with a trailing tab |\n\n```\nline = field *(TAB field) LF\n```\n\n- [R-1] The parser MUST accept every line of this format.\n\n## Releases {#releases}\n\n- [R-2] A released version MUST NOT be modified.\n";

const PHRASES: [&str; 3] = [
    "Fields are separated by exactly one tab character.",
    "| T7 | a line with a trailing tab |",
    "line = field *(TAB field) LF",
];

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("spec.md"), SPEC).expect("spec");
    std::fs::write(dir.path().join("specc.toml"), TOML).expect("toml");
    dir
}

#[test]
fn prose_tables_and_code_blocks_reach_the_planner_and_the_covering_worker() {
    let planner = json!({"": {"decisions": [], "children": [
        {"key": "parser", "kind": "work", "title": "parser", "covers_requirements": ["R-1"],
         "instructions": "write the parser", "write_scope": ["parser.txt"],
         "acceptance": ["test -f parser.txt"]}],
        "no_code": [{"id": "R-2", "reason": "a rule about releases, not about the code"}]}});
    let b = build_book(
        project(),
        json!({"planner": planner, "workers": {
            "parser": [[[write("parser.txt", "// req: R-1\n")], [done()]]]}}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    // The planner read the section as written, and every requirement of its part in full.
    let asked = b.book.asked("submit_plan");
    let shown: Vec<&str> = asked[0]["node"]["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .filter_map(|s| s["text"].as_str())
        .collect();
    for p in PHRASES {
        assert!(shown.iter().any(|t| t.contains(p)), "{p}: {shown:?}");
    }
    let requirements = &asked[0]["node"]["requirements"];
    assert_eq!(requirements[0]["id"], "R-1");
    assert_eq!(
        requirements[1]["text"],
        "[R-2] A released version MUST NOT be modified."
    );
    // So did the worker whose task covers the section.
    let db = rusqlite::Connection::open(b.dir.path().join(".specc/state.db")).expect("db");
    let told: String = db
        .query_row(
            "SELECT messages FROM contexts WHERE task = 'parser'",
            [],
            |r| r.get(0),
        )
        .expect("context");
    let told: serde_json::Value = serde_json::from_str(&told).expect("json");
    let task = told[1]["text"].as_str().expect("the task message");
    for p in PHRASES {
        assert!(task.contains(p), "{p}: {task}");
    }
    // The waived requirement was no E0304, and trace shows it apart, with its reason.
    assert!(!b.err.contains("E0304"), "{}", b.err);
    let spec = b.dir.path().join("spec.md").display().to_string();
    let trace = crate::support::specc(&["trace", &spec, "--fail-under", "100"]);
    assert!(
        trace
            .stdout
            .contains("waived: needs no code (a rule about releases, not about the code)"),
        "{}",
        trace.stdout
    );
    assert!(
        trace
            .stdout
            .contains("MUST requirements: 1 (1 more waived as needing no code)"),
        "{}",
        trace.stdout
    );
}

/// A nested section's requirements are in the root planner's request, so a first answer
/// that covers them with work children of its own is valid: no repair.
#[test]
fn a_root_answer_covering_nested_requirements_is_valid_at_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = "# Deep\n\n## Outer {#outer}\n\nIntro.\n\n### Inner {#outer/inner}\n\n- [R-1] Inner MUST hold.\n\n#### Innermost {#outer/inner/most}\n\n- [R-2] Innermost MUST hold.\n";
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    std::fs::write(dir.path().join("specc.toml"), TOML).expect("toml");
    let leaf = |k: &str, r: &str| {
        json!({"key": k, "kind": "work", "title": k, "covers_requirements": [r],
               "instructions": format!("write {k}.txt"), "write_scope": [format!("{k}.txt")],
               "acceptance": [format!("test -f {k}.txt")]})
    };
    let planner = json!({"": {"decisions": [], "children": [leaf("a", "R-1"), leaf("b", "R-2")]}});
    let b = build_book(
        dir,
        json!({"planner": planner, "workers": {
            "a": [[[write("a.txt", "// req: R-1\n")], [done()]]],
            "b": [[[write("b.txt", "// req: R-2\n")], [done()]]]}}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let asked = b.book.asked("submit_plan");
    assert_eq!(asked.len(), 1, "one planner call, no repair: {asked:?}");
    let ids: Vec<&str> = asked[0]["node"]["requirements"]
        .as_array()
        .expect("requirements")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, ["R-1", "R-2"]);
}
