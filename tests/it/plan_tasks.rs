//! `specc plan --emit tasks` offline: three fixture specs planned from recorded planner
//! answers (`fixtures/planner/*.jsonl`, made by the outline planner with `--record`), each
//! giving 20+ work leaves, snapshotted as text; JSON is the Task IR.

use crate::support::{fixture, root, specc};

const SPECS: [&str; 3] = ["kvstore", "twenty-sections", "job-queue"];

/// The spec copied into a fresh directory, so `.specc/` state lands there.
fn copy(name: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("dir");
    let to = dir.path().join(format!("{name}.md"));
    std::fs::copy(fixture(&format!("specs/valid/{name}.md")), &to).expect("copy");
    (dir, to.display().to_string())
}

fn recording(name: &str) -> String {
    root()
        .join(format!("fixtures/planner/{name}.jsonl"))
        .display()
        .to_string()
}

#[test]
fn replayed_plans_print_offline() {
    for name in SPECS {
        let (_dir, spec) = copy(name);
        let rec = recording(name);
        let text = specc(&[
            "plan",
            &spec,
            "--emit",
            "tasks",
            "--provider",
            "replay",
            "--recording",
            &rec,
        ]);
        assert_eq!(text.code, 0, "{name}: {}", text.stderr);
        let first = text.stdout.lines().next().unwrap_or_default().to_owned();
        let leaves: usize = first
            .split(", ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(leaves >= 20, "{name}: {first}");
        // The second run is served from the planner cache: no calls at all.
        let again = specc(&[
            "plan",
            &spec,
            "--emit",
            "tasks",
            "--provider",
            "replay",
            "--recording",
            &rec,
            "--format",
            "json",
        ]);
        assert_eq!(again.code, 0);
        let tasks: serde_json::Value = serde_json::from_str(&again.stdout).expect("Task IR JSON");
        assert!(tasks.as_array().is_some_and(|t| {
            t.iter()
                .all(|t| t["fingerprint"].as_str().is_some_and(|f| f.len() == 16))
        }));
        insta::assert_snapshot!(format!("plan-tasks-{name}"), text.stdout);
        if name == "job-queue" {
            // The Task IR itself, for the smallest of the three.
            insta::assert_snapshot!("plan-tasks-job-queue-json", again.stdout);
        }
        let cost = specc(&[
            "cost",
            "--state",
            &std::path::Path::new(&spec)
                .with_file_name(".specc")
                .join("state.db")
                .display()
                .to_string(),
        ]);
        assert!(cost.stdout.contains("planner"), "{}", cost.stdout);
        // The planned decisions are design documents that `specc check` accepts.
        let dir = std::path::Path::new(&spec)
            .parent()
            .expect("dir")
            .display()
            .to_string();
        let check = specc(&["check", &dir, "--message-format", "json"]);
        assert_eq!(check.code, 0, "{name}: {}", check.stderr);
        let summary: serde_json::Value =
            serde_json::from_str(check.stdout.trim()).expect("summary");
        assert!(
            summary["decisions"].as_u64().unwrap_or(0) >= 8,
            "{name}: {summary}"
        );
    }
}

#[test]
fn a_request_never_recorded_is_a_clear_error() {
    let (dir, spec) = copy("kvstore");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let out = specc(&[
        "plan",
        &spec,
        "--emit",
        "tasks",
        "--provider",
        "replay",
        "--recording",
        &empty.display().to_string(),
    ]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("E0316")
            && out.stderr.contains("no recorded response")
            && out.stderr.contains("record the run with --record FILE"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_field_guide_reaches_every_planner_under_its_line_budget() {
    let (dir, spec) = copy("twenty-sections");
    std::fs::create_dir_all(dir.path().join("field-guide")).expect("mkdir");
    let guide: String = (1..=210)
        .map(|i| format!("note {i}: keep it short\n"))
        .collect();
    std::fs::write(dir.path().join("field-guide/index.md"), guide).expect("write");
    let rec = dir.path().join("rec.jsonl");
    let rec_arg = rec.display().to_string();
    let args = [
        "plan",
        &spec,
        "--emit",
        "tasks",
        "--provider",
        "outline",
        "--record",
        &rec_arg,
    ];
    let out = specc(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("W0311") && out.stderr.contains("210 lines"),
        "{}",
        out.stderr
    );
    let recorded = std::fs::read_to_string(&rec).expect("recording");
    let requests = recorded.lines().count();
    assert!(requests > 1);
    assert_eq!(
        recorded.matches("note 200: keep it short").count(),
        requests,
        "every request carries the guide"
    );
    assert!(!recorded.contains("note 201:"), "but not past the budget");
    // Under its budget (set in specc.toml) it is given whole and silently; editing it
    // re-plans, since every request read it.
    std::fs::write(
        dir.path().join("specc.toml"),
        "[limits]\nfield_guide_lines = 300\n",
    )
    .expect("write");
    let out = specc(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("W0311"), "{}", out.stderr);
    assert!(
        out.stdout.contains(&format!("{requests} planner calls")),
        "{}",
        out.stdout
    );
}

#[test]
fn a_misspelt_limit_is_refused_with_the_file_named() {
    let (dir, spec) = copy("job-queue");
    std::fs::write(dir.path().join("specc.toml"), "[limits]\ndepht = 3\n").expect("write");
    let out = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
    // A configuration error: exit 2, with the key it probably means.
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("E0006")
            && out.stderr.contains("specc.toml")
            && out.stderr.contains("depht")
            && out.stderr.contains("did you mean `depth`?"),
        "{}",
        out.stderr
    );
}
