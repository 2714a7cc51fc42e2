//! `specc show` on scripted builds: a landed task (what it was told, each step, the diff
//! from `out/`), a failed one (its checks' output, its re-plans, and `specc status` naming
//! the command), and one whose conflict the merge agent resolved. Snapshots, with the
//! run's id, temporary paths and object ids replaced.

use serde_json::json;

use crate::build::{Built, TOML, build_with, child, done, two_leaves, write};
use crate::support::specc;

fn show(b: &Built, args: &[&str]) -> String {
    let spec = b.dir.path().join("spec.md").display().to_string();
    let mut all = vec!["show"];
    all.extend_from_slice(args);
    all.push(&spec);
    let o = specc(&all);
    assert_eq!(o.code, 0, "{}", o.stderr);
    normalise(&o.stdout, b)
}

fn normalise(text: &str, b: &Built) -> String {
    let dir = b.dir.path().display().to_string();
    let text = text.replace(&dir, "<dir>");
    let run = regex::Regex::new(r"build-\d+").expect("re");
    let hex = regex::Regex::new(r"\b[0-9a-f]{12,64}\b").expect("re");
    let index = regex::Regex::new(r"index [0-9a-f]+\.\.[0-9a-f]+").expect("re");
    let text = run.replace_all(&text, "build-<run>");
    let text = hex.replace_all(&text, "<id>");
    index.replace_all(&text, "index <blobs>").into_owned()
}

#[test]
fn a_landed_task_shows_what_it_was_told_each_step_and_its_diff() {
    let workers = json!({
        "a": [[[write("a.txt", "alpha\n")], [done()]]],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
    });
    let b = build_with(TOML, two_leaves(&[]), workers);
    assert_eq!(b.code, 0, "{}", b.err);
    insta::assert_snapshot!("show_landed", show(&b, &["a"]));
    let json: serde_json::Value = serde_json::from_str(
        &specc(&[
            "show",
            "a",
            &b.dir.path().join("spec.md").display().to_string(),
            "--format",
            "json",
        ])
        .stdout,
    )
    .expect("json");
    assert_eq!(json["story"]["state"], "landed");
    assert_eq!(json["story"]["attempts"][0]["context"][1]["author"], "user");
    assert!(
        json["diff"].as_str().is_some_and(|d| d.contains("+alpha")),
        "{json}"
    );
    assert_eq!(json["cost"]["worker"]["calls"], 2);
}

#[test]
fn a_failed_task_shows_its_checks_and_replans_and_status_names_the_command() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f never.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]},
        "replan:a": {"instructions": "write a.txt, then check again"},
        "replan-parent:a": {"instructions": "write a.txt once more", "reason": "the check stands"},
    });
    let failing = json!([[write("a.txt", "alpha\n")], [done()], [done()]]);
    let workers = json!({
        "a": [failing.clone(), failing.clone(), failing],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
    });
    let b = build_with(TOML, planner, workers);
    assert_eq!(b.code, 1, "{}", b.err);
    insta::assert_snapshot!("show_failed", show(&b, &["a", "--attempt", "3"]));
    let status = specc(&[
        "status",
        &b.dir.path().join("spec.md").display().to_string(),
    ]);
    assert!(
        status.stdout.contains("(specc show a)"),
        "{}",
        status.stdout
    );
}

#[test]
fn a_merged_task_shows_the_merge() {
    let b = crate::build_merge::build(json!([crate::build_merge::resolution(
        "# Field guide\n\n## Notes\n- a was here\n- b was here\n"
    )]));
    assert_eq!(b.code, 0, "{}", b.err);
    let (task, _) = crate::build_merge::merged_task(&b);
    let shown = show(&b, &[&task]);
    assert!(
        shown.contains("merge      conflict in field-guide/index.md → committed <id>"),
        "{shown}"
    );
    // Which of the two conflicted depends on timing: the lines about the submission and
    // the merge are the same for either.
    assert!(shown.contains("cost: merger 1 call"), "{shown}");
    let lines: Vec<String> = shown
        .lines()
        .filter(|l| l.contains(" submit ") || l.contains(" merge "))
        .map(|l| l.replace(&format!("{task}.txt"), "<its file>"))
        .collect();
    insta::assert_snapshot!("show_merged", lines.join("\n"));
}
