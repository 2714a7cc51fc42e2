//! Deliberate breaking with scripted workers (the answer book): a task patches core code
//! outside its write scope with `break_scope`, changing the decision the code relied on;
//! once it lands, `specc check` on the head finds the reference another task pinned to the
//! old text, a revisit task re-pins it, and the final `specc check` is clean. And a worker
//! that reports two decisions contradicting each other gets them merged by the coordinator,
//! with the same revisits for the code pinned to the old texts.

use serde_json::{Value, json};

use crate::build::{TOML, build_book, done, project, write};

fn leaf(key: &str, req: Option<&str>, scope: &str, deps: &[&str]) -> Value {
    json!({"key": key, "kind": "work", "title": format!("make {key}"),
           "covers_requirements": req.into_iter().collect::<Vec<_>>(),
           "instructions": format!("write {scope}"), "write_scope": [scope], "depends_on": deps})
}

fn pin(path: &str, line: u32) -> Value {
    json!({"name": "pin", "arguments": {"path": path, "line": line}})
}

#[test]
fn a_deliberate_break_gets_its_readers_revisited_and_re_pinned() {
    let planner = json!({"": {
    "decisions": [{"id": "core.format", "decision": "Records are JSON lines.",
                   "rationale": "easy to read"}],
    "children": [
        leaf("a", Some("R-1"), "core.rs", &[]),
        leaf("user", None, "user.rs", &["a"]),
        leaf("b", Some("R-2"), "b.rs", &["user"]),
    ]}});
    let broken = json!({"name": "break_scope", "arguments": {
        "path": "core.rs", "old": "fn encode() {}",
        "new": "// design: core.format (CBOR now: b writes in bulk)\nfn encode() {}",
        "why": "JSON lines are too slow for b's bulk writes",
        "decision": "core.format", "decision_text": "Records are CBOR."}});
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "a": [[[write("core.rs", "// design: core.format\nfn encode() {} // req: R-1\n")], [done()]]],
                "user": [[[write("user.rs", "// design: core.format\nfn read_record() {}\n")],
                          [pin("user.rs", 1)], [done()]]],
                "b": [[[write("b.rs", "fn bulk() {} // req: R-2\n"), broken], [done()]]],
                "revisit-user-rs-1-core-format": [[[pin("user.rs", 1)], [done()]]],
            },
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    // The break landed: core.rs patched outside b's scope, the decision's text changed.
    let core = b.file("core.rs").expect("core.rs");
    assert!(core.contains("design: core.format (CBOR now"), "{core}");
    let doc = b.file("design-docs/planned-core.md").expect("doc");
    assert!(doc.contains("Decision: Records are CBOR."), "{doc}");
    assert!(
        doc.contains("Changed on purpose: JSON lines are too slow"),
        "{doc}"
    );
    // user.rs was pinned to the old text; its revisit re-pinned it to the new one.
    assert!(
        b.err
            .contains("follow-up   revisit-user-rs-1-core-format after b"),
        "{}",
        b.err
    );
    let seen = b.book.seen();
    assert!(
        seen.contains(&"revisit-user-rs-1-core-format#1.0".to_owned()),
        "{seen:?}"
    );
    let user = b.file("user.rs").expect("user.rs");
    assert!(user.starts_with("// design: core.format@"), "{user}");
    // And the head checks clean: no stale pin is left.
    assert!(b.out.contains("0 errors"), "{}", b.out);
    let check = crate::support::specc(&["check", &b.dir.path().join("out").display().to_string()]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    // Building again keeps the decision the break changed: the seed does not write the
    // plan's old text over it, and nothing runs.
    let again = crate::build::rebuild(b.dir.path(), &b.book, &[]);
    assert_eq!(again.code, 0, "{}\n{}", again.err, again.out);
    let doc = b.file("design-docs/planned-core.md").expect("doc");
    assert!(doc.contains("Decision: Records are CBOR."), "{doc}");
    assert!(again.out.contains("3 up to date"), "{}", again.out);
}

/// The answers of a build where task b reports two decisions contradicting each other: the
/// coordinator merges them, and core.rs, pinned to the old text, is revisited.
pub(crate) fn contradiction_book() -> Value {
    let planner = json!({"": {
    "decisions": [
        {"id": "core.format", "decision": "Records are JSON lines.", "rationale": "easy"},
        {"id": "net.wire", "decision": "Records go over the wire as CBOR.", "rationale": "small"},
    ],
    "children": [
        leaf("a", Some("R-1"), "core.rs", &[]),
        leaf("b", Some("R-2"), "b.rs", &["a"]),
    ]}});
    let report = json!({"name": "report_contradiction", "arguments": {
        "a": "core.format", "b": "net.wire",
        "explanation": "the store writes JSON lines but the wire sends the stored bytes as CBOR"}});
    json!({
        "planner": planner,
        "workers": {
            "a": [[[write("core.rs", "// design: core.format\nfn encode() {} // req: R-1\n")],
                   [pin("core.rs", 1)], [done()]]],
            "b": [[[write("b.rs", "fn send() {} // req: R-2\n"), report], [done()]]],
            "revisit-core-rs-1-core-format": [[[pin("core.rs", 1)], [done()]]],
        },
        "coordinator": {"core.format": {"decision": "Records are CBOR, on disk and on the wire.",
                                        "rationale": "one format"}},
    })
}

#[test]
fn a_reported_contradiction_is_merged_by_the_coordinator_and_its_readers_revisited() {
    let b = build_book(project(TOML), contradiction_book());
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(
        b.err.contains("merged      `core.format` and `net.wire`"),
        "{}",
        b.err
    );
    let docs = format!(
        "{}{}",
        b.file("design-docs/planned-core.md").expect("core doc"),
        b.file("design-docs/planned-net.md").expect("net doc")
    );
    assert_eq!(
        docs.matches("Decision: Records are CBOR, on disk and on the wire.")
            .count(),
        2,
        "{docs}"
    );
    let seen = b.book.seen();
    assert!(
        seen.contains(&"coordinate:core.format".to_owned()),
        "{seen:?}"
    );
    assert!(
        seen.contains(&"revisit-core-rs-1-core-format#1.0".to_owned()),
        "{seen:?}"
    );
    let check = crate::support::specc(&["check", &b.dir.path().join("out").display().to_string()]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}
