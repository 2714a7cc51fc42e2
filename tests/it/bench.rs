//! `specc bench` (design: project.bench) on the bundled suite, `benches/suite/bench.toml`: three
//! cases replayed from their recordings, two configurations. Its table's figures are the
//! state databases' (scores from the eval series, dollars and tokens by role from the
//! ledger); a bench killed part way and started again runs only what had not finished, and
//! its table is an uninterrupted bench's.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

fn suite() -> String {
    crate::support::root()
        .join("benches/suite/bench.toml")
        .display()
        .to_string()
}

/// `specc bench` of the bundled suite into `out`, as JSON.
fn bench(out: &Path) -> Value {
    let o = Command::new(specc_tests::specc_binary())
        .args(["bench", &suite(), "--format", "json", "--out"])
        .arg(out)
        .output()
        .expect("specc bench");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// A run's figures that do not depend on the clock: not its wall time, nor its curve (how
/// many evaluations the build made depends on how fast its landings came).
fn figures(run: &Value) -> Value {
    let mut r = run.clone();
    let o = r.as_object_mut().expect("run");
    o.remove("wall_seconds");
    o.remove("curve");
    r
}

#[test]
fn the_bundled_suites_table_is_what_its_state_databases_hold() {
    let tmp = tempfile::tempdir().expect("tmp");
    let table = bench(tmp.path());
    let runs = table["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "3 cases × 2 configurations");
    for r in runs {
        let (case, config) = (
            r["case"].as_str().expect("case"),
            r["configuration"].as_str().expect("configuration"),
        );
        let db = tmp.path().join(case).join(config).join(".specc/state.db");
        let status = specc_state::read_status(&db)
            .expect("status")
            .expect("a run");
        let run = status.run.run;
        // Scores: the eval series' last point.
        let series = specc_runtime::eval::series::read(&db).expect("series");
        let (_, points) = series
            .iter()
            .find(|(id, _)| *id == run)
            .expect("series of the run");
        let last = points.last().expect("a point");
        assert_eq!(r["passed"].as_u64(), last.passed, "{case} × {config}");
        assert_eq!(r["total"].as_u64(), last.total, "{case} × {config}");
        assert_eq!(
            r["passed"], r["total"],
            "{case} × {config}: every hidden test passes"
        );
        // Dollars and tokens by role: the ledger's rows of the run.
        let ledger = specc_llm::Ledger::open_existing(&db).expect("ledger");
        let rows: Vec<_> = ledger
            .rows()
            .expect("rows")
            .into_iter()
            .filter(|c| c.run == run)
            .collect();
        assert_eq!(r["calls"].as_u64(), Some(rows.len() as u64));
        for (role, d) in r["dollars_by_role"].as_object().expect("by role") {
            let want: f64 = rows
                .iter()
                .filter(|c| c.role == *role)
                .map(|c| c.dollars)
                .sum();
            assert!(
                (d.as_f64().expect("dollars") - want).abs() < 1e-9,
                "{case} × {config} {role}"
            );
        }
        let tokens: u64 = rows
            .iter()
            .map(|c| c.usage.input + c.usage.cached_input + c.usage.output)
            .sum();
        let got: u64 = r["tokens_by_role"]
            .as_object()
            .expect("tokens")
            .values()
            .filter_map(Value::as_u64)
            .sum();
        assert_eq!(got, tokens, "{case} × {config}");
    }
    // The two configurations price the same work: the same tokens, and the workers cost more
    // at frontier prices.
    let totals = table["configurations"].as_array().expect("totals");
    let by = |name: &str| {
        totals
            .iter()
            .find(|t| t["configuration"] == name)
            .expect(name)
    };
    let (everywhere, planner) = (by("frontier-everywhere"), by("frontier-planner"));
    assert_eq!(everywhere["tokens"], planner["tokens"]);
    assert_eq!(everywhere["fully_passing"], 3);
    assert_eq!(everywhere["share_fully_passing"], 1.0);
    assert!(everywhere["dollars"].as_f64() > planner["dollars"].as_f64());
    let sum: f64 = runs
        .iter()
        .filter(|r| r["configuration"] == "frontier-planner")
        .map(|r| {
            r["dollars_by_role"]
                .as_object()
                .expect("roles")
                .values()
                .filter_map(Value::as_f64)
                .sum::<f64>()
        })
        .sum();
    assert!((planner["dollars"].as_f64().expect("dollars") - sum).abs() < 1e-9);
}

#[test]
fn a_killed_bench_started_again_runs_only_what_had_not_finished() {
    let whole = tempfile::tempdir().expect("tmp");
    let uninterrupted = bench(whole.path());

    let tmp = tempfile::tempdir().expect("tmp");
    let mut child = Command::new(specc_tests::specc_binary())
        .args(["bench", &suite(), "--format", "json", "--out"])
        .arg(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("specc bench");
    let results = |dir: &Path| -> Vec<std::path::PathBuf> {
        let mut found = Vec::new();
        for case in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            for config in std::fs::read_dir(case.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let r = config.path().join("result.json");
                if r.is_file() {
                    found.push(r);
                }
            }
        }
        found
    };
    let since = Instant::now();
    while results(tmp.path()).is_empty() && since.elapsed() < Duration::from_secs(300) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill");
    let _ = child.wait();
    let before = results(tmp.path());
    assert!(
        !before.is_empty() && before.len() < 6,
        "killed part way: {before:?}"
    );
    let kept: Vec<(std::path::PathBuf, String)> = before
        .iter()
        .map(|p| (p.clone(), std::fs::read_to_string(p).expect("result")))
        .collect();

    let o = Command::new(specc_tests::specc_binary())
        .args(["bench", &suite(), "--format", "json", "--out"])
        .arg(tmp.path())
        .output()
        .expect("specc bench again");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let again: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        said.matches("finished before:").count(),
        kept.len(),
        "{said}"
    );
    assert_eq!(said.matches("ran:").count(), 6 - kept.len(), "{said}");
    // What had finished was not run again: its result is as it was.
    for (p, text) in &kept {
        assert_eq!(
            &std::fs::read_to_string(p).expect("result"),
            text,
            "{}",
            p.display()
        );
    }
    // No build is left running in any run's folder.
    for p in std::fs::read_dir("/proc").expect("proc").flatten() {
        if let Ok(cwd) = std::fs::read_link(p.path().join("cwd")) {
            assert!(
                !cwd.starts_with(tmp.path())
                    || p.file_name() == std::process::id().to_string().as_str(),
                "a process still runs in {}",
                cwd.display()
            );
        }
    }
    let table = |v: &Value| -> Vec<Value> {
        v["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(figures)
            .collect()
    };
    assert_eq!(table(&again), table(&uninterrupted));
}
