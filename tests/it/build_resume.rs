//! `specc build` killed with SIGKILL at moments spread over a whole build, then run again:
//! the build resumes its run, and every final tree equals the uninterrupted build's; no
//! commit lands twice (idempotency keys), and no model response that was journaled is asked
//! for again (the ledger's calls equal the journal's responses). The fixture's answers are
//! hand-written (`fixtures/build/crash/answers.json`), replayed from its recording.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::root;

const ITERATIONS: u32 = 30;

/// The same on PostgreSQL (a fresh database each iteration): fewer moments, as each costs
/// a database.
const PG_ITERATIONS: u32 = 6;

fn fixture_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(
            root().join("fixtures/build/crash").join(f),
            dir.path().join(f),
        )
        .expect("copy");
    }
    dir
}

fn build(bin: &Path, dir: &Path) -> std::process::Child {
    build_on(bin, dir, None)
}

/// `specc build` with the state in `.specc/`, or with a state URL, in PostgreSQL.
fn build_on(bin: &Path, dir: &Path, state_url: Option<&str>) -> std::process::Child {
    let mut command = Command::new(bin);
    if let Some(url) = state_url {
        command.env("SPECC_STATE_URL", url);
    }
    command
        .args(["build", "spec.md"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("specc starts")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The tree of `out/`'s head, and how many commits each task landed.
fn result(dir: &Path) -> (String, Vec<(String, usize)>) {
    let out = dir.join("out");
    let tree = git(&out, &["ls-tree", "-r", "HEAD"]);
    let mut per_task: std::collections::BTreeMap<String, usize> = Default::default();
    for t in git(
        &out,
        &["log", "--format=%(trailers:key=Specc-Task,valueonly)"],
    )
    .lines()
    {
        // AGENTS.md is specc's own commit, not a task's (design: project.agents-md).
        if !t.trim().is_empty() && t.trim() != "agents-md" {
            *per_task.entry(t.trim().to_owned()).or_default() += 1;
        }
    }
    (tree, per_task.into_iter().collect())
}

/// `(ok model calls in the ledger, model responses in the journal)` for workers, over
/// every run of the state directory.
fn calls_and_responses(dir: &Path, state_url: Option<&str>) -> (usize, usize) {
    let db = dir.join(".specc/state.db");
    let ledger = crate::serve::ledger(&db, state_url);
    let calls = ledger
        .rows()
        .expect("rows")
        .iter()
        .filter(|r| r.role == "worker" && r.outcome == "ok")
        .count();
    let journal = match state_url {
        None => specc_state::Journal::open(&db).expect("journal"),
        Some(_) => specc_state::Journal::on(ledger.state_db()).expect("journal"),
    };
    let runs: std::collections::BTreeSet<String> = ledger
        .rows()
        .expect("rows")
        .into_iter()
        .map(|r| r.run)
        .collect();
    let responses = runs
        .iter()
        .flat_map(|r| journal.steps(r).expect("steps"))
        .filter(|s| s.kind == "model")
        .count();
    (calls, responses)
}

#[test]
fn a_build_killed_at_any_moment_resumes_to_the_same_tree() {
    killed_and_resumed(ITERATIONS, || None);
}

/// With the state in PostgreSQL (`SPECC_STATE_URL`): the journal, the ledger and the
/// idempotency keys there hold as they do in `.specc/state.db`, which is never made.
#[test]
fn a_build_killed_at_any_moment_resumes_to_the_same_tree_on_postgres() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut dbs = Vec::new();
    killed_and_resumed(PG_ITERATIONS, || {
        let db = rt.block_on(specc_test_support::pg::database());
        let url = db.url.clone();
        dbs.push(db);
        Some(url)
    });
}

/// Builds the fixture once, then `iterations` times: a build killed with SIGKILL at a
/// moment spread over the build's time, resumed, and compared with the first; each in a
/// fresh directory and state (`state()`: none for `.specc/`, or a database's URL).
fn killed_and_resumed(iterations: u32, mut state: impl FnMut() -> Option<String>) {
    let bin: PathBuf = specc_tests::specc_binary();
    let reference = fixture_copy();
    let first = state();
    let started = Instant::now();
    let status = build_on(&bin, reference.path(), first.as_deref())
        .wait_with_output()
        .expect("build");
    let took = started.elapsed();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let (tree, per_task) = result(reference.path());
    assert_eq!(per_task.len(), 8, "eight tasks: {per_task:?}");
    assert!(per_task.iter().all(|(_, n)| *n == 1));
    for i in 0..iterations {
        let dir = fixture_copy();
        let url = state();
        let mut child = build_on(&bin, dir.path(), url.as_deref());
        std::thread::sleep(took.mul_f64((f64::from(i) + 0.5) / f64::from(iterations)));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let resumed = build_on(&bin, dir.path(), url.as_deref())
            .wait_with_output()
            .expect("resume");
        assert!(
            resumed.status.success(),
            "iteration {i}: {}",
            String::from_utf8_lossy(&resumed.stderr)
        );
        let (t, p) = result(dir.path());
        assert_eq!(t, tree, "iteration {i}: the tree differs");
        assert!(
            p.iter().all(|(_, n)| *n == 1),
            "iteration {i}: a task landed twice: {p:?}"
        );
        let (calls, responses) = calls_and_responses(dir.path(), url.as_deref());
        assert_eq!(
            calls, responses,
            "iteration {i}: a journaled response was asked for again"
        );
        assert_eq!(
            dir.path().join(".specc/state.db").exists(),
            url.is_none(),
            "iteration {i}: the state is where the configuration put it"
        );
    }
    // Nothing is left running: the helpers die with their parent.
    std::thread::sleep(Duration::from_millis(200));
}

/// The status of the state directory's latest run.
fn last_run_status(dir: &Path) -> String {
    let db = rusqlite::Connection::open(dir.join(".specc/state.db")).expect("db");
    db.query_row(
        "SELECT status FROM runs ORDER BY started_unix DESC, rowid DESC LIMIT 1",
        [],
        |r| r.get(0),
    )
    .expect("a run")
}

/// SIGTERM while the build works (after its first task started, and after each of its
/// first landings): the build stops cleanly (exit 1, the reason said, its run recorded
/// `stopped`, not left `running`), and the next `specc build` resumes it to the
/// uninterrupted build's tree, landing nothing twice and asking for no journaled answer
/// again.
#[test]
fn a_build_stopped_by_sigterm_ends_cleanly_and_resumes_to_the_same_tree() {
    use std::io::BufRead as _;
    let bin: PathBuf = specc_tests::specc_binary();
    let reference = fixture_copy();
    let status = build(&bin, reference.path())
        .wait_with_output()
        .expect("build");
    assert!(status.status.success());
    let (tree, _) = result(reference.path());
    for landings in 0..4 {
        let dir = fixture_copy();
        let mut child = build(&bin, dir.path());
        let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut seen = Vec::new();
        // The signal goes once the work is under way: `landings` tasks landed.
        for line in lines.by_ref() {
            let line = line.expect("line");
            seen.push(line.clone());
            let landed = seen.iter().filter(|l| l.contains("] landed ")).count();
            if line.contains("] started ") && landed >= landings {
                break;
            }
        }
        let sent = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(sent.success());
        seen.extend(lines.map_while(Result::ok));
        let stopped = child.wait().expect("stopped");
        let stderr = seen.join("\n");
        assert_eq!(
            stopped.code(),
            Some(1),
            "after {landings} landings: {stderr}"
        );
        assert!(stderr.contains("stopped by SIGTERM"), "{stderr}");
        assert_eq!(last_run_status(dir.path()), "stopped", "{stderr}");
        let resumed = build(&bin, dir.path()).wait_with_output().expect("resume");
        assert!(
            resumed.status.success(),
            "after {landings} landings: {}",
            String::from_utf8_lossy(&resumed.stderr)
        );
        let (t, p) = result(dir.path());
        assert_eq!(t, tree, "after {landings} landings: the tree differs");
        assert!(p.iter().all(|(_, n)| *n == 1), "a task landed twice: {p:?}");
        let (calls, responses) = calls_and_responses(dir.path(), None);
        assert_eq!(calls, responses, "a journaled answer was asked for again");
    }
}
