//! `[eval]`, `specc eval` and `specc report` on a two-leaf build whose hidden suite (a TAP
//! script) checks each leaf's file: the series rises as the leaves land, `specc eval` scores
//! any commit, the report's drawn lines map back to the database's points, and the workers
//! never see the hidden tests.

use std::path::Path;

use serde_json::{Value, json};

use crate::build::{Built, TOML, build_in, child, done, project, write};

/// The hidden suite: one TAP test per leaf's file, and a marker a worker must never read.
const SUITE: &str = "# SECRET-MARKER: the hidden suite\n\
echo 1..2\n\
if test -f a.txt; then echo 'ok 1 - a exists'; else echo 'not ok 1 - a exists'; fi\n\
if grep -q beta b.txt 2>/dev/null; then echo 'ok 2 - b says beta'; else echo 'not ok 2 - b says beta'; fi\n";

pub(crate) fn eval_toml(extra: &str) -> String {
    format!(
        "{TOML}\n[eval]\ncommand = \"sh hidden/suite.sh\"\ntests = \"hidden\"\n\
         every = {{ merges = 1 }}\nformat = \"tap\"\n{extra}"
    )
}

pub(crate) fn with_suite(toml: &str) -> tempfile::TempDir {
    let dir = project(toml);
    std::fs::create_dir_all(dir.path().join("hidden")).expect("hidden");
    std::fs::write(dir.path().join("hidden/suite.sh"), SUITE).expect("suite");
    dir
}

/// `b` waits for `a` and takes a second in its checks, so the evaluation after `a` lands
/// sees `a` alone.
pub(crate) fn plan() -> Value {
    json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
        child("b", "R-2", "b.txt", &["sleep 1 && grep -q beta b.txt"], &["a"]),
    ]}})
}

