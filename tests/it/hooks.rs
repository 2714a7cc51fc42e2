//! `[hooks]` (design: project.hooks): each event's JSON reaches a hook that writes its
//! standard input to a file — a plan awaiting approval, a task that failed, a build that
//! finished — and a hook that fails or hangs is reported (W0603) while the build still ends
//! as it would have. The budget's 80 % is tested on the library's `Hooks`.

use serde_json::{Value, json};

use crate::build::{TOML, build_with, child, done, write};

/// `[hooks]` appending each event's JSON, one per line, to `events.jsonl` in the spec's
/// directory; `extra` adds more.
fn hooks(extra: &str) -> String {
    format!(
        "{TOML}\n[hooks]\ntimeout_seconds = 2\n\
         plan_awaiting_approval = \"cat >> events.jsonl; echo >> events.jsonl\"\n\
         task_failed = \"cat >> events.jsonl; echo >> events.jsonl\"\n{extra}"
    )
}

fn events(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a hook's input is JSON"))
        .collect()
}

#[test]
fn a_failed_task_and_the_finished_build_reach_their_hooks_and_bad_hooks_only_warn() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f never.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]},
        "replan:a": {"instructions": "write a.txt, then check again"},
    });
    let failing = json!([[write("a.txt", "alpha\n")], [done()], [done()]]);
    let landing = json!([[write("b.txt", "beta\n")], [done()]]);
    let toml = hooks(
        "build_finished = [\"cat >> events.jsonl; echo >> events.jsonl\", \"exit 3\", \"sleep 30\"]\n",
    );
    let started = std::time::Instant::now();
    let b = build_with(
        &toml,
        planner,
        json!({"a": [failing.clone(), failing], "b": [landing]}),
    );
    let took = started.elapsed();
    // The build ends as it would have without hooks: a failed task is exit 1.
    assert_eq!(b.code, 1, "{}\n{}", b.out, b.err);
    let got = events(b.dir.path());
    let failed = got
        .iter()
        .find(|e| e["event"] == "task_failed")
        .unwrap_or_else(|| panic!("no task_failed event: {got:?}"));
    assert_eq!(failed["task"], "a");
    assert!(failed["reason"].as_str().is_some_and(|r| !r.is_empty()));
    let finished = got
        .iter()
        .find(|e| e["event"] == "build_finished")
        .unwrap_or_else(|| panic!("no build_finished event: {got:?}"));
    assert_eq!(finished["outcome"], "failed");
    assert_eq!(finished["exit"], 1);
    assert_eq!(finished["landed"], 1);
    assert_eq!(finished["failed"], 1);
    assert!(
        finished["run"]
            .as_str()
            .is_some_and(|r| r.starts_with("build-"))
    );
    // The failing and the hanging hook are reported, and the hanging one was killed at its
    // timeout: the build did not wait 30 s for it.
    assert!(
        b.err.contains("W0603") && b.err.contains("`exit 3` exited with status 3"),
        "{}",
        b.err
    );
    assert!(
        b.err.contains("`sleep 30` ran past its timeout of 2 s"),
        "{}",
        b.err
    );
    assert!(
        took.as_secs() < 25,
        "the hanging hook held the build for {took:?}"
    );
}

#[test]
fn a_plan_saved_for_approval_reaches_its_hook() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
            child("b", "R-2", "b.txt", &["test -f b.txt"], &[]),
        ]},
    });
    let dir = crate::build::project(&hooks(""));
    let book = std::sync::Arc::new(specc_tests::answers::AnswerBook::new(
        json!({"planner": planner, "workers": {}}),
    ));
    let run = crate::build::command(dir.path(), &book, "build", &["--approve", "plan"]);
    let err = run.err;
    assert_eq!(run.code, 0, "{err}");
    let got = events(dir.path());
    let e = got
        .iter()
        .find(|e| e["event"] == "plan_awaiting_approval")
        .unwrap_or_else(|| panic!("no plan_awaiting_approval event: {got:?}\n{err}"));
    assert_eq!(e["work_tasks"], 2);
    assert!(
        e["approve"]
            .as_str()
            .is_some_and(|a| a.ends_with("--approve"))
    );
    assert!(
        e["plan"]
            .as_str()
            .is_some_and(|p| p.ends_with("approved-plan.json"))
    );
}

#[test]
fn the_budget_hook_fires_once_at_eighty_percent() {
    let dir = tempfile::tempdir().expect("dir");
    let table: specc_project::hooks::HooksTable =
        toml::from_str("budget_spent_80 = \"cat >> events.jsonl; echo >> events.jsonl\"")
            .expect("table");
    let hooks = specc_project::hooks::Hooks::new(table, dir.path(), Vec::new());
    hooks.spent("build-1", 3.0, Some(5.0));
    hooks.spent("build-1", 4.1, Some(5.0));
    hooks.spent("build-1", 4.9, Some(5.0));
    assert!(hooks.finish().is_empty());
    let got = events(dir.path());
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["event"], "budget_spent_80");
    assert_eq!(got[0]["spent_dollars"], 4.1);
    assert_eq!(got[0]["budget_dollars"], 5.0);
}
