//! Building again: an unchanged spec does nothing; an edited decision re-runs exactly the
//! tasks that read it; a task that lands again has its dependents' checks re-run on the new
//! head (no model call) and only those that now fail run again; `--force` re-runs one task;
//! a task that left the plan is reported.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use specc_tests::answers::AnswerBook;

use crate::build::{TOML, child, done, project, write};

const SPEC_WITH_DECISION: &str = "# Pair\n\n> Decision: {#pair.words} Words are lower case.\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n## Beta\n\n- [R-2] Beta MUST exist.\n";

fn build(dir: &Path, book: &Arc<AnswerBook>, extra: &[&str]) -> crate::build::Run {
    crate::build::rebuild(dir, book, extra)
}

fn book(planner: Value, workers: Value) -> Arc<AnswerBook> {
    Arc::new(AnswerBook::new(
        json!({"planner": planner, "workers": workers}),
    ))
}

fn calls(book: &AnswerBook, task: &str) -> usize {
    book.seen()
        .iter()
        .filter(|s| s.starts_with(&format!("{task}#")))
        .count()
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join("out").join(file)).unwrap_or_default()
}

#[test]
fn an_unchanged_spec_does_nothing_and_an_edited_decision_reruns_its_readers() {
    let dir = project(TOML);
    std::fs::write(dir.path().join("spec.md"), SPEC_WITH_DECISION).expect("spec");
    let attempt = |f: &str, text: &str| json!([[write(f, text)], [done()]]);
    let b = book(
        json!({"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &[], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]}}),
        json!({"a": [attempt("a.txt", "alpha\n"), attempt("a.txt", "alpha, again\n")],
               "b": [attempt("b.txt", "beta\n"), attempt("b.txt", "beta, again\n")]}),
    );
    let first = build(dir.path(), &b, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.err, first.out);
    let after_first = b.seen().len();
    // `specc status` reads what the build left, without writing.
    let spec = dir.path().join("spec.md").display().to_string();
    let status = crate::support::specc(&["status", &spec]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(
        status
            .stdout
            .contains(": finished\ntasks: 2 landed\nspent: $0.0000 (no budget cap)\n"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("landed: a (") && status.stdout.contains("landed: b ("),
        "{}",
        status.stdout
    );
    let json = crate::support::specc(&["status", &spec, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(v["status"]["counts"], json!([["landed", 2]]));
    let metrics = crate::support::specc(&["status", &spec, "--format", "prometheus"]);
    assert_eq!(metrics.code, 0, "{}", metrics.stderr);
    for series in [
        "specc_tasks{run=\"",
        "\",state=\"landed\"} 2",
        "\",state=\"failed\"} 0",
        "\",outcome=\"committed\"} 2",
        "\",role=\"worker\",outcome=\"ok\"} 4",
    ] {
        assert!(
            metrics.stdout.contains(series),
            "{series}: {}",
            metrics.stdout
        );
    }
    let again = build(dir.path(), &b, &[]);
    assert_eq!(again.code, 0, "{}", again.err);
    assert!(
        again.out.contains("2 work tasks: 2 up to date"),
        "{}",
        again.out
    );
    assert_eq!(
        b.seen().len(),
        after_first,
        "an unchanged spec asks no model"
    );
    // Both tasks read the spec's decision: a new text re-runs both (the plan is asked
    // again too, its request having changed).
    let edited = SPEC_WITH_DECISION.replace("lower case", "upper case");
    std::fs::write(dir.path().join("spec.md"), edited).expect("spec");
    let third = build(dir.path(), &b, &[]);
    assert_eq!(third.code, 0, "{}\n{}", third.err, third.out);
    assert!(
        third.out.contains("2 work tasks: 2 landed"),
        "{}",
        third.out
    );
    assert_eq!((calls(&b, "a"), calls(&b, "b")), (4, 4));
    assert_eq!(read(dir.path(), "a.txt"), "alpha, again\n");
}

#[test]
fn a_dependency_that_lands_again_rechecks_its_dependents_and_reruns_only_what_fails() {
    let dir = project(TOML);
    // b's check needs a.txt to exist (stable); c's needs the same text in a.txt and c.txt.
    let spec = "# Three\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n## Beta\n\n- [R-2] Beta MUST exist.\n\n## Gamma\n\n- [R-3] Gamma MUST exist.\n";
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    let attempt = |f: &str, text: &str| json!([[write(f, text)], [done()]]);
    let b = book(
        json!({"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &[], &[]),
            child("b", "R-2", "b.txt", &["test -f a.txt"], &["a"]),
            child("c", "R-3", "c.txt", &["cmp a.txt c.txt"], &["a"]),
        ]}}),
        json!({"a": [attempt("a.txt", "one\n"), attempt("a.txt", "two\n")],
               "b": [attempt("b.txt", "b\n")],
               "c": [attempt("c.txt", "one\n"), attempt("c.txt", "two\n")]}),
    );
    let first = build(dir.path(), &b, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.err, first.out);
    let forced = build(dir.path(), &b, &["--force", "a"]);
    assert_eq!(forced.code, 0, "{}\n{}", forced.err, forced.out);
    assert!(
        forced.err.contains("re-checked  b: its checks pass"),
        "{}",
        forced.err
    );
    assert!(
        forced.err.contains("re-checked  c: its checks fail"),
        "{}",
        forced.err
    );
    assert_eq!(calls(&b, "b"), 2, "b passed its re-check: no model call");
    assert_eq!(calls(&b, "c"), 4, "c failed its re-check and ran again");
    assert_eq!(
        (read(dir.path(), "a.txt"), read(dir.path(), "c.txt")),
        ("two\n".into(), "two\n".into())
    );
    let unknown = build(dir.path(), &b, &["--force", "nope"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.err.contains("`nope`") && unknown.err.contains("a, b, c"),
        "{}",
        unknown.err
    );
}

#[test]
fn a_task_that_left_the_plan_is_reported_and_its_code_stays() {
    let dir = project(TOML);
    let attempt = |f: &str| json!([[write(f, "x\n")], [done()]]);
    let both = book(
        json!({"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &[], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]}}),
        json!({"a": [attempt("a.txt")], "b": [attempt("b.txt")]}),
    );
    assert_eq!(build(dir.path(), &both, &[]).code, 0);
    // The spec loses Beta; the planner plans only a.
    std::fs::write(
        dir.path().join("spec.md"),
        "# Pair\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n",
    )
    .expect("spec");
    let one = book(
        json!({"": {"decisions": [], "children": [child("a", "R-1", "a.txt", &[], &[])]}}),
        json!({}),
    );
    let r = build(dir.path(), &one, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.err, r.out);
    assert!(
        r.out
            .contains("no longer in the plan (the code they landed stays): b"),
        "{}",
        r.out
    );
    assert_eq!(read(dir.path(), "b.txt"), "x\n");
}

#[test]
fn the_example_rebuilds_only_the_tasks_an_edit_reaches() {
    let dir = tempfile::tempdir().expect("tmp");
    let example = crate::support::root().join("examples/textstats");
    for f in [
        "spec.md",
        "specc.toml",
        "field-guide/index.md",
        "hidden/hidden.rs",
    ] {
        let to = dir.path().join(f);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(example.join(f), &to).expect("copy");
    }
    let mut answers: Value = serde_json::from_str(
        &std::fs::read_to_string(example.join("answers.json")).expect("answers"),
    )
    .expect("json");
    // A second attempt for every task, in case the edit reaches it.
    for attempts in answers["workers"]
        .as_object_mut()
        .expect("workers")
        .values_mut()
    {
        let first = attempts[0].clone();
        attempts.as_array_mut().expect("attempts").push(first);
    }
    let b = Arc::new(AnswerBook::new(answers));
    let first = build(dir.path(), &b, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.err, first.out);
    let after_first = b.seen().len();
    let again = build(dir.path(), &b, &[]);
    assert!(
        again.out.contains("7 work tasks: 7 up to date"),
        "{}",
        again.out
    );
    assert_eq!(
        b.seen().len(),
        after_first,
        "an unchanged spec makes no call"
    );
    // Reword the frequency section's requirement: only `freq` covers it.
    let spec = std::fs::read_to_string(dir.path().join("spec.md")).expect("spec");
    let edited = spec.replace(
        "most frequent first, ties in alphabetical order",
        "the most frequent first, and ties in alphabetical order",
    );
    assert_ne!(spec, edited);
    std::fs::write(dir.path().join("spec.md"), edited).expect("spec");
    let third = build(dir.path(), &b, &[]);
    assert_eq!(third.code, 0, "{}\n{}", third.err, third.out);
    assert!(
        third.out.contains("7 work tasks: 1 landed, 6 up to date"),
        "{}",
        third.out
    );
    let worker_tasks: std::collections::BTreeSet<String> = b.seen()[after_first..]
        .iter()
        .filter(|s| !s.starts_with("plan:"))
        .map(|s| s.split('#').next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        worker_tasks,
        ["freq".to_owned()].into_iter().collect(),
        "{:?}",
        b.seen()
    );
    // `freq` landing the same file again is no new commit: its dependents need no re-check.
    assert!(
        third.err.contains("landed      freq (no changes)"),
        "{}",
        third.err
    );
}
