//! The merge agent with scripted answers (the answer book): two leaves add a note under one
//! section of the field guide at once, so the second to land conflicts. With a `merger`
//! role the conflict goes to the merge agent, whose resolution lands without re-running the
//! task; a resolution that adds a line neither side wrote is sent back once, then the task
//! runs again on the new head.

use serde_json::{Value, json};

use crate::build::{Built, TOML, build_book, done, project, two_leaves, write};

const GUIDE: &str = "# Field guide\n\n## Notes\n";

fn with_merger() -> String {
    format!("{TOML}\n[roles.merger]\nprovider = \"scripted\"\nmodel = \"merger\"\n")
}

fn note(t: &str) -> Value {
    json!({"name": "note", "arguments": {"section": "Notes", "text": t}})
}

/// Both leaves note under `## Notes` (two attempts each, for a re-run); `merger` answers.
pub(crate) fn build(merger: Value) -> Built {
    let dir = project(&with_merger());
    std::fs::create_dir_all(dir.path().join("field-guide")).expect("dir");
    std::fs::write(dir.path().join("field-guide/index.md"), GUIDE).expect("guide");
    let attempt = |file: &str, text: &str, who: &str| {
        json!([
            [write(file, text), note(&format!("{who} was here"))],
            [done()]
        ])
    };
    build_book(
        dir,
        json!({
            "planner": two_leaves(&[]),
            "workers": {"a": [attempt("a.txt", "alpha\n", "a"), attempt("a.txt", "alpha\n", "a")],
                        "b": [attempt("b.txt", "beta\n", "b"), attempt("b.txt", "beta\n", "b")]},
            "merger": {"a": merger.clone(), "b": merger},
        }),
    )
}

pub(crate) fn resolution(content: &str) -> Value {
    json!({"content": content, "explanation": "both notes, landed one first"})
}

/// The task whose submission went to the merge agent, and how often it was asked.
pub(crate) fn merged_task(b: &Built) -> (String, usize) {
    let seen = b.book.seen();
    let merges: Vec<&String> = seen.iter().filter(|s| s.starts_with("merge:")).collect();
    let task = merges
        .first()
        .map(|s| s.trim_start_matches("merge:").to_owned())
        .expect("the merge agent was asked");
    (task, merges.len())
}

#[test]
fn a_conflict_is_resolved_by_the_merge_agent_without_rerunning_the_task() {
    let b = build(json!([resolution(
        "# Field guide\n\n## Notes\n- a was here\n- b was here\n"
    )]));
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let guide = b.file("field-guide/index.md").expect("guide");
    assert_eq!(
        guide,
        "# Field guide\n\n## Notes\n- a was here\n- b was here\n"
    );
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha\n"));
    assert_eq!(b.file("b.txt").as_deref(), Some("beta\n"));
    let (task, asked) = merged_task(&b);
    assert_eq!(asked, 1);
    let seen = b.book.seen();
    assert!(
        !seen.iter().any(|s| s.contains("#2.")),
        "no task ran twice: {seen:?}"
    );
    assert!(b.err.contains("to the merge agent"), "{}", b.err);
    assert!(b.err.contains(&format!("merged      {task}")), "{}", b.err);
    // The merger's call is in the ledger under its role, and the journal has the merge.
    let ledger =
        specc_llm::Ledger::open_existing(&b.dir.path().join(".specc/state.db")).expect("ledger");
    let rows = ledger.rows().expect("rows");
    assert_eq!(rows.iter().filter(|r| r.role == "merger").count(), 1);
    let steps = b.steps();
    assert!(
        steps
            .iter()
            .any(|(t, k, body)| *t == task && k == "merge" && body.contains("\"resolved\"")),
        "{steps:?}"
    );
}

#[test]
fn a_resolution_that_adds_a_feature_is_sent_back_then_the_task_runs_again() {
    let invented =
        resolution("# Field guide\n\n## Notes\n- a was here\n- b was here\n- c: a cache\n");
    let b = build(json!([invented.clone(), invented]));
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let (task, asked) = merged_task(&b);
    assert_eq!(
        asked, 2,
        "asked, then sent back once with the added line quoted"
    );
    let guide = b.file("field-guide/index.md").expect("guide");
    assert!(!guide.contains("c: a cache"), "{guide}");
    assert!(
        guide.contains("- a was here") && guide.contains("- b was here"),
        "{guide}"
    );
    // The conflict went back to its task, which ran again on the new head and landed.
    let seen = b.book.seen();
    assert!(seen.contains(&format!("{task}#2.0")), "{seen:?}");
    assert!(b.err.contains("sent back"), "{}", b.err);
    let steps = b.steps();
    let merge = steps
        .iter()
        .find(|(t, k, _)| *t == task && k == "merge")
        .expect("the merge is journaled");
    assert!(
        merge.2.contains("sent_back") && merge.2.contains("adds 1 line(s) found in neither side"),
        "{}",
        merge.2
    );
}

#[test]
fn specc_status_shows_the_merge_queue() {
    // A journal as a build leaves it while the merge agent works on b's conflict.
    let dir = project(&with_merger());
    let db = dir.path().join(".specc/state.db");
    let journal = specc_state::Journal::open(&db).expect("journal");
    journal.start_run("build-1", "spec.md").expect("run");
    let b = specc_state::TaskRef {
        id: "b",
        title: "make b",
        fingerprint: "f",
    };
    journal
        .set_task(
            "build-1",
            b,
            specc_state::TaskState::Running,
            Some("merging field-guide/index.md"),
            None,
        )
        .expect("task");
    journal.commit().expect("commit");
    let spec = dir.path().join("spec.md").display().to_string();
    let status = crate::support::specc(&["status", &spec]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(
        status
            .stdout
            .contains("merge queue: b (merging field-guide/index.md)"),
        "{}",
        status.stdout
    );
}
