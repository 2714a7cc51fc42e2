//! An adopted project's own tests are checks of new work (design: driver.adopt): a task
//! that writes in the adopted crate runs its `cargo test`; breaking one of the person's
//! tests sends the task back with the test named, and it lands once it is fixed. A test that
//! already failed before the task does not block it. Scripted workers; the tests run for
//! real, in the sandbox.

use std::sync::Arc;

use serde_json::json;
use specc_tests::answers::AnswerBook;

use crate::adopt::{commit, tiny_crate};
use crate::build::{child, done, rebuild, write};
use crate::support::specc;

const GREET: &str = "// req: GREET-1\npub fn greet() -> &'static str {\n    \"hello\"\n}\n";
const LIB: &str = "//! Tiny arithmetic.\npub mod counter;\npub mod greet;\n\n/// Adds two numbers.\npub fn add(a: u64, b: u64) -> u64 {\n    a + b\n}\n\nfn helper() {}\n";

/// The tiny crate adopted and committed, with a new section asking for `greet`.
fn adopted_with_greeting() -> tempfile::TempDir {
    let dir = tiny_crate();
    let root = dir.path().display().to_string();
    assert_eq!(specc(&["adopt", &root]).code, 0);
    let mut spec = std::fs::read_to_string(dir.path().join("spec.md")).expect("spec");
    spec.push_str("## Greeting {#greeting}\n\n- [GREET-1] The crate MUST have `pub fn greet() -> &'static str` in `src/greet.rs`, returning `hello`.\n");
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    commit(dir.path(), "adopt, and a greeting");
    dir
}

#[test]
fn a_task_that_breaks_a_persons_test_is_sent_back_naming_it_and_lands_once_fixed() {
    let dir = adopted_with_greeting();
    let broken = LIB.replace("a + b\n", "a + b + 1\n");
    let book = Arc::new(AnswerBook::new(json!({
        "planner": {"": {"decisions": [], "children": [
            child("greet", "GREET-1", "src/**", &["test -f src/greet.rs"], &[]),
        ]}},
        "workers": {"greet": [[
            [write("src/greet.rs", GREET), write("src/lib.rs", &broken)],
            [done()],
            [write("src/lib.rs", LIB)],
            [done()],
        ]]},
    })));
    let b = rebuild(dir.path(), &book, &[]);
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("1 landed"), "{}", b.out);
    // The first `done` was refused by the crate's own tests, naming the broken one.
    let db = rusqlite::Connection::open(dir.path().join(".specc/state.db")).expect("db");
    let told: Vec<String> = db
        .prepare(
            "SELECT body FROM steps WHERE task = 'greet' AND kind = 'tool' ORDER BY attempt, step",
        )
        .expect("steps")
        .query_map([], |r| r.get(0))
        .expect("rows")
        .filter_map(Result::ok)
        .filter(|b: &String| b.contains("\"tool\":\"done\""))
        .collect();
    assert!(
        told[0].contains("The acceptance checks failed")
            && told[0].contains("adopted tiny check 1")
            && told[0].contains("adds"),
        "{told:?}"
    );
    assert!(told[1].contains("passed"), "{told:?}");
    let lib = std::fs::read_to_string(dir.path().join("src/lib.rs")).expect("lib");
    assert!(lib.contains("a + b\n"), "{lib}");
}

#[test]
fn a_test_that_failed_before_the_task_does_not_block_it() {
    let dir = tiny_crate();
    // The person's own test fails before anything is built.
    std::fs::write(
        dir.path().join("tests/add.rs"),
        "#[test]\nfn adds() {\n    assert_eq!(tiny::add(2, 2), 4);\n}\n\n#[test]\nfn wrong_already() {\n    assert_eq!(tiny::add(1, 1), 3);\n}\n",
    )
    .expect("test");
    commit(dir.path(), "a failing test");
    let root = dir.path().display().to_string();
    assert_eq!(specc(&["adopt", &root]).code, 0);
    let mut spec = std::fs::read_to_string(dir.path().join("spec.md")).expect("spec");
    spec.push_str("## Greeting {#greeting}\n\n- [GREET-1] The crate MUST have `pub fn greet() -> &'static str` in `src/greet.rs`, returning `hello`.\n");
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    commit(dir.path(), "adopt, and a greeting");
    let book = Arc::new(AnswerBook::new(json!({
        "planner": {"": {"decisions": [], "children": [
            child("greet", "GREET-1", "src/**", &["test -f src/greet.rs"], &[]),
        ]}},
        "workers": {"greet": [[
            [write("src/greet.rs", GREET), write("src/lib.rs", LIB)],
            [done()],
        ]]},
    })));
    let b = rebuild(dir.path(), &book, &[]);
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("1 landed"), "{}", b.out);
    let db = rusqlite::Connection::open(dir.path().join(".specc/state.db")).expect("db");
    let report: String = db
        .query_row(
            "SELECT body FROM steps WHERE task = 'greet' AND kind = 'acceptance'",
            [],
            |r| r.get(0),
        )
        .expect("acceptance");
    assert!(
        report.contains("wrong_already") && report.contains("failed at your base"),
        "{report}"
    );
}
