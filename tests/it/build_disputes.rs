//! Failures go where they can be fixed (issue 31), with scripted models: a worker disputes
//! a wrong check and the planner that wrote it changes it, so the task lands; a leaf whose
//! ladder is exhausted is re-planned by its parent planner and lands; an attempt that
//! failed in its checks hands its work to the next one; a lock file a build writes outside
//! the scope is neither undone nor landed by surprise.

use serde_json::{Value, json};

use super::build::{TOML, build_with, child, done, write};

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn dispute(check: &str) -> Value {
    call(
        "dispute_check",
        json!({"check": check, "evidence": "the requirement asks for `alpha` in lower case; the check greps for ALPHA",
               "output": "exit status 1"}),
    )
}

#[test]
fn a_disputed_check_goes_to_its_planner_whose_new_check_lets_the_kept_work_land() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["grep -q ALPHA a.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &["a"]),
        ]},
        "replan:a": {"instructions": "write `alpha` to a.txt", "acceptance": ["grep -q alpha a.txt"],
                     "reason": "the check contradicted R-1: it wanted upper case"},
    });
    let workers = json!({
        // The first attempt writes the right thing, fails the wrong check, names a check
        // the task does not have (told their names), then disputes the real one.
        "a": [
            [[write("a.txt", "alpha\n")], [done()], [dispute("acceptance #9")], [dispute("acceptance #1")]],
            // The second starts from the first's work: it only finishes.
            [[done()]],
        ],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
    });
    let b = build_with(TOML, planner, workers);
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    assert_eq!(
        b.file("a.txt").as_deref(),
        Some("alpha\n"),
        "the kept work landed"
    );
    assert_eq!(b.file("b.txt").as_deref(), Some("beta\n"));
    assert!(
        b.err.contains("re-planned  a: the planner changed its instructions and acceptance: the check contradicted R-1"),
        "{}",
        b.err
    );
    let steps = b.steps();
    assert!(
        steps.iter().any(|(t, k, body)| t == "a"
            && k == "tool"
            && body.contains(
                "`acceptance #9` is not one of this task's checks; they are `acceptance #1`"
            )),
        "an unknown check goes back with the names"
    );
    let replan = steps
        .iter()
        .find(|(t, k, _)| t == "a" && k == "replan")
        .map(|(_, _, body)| serde_json::from_str::<Value>(body).expect("json"))
        .expect("the re-plan is journaled");
    assert_eq!(replan["dispute"]["check"], "acceptance #1");
    assert_eq!(replan["replan"]["acceptance"][0], "grep -q alpha a.txt");
    assert_eq!(replan["by"], "planner");
    assert_eq!(replan["carried"][0]["path"], "a.txt", "{replan}");
    assert_eq!(
        b.book
            .seen()
            .iter()
            .filter(|s| s.starts_with("a#2"))
            .count(),
        1,
        "the second attempt needed one call"
    );
}

#[test]
fn a_second_attempt_starts_from_the_work_of_a_first_that_failed_in_its_checks() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["grep -q 'alpha beta' a.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]},
        "replan:a": {"instructions": "a.txt must read `alpha beta`", "reason": ""},
    });
    let edit = call(
        "edit",
        json!({"path": "a.txt", "old": "alpha", "new": "alpha beta"}),
    );
    let workers = json!({
        "a": [
            [[write("a.txt", "alpha\n")], [done()], [done()]],
            // `edit` finds the text only if the first attempt's file is there.
            [[edit], [done()]],
        ],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
    });
    let b = build_with(TOML, planner, workers);
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha beta\n"));
    let steps = b.steps();
    assert!(
        !steps
            .iter()
            .any(|(t, k, body)| t == "a" && k == "tool" && body.contains("error:")),
        "the edit found the first attempt's file"
    );
}

