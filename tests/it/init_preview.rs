//! `specc init` and the cost preview (issue 28): each preset's project previews at once
//! with the outline planner; `init` never overwrites; `--dry-run` asks no worker (counted on
//! the answer book); and on the bundled example, the estimate's range holds what the build
//! really spends.

use serde_json::{Value, json};
use specc_tests::answers::AnswerBook;
use std::sync::Arc;

use crate::build::{TOML, project, two_leaves};
use crate::support::specc;

fn dry_run(spec: &str, extra: &[&str]) -> crate::support::Output {
    let mut args = vec!["build", spec, "--dry-run"];
    args.extend_from_slice(extra);
    specc(&args)
}

#[test]
fn every_preset_makes_a_project_that_previews_at_once_and_init_never_overwrites() {
    for preset in [
        vec!["openai"],
        vec!["anthropic"],
        vec!["openai-compatible", "http://127.0.0.1:8088/v1"],
    ] {
        let dir = tempfile::tempdir().expect("tmp");
        let at = dir.path().join("p");
        let at_s = at.display().to_string();
        let mut args = vec!["init", at_s.as_str(), "--provider"];
        args.extend(preset.iter().copied());
        let o = specc(&args);
        assert_eq!(o.code, 0, "{preset:?}: {}", o.stderr);
        let toml = std::fs::read_to_string(at.join("specc.toml")).expect("specc.toml");
        for role in ["planner", "worker", "reviewer", "merger", "escalation"] {
            assert!(
                toml.contains(&format!("[roles.{role}]")),
                "{preset:?} lacks {role}"
            );
        }
        assert!(!toml.to_lowercase().contains("sk-"), "no key is written");
        let spec = at.join("spec.md").display().to_string();
        let plan = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
        assert_eq!(plan.code, 0, "{preset:?}: {}", plan.stderr);
        let p = dry_run(&spec, &["--provider", "outline"]);
        assert_eq!(p.code, 0, "{preset:?}: {}", p.stderr);
        assert!(
            p.stdout.contains("estimate") && p.stdout.contains("worker"),
            "{}",
            p.stdout
        );
        // Again: refused, every existing file named, nothing written.
        std::fs::write(at.join("spec.md"), "# mine\n").expect("edit");
        let again = specc(&args);
        assert_eq!(again.code, 2);
        for name in [
            "spec.md",
            "hidden/run_tap.py",
            "specc.toml",
            "field-guide/index.md",
        ] {
            // (The renderer wraps long lines: compare without whitespace and gutters.)
            let flat: String = again
                .stderr
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '|')
                .collect();
            assert!(flat.contains(name), "{name}: {}", again.stderr);
        }
        assert!(
            again.stderr.contains("nothing was written"),
            "{}",
            again.stderr
        );
        assert_eq!(
            std::fs::read_to_string(at.join("spec.md")).expect("spec"),
            "# mine\n"
        );
    }
    // The worked example: RFC 4648 with its hidden tests switched on.
    let dir = tempfile::tempdir().expect("tmp");
    let at = dir.path().display().to_string();
    assert_eq!(specc(&["init", &at, "--example"]).code, 0);
    assert!(dir.path().join("hidden/run_tap.py").is_file());
    let p = dry_run(
        &dir.path().join("spec.md").display().to_string(),
        &["--provider", "outline"],
    );
    assert_eq!(p.code, 0, "{}", p.stderr);
}

#[test]
fn a_dry_run_asks_the_planner_and_no_worker() {
    let dir = project(TOML);
    let book = Arc::new(AnswerBook::new(
        json!({"planner": two_leaves(&[]), "workers": {}}),
    ));
    let env = specc::Env::plain().with_models(book.clone());
    let spec = dir.path().join("spec.md").display().to_string();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(
        [
            "specc",
            "build",
            spec.as_str(),
            "--dry-run",
            "--format",
            "json",
        ],
        &env,
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    assert_eq!(book.seen(), ["plan:"], "the planner only");
    let v: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(v["plan"]["work_leaves"], 2);
    assert_eq!(v["plan"]["planner_calls"], 1);
    assert!(!dir.path().join("out").exists(), "nothing was built");
    assert!(
        v["estimate"]["totals"]["worker"]["input"]["mid"]
            .as_f64()
            .unwrap_or(0.0)
            > 0.0
    );
}

/// Tokens (input + output) each role's model spent in the example's recording: what its
/// build's ledger holds, since a replay uses each recorded answer once.
fn recorded(model: &str) -> f64 {
    let path = crate::support::root().join("examples/textstats/recording.jsonl");
    std::fs::read_to_string(path)
        .expect("recording")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["request"]["model"] == model)
        .map(|r| {
            let u = &r["response"]["usage"];
            u["input"].as_f64().unwrap_or(0.0) + u["output"].as_f64().unwrap_or(0.0)
        })
        .sum()
}

#[test]
fn on_the_example_the_estimate_range_holds_what_its_build_spends() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = crate::support::root().join("examples/textstats");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(root.join(f), dir.path().join(f)).expect("copy");
    }
    std::fs::create_dir_all(dir.path().join("hidden")).expect("hidden");
    for e in std::fs::read_dir(root.join("hidden"))
        .expect("hidden")
        .flatten()
    {
        std::fs::copy(e.path(), dir.path().join("hidden").join(e.file_name())).expect("copy");
    }
    if root.join("field-guide").is_dir() {
        std::fs::create_dir_all(dir.path().join("field-guide")).expect("guide");
        for e in std::fs::read_dir(root.join("field-guide"))
            .expect("guide")
            .flatten()
        {
            std::fs::copy(e.path(), dir.path().join("field-guide").join(e.file_name()))
                .expect("copy");
        }
    }
    let spec = dir.path().join("spec.md").display().to_string();
    let p = dry_run(&spec, &["--format", "json"]);
    assert_eq!(p.code, 0, "{}", p.stderr);
    let v: Value = serde_json::from_str(&p.stdout).expect("json");
    for (role, model) in [
        ("worker", "worker-small"),
        ("reviewer", "reviewer-medium"),
        ("merger", "merger-medium"),
    ] {
        let t = &v["estimate"]["totals"][role];
        let sum = |k: &str| {
            t["input"][k].as_f64().unwrap_or(0.0) + t["output"][k].as_f64().unwrap_or(0.0)
        };
        let (low, mid, high) = (sum("low"), sum("mid"), sum("high"));
        let actual = recorded(model);
        assert!(
            low <= actual && actual <= high,
            "{role}: actual {actual} outside the estimate {low}–{high} (middle {mid})"
        );
    }
}