pub(crate) fn built(workers_a: Value) -> Built {
    let b = build_in(
        with_suite(&eval_toml("")),
        plan(),
        json!({"a": [workers_a], "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    b
}

/// A build under `toml` whose hidden suite prints a TAP plan it never meets.
pub(crate) fn built_with_a_cut_suite(toml: &str) -> Built {
    let dir = with_suite(toml);
    std::fs::write(
        dir.path().join("hidden/suite.sh"),
        "echo '1..3'\necho 'ok 1'\n",
    )
    .expect("cut");
    build_in(
        dir,
        plan(),
        json!({"a": [plain_a()], "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    )
}

pub(crate) fn plain_a() -> Value {
    json!([[write("a.txt", "alpha\n")], [done()]])
}

/// `(score, passed, total, final, commit)` of a point, read with SQL.
pub(crate) type Row = (Option<f64>, Option<i64>, Option<i64>, bool, String);

pub(crate) fn points(dir: &Path) -> Vec<Row> {
    let c = rusqlite::Connection::open(dir.join(".specc/state.db")).expect("db");
    let mut s = c
        .prepare("SELECT score, passed, total, final, commit_id FROM eval_points ORDER BY point")
        .expect("query");
    s.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .expect("rows")
    .collect::<Result<_, _>>()
    .expect("points")
}

pub(crate) fn specc(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let env = specc::Env::plain().with_sandbox_helper(specc_tests::specc_binary());
    let mut all = vec!["specc"];
    all.extend_from_slice(args);
    let spec = dir.join("spec.md").display().to_string();
    let all: Vec<String> = all
        .into_iter()
        .map(|a| {
            if a == "SPEC" {
                spec.clone()
            } else {
                a.to_owned()
            }
        })
        .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(all, &env, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn a_build_scores_its_head_as_leaves_land_and_once_at_the_end() {
    let b = built(plain_a());
    assert!(
        b.err
            .contains("eval        2 of 2 tests pass (100.0%) (final)"),
        "{}",
        b.err
    );
    let points = points(b.dir.path());
    assert!(points.len() >= 2, "{points:?}");
    assert_eq!(points[0].0, Some(0.5), "after `a` alone: {points:?}");
    assert_eq!((points[0].1, points[0].2), (Some(1), Some(2)));
    let last = points.last().expect("a point");
    assert_eq!((last.0, last.3), (Some(1.0), true), "{points:?}");
    assert_eq!(points.iter().filter(|p| p.3).count(), 1, "one final point");
    // The hidden suite never entered the VCS: the exported tree has no `hidden/`.
    assert!(!b.dir.path().join("out/hidden").exists());
}

#[test]
fn specc_eval_scores_the_head_or_a_commit_in_text_and_json() {
    let b = built(plain_a());
    let dir = b.dir.path();
    let (code, out, err) = specc(dir, &["eval", "SPEC"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 of 2 tests pass (100.0%)"), "{out}");
    assert!(
        out.contains("ok      a exists") && out.contains("ok      b says beta"),
        "{out}"
    );
    // The commit of the first point (only `a` landed) fails one test: exit 1.
    let first = points(dir)[0].4.clone();
    let (code, out, _) = specc(
        dir,
        &["eval", "SPEC", "--commit", &first[..8], "--format", "json"],
    );
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(v["commit"], json!(first));
    assert_eq!(
        (v["passed"].clone(), v["failed"].clone(), v["total"].clone()),
        (json!(1), json!(1), json!(2))
    );
    assert_eq!(
        v["tests"][1],
        json!({"name": "b says beta", "outcome": "failed"})
    );
    let (code, _, err) = specc(dir, &["eval", "SPEC", "--commit", "ffffffff"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("E0501") && err.contains("no commit of the build starts with"),
        "{err}"
    );
    let (code, _, err) = specc(dir, &["eval", "SPEC", "--commit", "abc"]);
    assert_eq!(code, 2);
    assert!(err.contains("is not a commit id"), "{err}");
}

#[test]
fn garbage_from_the_eval_command_scores_as_unknown() {
    let b = built_with_a_cut_suite(&eval_toml(""));
    assert_eq!(b.code, 0, "{}", b.err);
    assert!(b.err.contains("score unknown"), "{}", b.err);
    let points = points(b.dir.path());
    assert!(
        points.iter().all(|p| p.0.is_none() && p.2.is_none()),
        "{points:?}"
    );
    let (code, out, _) = specc(b.dir.path(), &["eval", "SPEC"]);
    assert_eq!(code, 1);
    assert!(out.contains("score unknown"), "{out}");
}

#[test]
fn a_worker_can_neither_read_nor_run_its_way_to_the_hidden_tests() {
    let dir = with_suite(&eval_toml(""));
    let hidden = dir.path().join("hidden");
    let abs = hidden.join("suite.sh").display().to_string();
    let peek = format!(
        "cat '{abs}'; ls '{}'; cat ../../../hidden/suite.sh",
        hidden.display()
    );
    let a = json!([
        [{"name": "read", "arguments": {"path": "../../../hidden/suite.sh"}}],
        [{"name": "read", "arguments": {"path": abs}}],
        [{"name": "run", "arguments": {"command": peek}}],
        [write("a.txt", "alpha\n")],
        [done()]
    ]);
    let b = built(a);
    let tools: Vec<String> = b
        .steps()
        .into_iter()
        .filter(|(t, k, _)| t == "a" && k == "tool")
        .map(|(_, _, body)| body)
        .collect();
    assert!(tools.len() >= 3, "{tools:?}");
    for t in &tools {
        assert!(
            !t.contains("SECRET-MARKER") && !t.contains("b says beta"),
            "{t}"
        );
    }
    assert!(
        tools[2].contains("Permission denied") || tools[2].contains("No such file"),
        "{}",
        tools[2]
    );
}

#[test]
fn a_sandbox_read_path_that_holds_the_hidden_tests_is_refused() {
    let dir = with_suite(&eval_toml("\n[sandbox]\nread = [\".\"]\n"));
    let b = build_in(dir, plan(), json!({}));
    assert_eq!(b.code, 2, "{}", b.err);
    assert!(
        b.err.contains("E0406") && b.err.contains("eval tests"),
        "{}",
        b.err
    );
    assert!(b.book.seen().is_empty(), "no model was asked");
}

#[test]
fn every_minutes_evaluates_on_a_clock_without_landings() {
    // No merge count: only the clock (every 0.3 s) and the end trigger evaluations. `b`'s
    // check sleeps a second, so the clock fires while it runs.
    let toml = eval_toml("").replace("every = { merges = 1 }", "every = { minutes = 0.005 }");
    let b = build_in(
        with_suite(&toml),
        plan(),
        json!({"a": [plain_a()], "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}", b.err);
    let points = points(b.dir.path());
    assert!(
        points.len() >= 2,
        "a clock point and the final one: {points:?}"
    );
    assert!(
        !points[0].3,
        "the first point is the clock's, not the final one"
    );
    let last = points.last().expect("a point");
    assert_eq!((last.0, last.3), (Some(1.0), true));
}