/// Issue 38: a planner that re-plans a leaf sees what became of its other children: `c`
/// landed, `b` waits for the leaf.
#[test]
fn an_exhausted_leaf_is_replanned_by_its_parent_before_the_build_gives_up_on_it() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("c", "R-1", "c.txt", &[], &[]),
            child("a", "R-1", "a.txt", &["test -f never.txt"], &["c"]),
            child("b", "R-2", "b.txt", &[], &["a"]),
        ]},
        "replan:a": {"instructions": "write a.txt, then check again"},
        "replan-parent:a": {"instructions": "write a.txt", "acceptance": ["test -f a.txt"],
                            "reason": "never.txt is named nowhere in the spec: the check was mine, and wrong"},
    });
    let failing = json!([[write("a.txt", "alpha\n")], [done()], [done()]]);
    let workers = json!({
        "a": [failing.clone(), failing, [[done()]]],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
        "c": [[[write("c.txt", "gamma\n")], [done()]]],
    });
    let b = build_with(TOML, planner, workers);
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    assert!(
        b.err
            .contains("re-planned  a: its parent planner changed its instructions and acceptance"),
        "{}",
        b.err
    );
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha\n"));
    assert_eq!(
        b.file("b.txt").as_deref(),
        Some("beta\n"),
        "its dependent ran"
    );
    let seen = b.book.seen();
    let asked = |k: &str| seen.iter().filter(|s| *s == k).count();
    assert_eq!(
        (asked("plan:replan:a"), asked("plan:replan-parent:a")),
        (1, 1),
        "{seen:?}"
    );
    let steps = b.steps();
    assert!(
        steps
            .iter()
            .any(|(t, k, body)| t == "a" && k == "replan" && body.contains("\"by\":\"parent\""))
    );
    // Both re-plans saw the siblings' outcomes, and the failed checks' output.
    let asked = b.book.asked("replan_task");
    assert_eq!(asked.len(), 2, "{asked:?}");
    for request in &asked {
        let siblings = &request["siblings"];
        let outcome = |id: &str| {
            siblings
                .as_array()
                .and_then(|s| s.iter().find(|x| x["id"] == id))
                .map(|x| x["outcome"].clone())
        };
        assert_eq!(outcome("c"), Some(json!("landed")), "{request}");
        assert_eq!(outcome("b"), Some(json!("pending")), "{request}");
    }
    assert!(
        asked[0]["failure"]
            .as_str()
            .is_some_and(|f| f.contains("check `acceptance #1`: exit status 1")),
        "{}",
        asked[0]
    );
}

#[test]
fn a_lock_file_written_outside_the_scope_stays_for_the_checks_and_does_not_land() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f Cargo.lock", "test -f a.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]},
    });
    let workers = json!({
        "a": [[
            [write("a.txt", "alpha\n")],
            [call("run", json!({"command": "echo '# resolved' > Cargo.lock && mkdir -p __pycache__ && echo x > __pycache__/m.pyc"}))],
            [done()],
        ]],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
    });
    let b = build_with(TOML, planner, workers);
    assert_eq!(b.code, 0, "the checks saw Cargo.lock: {}\n{}", b.out, b.err);
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha\n"));
    assert!(
        b.file("Cargo.lock").is_none(),
        "outside the scope: not landed"
    );
    assert!(b.file("__pycache__/m.pyc").is_none(), "a cache never lands");
    let steps = b.steps();
    assert!(
        !steps
            .iter()
            .any(|(_, _, body)| body.contains("were undone")),
        "nothing was undone"
    );
    let submit = steps
        .iter()
        .find(|(t, k, _)| t == "a" && k == "submit")
        .map(|(_, _, body)| serde_json::from_str::<Value>(body).expect("json"))
        .expect("submitted");
    assert_eq!(submit["generated"], json!(["Cargo.lock"]), "{submit}");
    assert_eq!(submit["left_out"], json!([]), "{submit}");
}

#[test]
fn the_next_build_rechecks_a_replanned_task_with_the_checks_it_landed_with() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
            child("b", "R-2", "b.txt", &["grep -q BETA b.txt"], &["a"]),
        ]},
        "replan:b": {"instructions": "write `beta` to b.txt", "acceptance": ["grep -q beta b.txt"],
                     "reason": "R-2 says nothing of upper case"},
    });
    let workers = json!({
        "a": [
            [[write("a.txt", "alpha\n")], [done()]],
            [[write("a.txt", "alpha, again\n")], [done()]],
        ],
        "b": [
            [[write("b.txt", "beta\n")], [done()], [dispute("acceptance #1")]],
            [[done()]],
        ],
    });
    let b = build_with(TOML, planner, workers);
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    // `a` runs again: `b`, up to date, is re-checked — with its new check, which passes.
    let again = super::build::rebuild(b.dir.path(), &b.book, &["--force", "a"]);
    assert_eq!(again.code, 0, "{}\n{}", again.out, again.err);
    assert!(
        again.err.contains("re-checked  b: its checks pass"),
        "{}",
        again.err
    );
    assert!(
        !b.book.seen().iter().any(|s| s.starts_with("b#3")),
        "b did not run again: {:?}",
        b.book.seen()
    );
}
