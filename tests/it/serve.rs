//! `specc serve` and three `specc worker` processes on loopback build the serve fixture
//! (`fixtures/build/serve`: hand-written answers, each worker's `run` sleeps a second). The
//! first worker is killed with SIGKILL mid-attempt; the second is paused with SIGSTOP past
//! its lease and then resumed. The build completes; the tree equals a single-machine
//! build's; no task lands twice; the paused worker's late writes are refused by the fencing
//! token; serve's journal holds the workers' responses (under their claims, fenced); and the
//! ledger counts each claim's calls once: an undisturbed task's calls equal
//! the single-machine build's, and a disturbed one's are at most one full set per claim.
//! Once with serve's leases in its SQLite state database, once in PostgreSQL (a database of
//! its own in `SPECC_TEST_PG_URL`'s cluster, or in a throwaway cluster; see
//! specc-test-support's `pg`).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::root;

use specc_test_support::pg;

const TOKEN: &str = "serve-test-token-0123456789";
const LEASE_SECONDS: &str = "1.5";

fn fixture_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(
            root().join("fixtures/build/serve").join(f),
            dir.path().join(f),
        )
        .expect("copy");
    }
    dir
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
pub(crate) fn result(dir: &Path) -> (String, BTreeMap<String, usize>) {
    let out = dir.join("out");
    let mut per_task = BTreeMap::new();
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
    (git(&out, &["ls-tree", "-r", "HEAD"]), per_task)
}

/// The ledger at `db`, or with a state URL, in the PostgreSQL database it names.
pub(crate) fn ledger(db: &Path, state_url: Option<&str>) -> specc_llm::Ledger {
    match state_url {
        None => specc_llm::Ledger::open_existing(db).expect("ledger"),
        Some(url) => {
            let state = specc_state::StateDb::connect_postgres(url, None).expect("PostgreSQL");
            specc_llm::Ledger::on_state(std::sync::Arc::new(state))
        }
    }
}

/// Ok calls of attempts' agents by task in the ledger at `db` (or the state URL's).
fn worker_calls(db: &Path, state_url: Option<&str>) -> BTreeMap<String, usize> {
    let mut by_task = BTreeMap::new();
    for r in ledger(db, state_url).rows().expect("rows") {
        // An attempt's agent is the worker's model, or on the ladder's last rung the
        // escalation's: both journal their responses as the attempt's steps.
        if (r.role == "worker" || r.role == "escalation") && r.outcome == "ok" {
            *by_task.entry(r.task).or_default() += 1;
        }
    }
    by_task
}

/// Spawns `specc` in `dir` with the token, info logs and the state URL, if any; its stderr
/// lines go to a channel.
pub(crate) fn spawn(
    bin: &Path,
    dir: &Path,
    args: &[&str],
    state_url: Option<&str>,
) -> (Child, mpsc::Receiver<String>) {
    let mut command = Command::new(bin);
    if let Some(url) = state_url {
        command.env("SPECC_STATE_URL", url);
    }
    let mut child = command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("SPECC_SERVE_TOKEN", TOKEN)
        .env("SPECC_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("specc starts");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Lines from `rx` until one contains `needle` (all of them, kept in `seen`).
pub(crate) fn wait_for(
    rx: &mpsc::Receiver<String>,
    needle: &str,
    seen: &mut Vec<String>,
) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
            seen.push(line.clone());
            if line.contains(needle) {
                return line;
            }
        }
    }
    panic!("no line with {needle:?} in:\n{}", seen.join("\n"));
}

/// Waits (up to two minutes) for serve to exit, keeping its log lines in `log`.
pub(crate) fn wait_exit(
    serve: &mut Child,
    rx: &mpsc::Receiver<String>,
    log: &mut Vec<String>,
) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        log.extend(rx.try_iter());
        if let Some(status) = serve.try_wait().expect("wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "serve did not finish:\n{}",
            log.join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    log.extend(rx.iter());
    status
}

fn signal(child: &Child, sig: &str) {
    let sent = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success(), "kill {sig}");
}

#[test]
fn serve_and_three_workers_survive_a_killed_and_a_paused_worker() {
    scenario(None);
}

#[test]
fn serve_and_three_workers_survive_a_killed_and_a_paused_worker_on_postgres() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let db = rt.block_on(pg::database());
    scenario(Some(&db.url));
}

/// How many times each task was claimed: its lease's attempt number.
fn claims(db: &Path, state_url: Option<&str>) -> BTreeMap<String, i64> {
    by_task(db, state_url, "SELECT task, attempt FROM task_leases")
}

/// The model responses serve's journal holds for each task, as its workers sent them
/// (under their claims' runs, `RUN@N`).
fn journaled_responses(db: &Path, state_url: Option<&str>) -> BTreeMap<String, i64> {
    by_task(
        db,
        state_url,
        "SELECT task, COUNT(*) FROM steps WHERE run LIKE '%@%' AND kind = 'model'
         GROUP BY task",
    )
}

/// `sql`'s (task, number) rows, from the state database at `db` or the state URL's.
fn by_task(db: &Path, state_url: Option<&str>, sql: &str) -> BTreeMap<String, i64> {
    let Some(url) = state_url else {
        return rusqlite::Connection::open(db)
            .expect("db")
            .prepare(sql)
            .expect("query")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("rows")
            .map(|r| r.expect("row"))
            .collect();
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        client
            .query(sql, &[])
            .await
            .expect("query")
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    })
}

fn scenario(state_url: Option<&str>) {
    let bin: PathBuf = specc_tests::specc_binary();
    let single = fixture_copy();
    let built = Command::new(&bin)
        .args(["build", "spec.md"])
        .current_dir(single.path())
        .output()
        .expect("build");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let (tree, landed_once) = result(single.path());
    assert_eq!(landed_once.len(), 8);
    let full = worker_calls(&single.path().join(".specc/state.db"), None);

    let dir = fixture_copy();
    let d = dir.path();
    let listen = ["--listen", "127.0.0.1:0", "--lease-seconds", LEASE_SECONDS];
    let serve_args = [&["serve", "spec.md"][..], &listen].concat();
    let (mut serve, serve_rx) = spawn(&bin, d, &serve_args, state_url);
    let mut serve_log = Vec::new();
    let line = wait_for(&serve_rx, "listening on http://", &mut serve_log);
    let url = line.rsplit(' ').next().expect("url").to_owned();
    let worker = ["worker", "--connect", url.as_str(), "--jobs", "1"];

    // The first worker is killed once its first attempt is under way.
    let (mut killed, killed_rx) = spawn(&bin, d, &worker, None);
    let mut killed_log = Vec::new();
    wait_for(&killed_rx, "AttemptStarted", &mut killed_log);
    killed.kill().expect("SIGKILL");
    let _ = killed.wait();

    // The second is paused mid-attempt for longer than its lease (the third takes its task
    // over meanwhile), then resumed.
    let (mut paused, paused_rx) = spawn(&bin, d, &worker, None);
    let mut paused_log = Vec::new();
    wait_for(&paused_rx, "AttemptStarted", &mut paused_log);
    signal(&paused, "-STOP");
    let (mut third, third_rx) = spawn(&bin, d, &worker, None);
    std::thread::sleep(Duration::from_secs(4));
    signal(&paused, "-CONT");

    let status = wait_exit(&mut serve, &serve_rx, &mut serve_log);
    let serve_text = serve_log.join("\n");
    assert!(status.success(), "{serve_text}");
    for (name, child, rx, log) in [
        ("paused", &mut paused, paused_rx, &mut paused_log),
        ("third", &mut third, third_rx, &mut Vec::new()),
    ] {
        let done = child.wait().expect("worker ends");
        log.extend(rx.iter());
        assert!(done.success(), "the {name} worker:\n{}", log.join("\n"));
    }

    let (t, per_task) = result(d);
    assert_eq!(
        t, tree,
        "the tree differs from a single-machine build's:\n{serve_text}"
    );
    assert_eq!(per_task, landed_once, "each task lands once");
    assert!(
        serve_text.contains("under a lost claim was refused (fencing token)"),
        "the paused worker's late writes were not refused:\n{serve_text}"
    );
    assert!(
        paused_log
            .iter()
            .any(|l| l.contains("the claim is lost") || l.contains("refused")),
        "the paused worker did not see its claim lost:\n{}",
        paused_log.join("\n")
    );

    // `specc status` reads the leases from the backend the configuration chooses.
    let mut status = Command::new(&bin);
    if let Some(url) = state_url {
        status.env("SPECC_STATE_URL", url);
    }
    let shown = status
        .args(["status", "spec.md"])
        .current_dir(d)
        .env("NO_COLOR", "1")
        .output()
        .expect("status");
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("leases: 0 ready, 0 leased, 8 done"),
        "specc status:\n{shown}"
    );
    // ... and the journal and the spend from there too: with a state URL, serve keeps no
    // state database of its own, so what status shows came from PostgreSQL.
    assert!(
        shown.contains("tasks: 8 landed") && shown.contains("spent: $0."),
        "specc status:\n{shown}"
    );
    assert_eq!(
        d.join(".specc/state.db").exists(),
        state_url.is_none(),
        "serve's state is in the backend the configuration chose"
    );
    if let Some(url) = state_url {
        // `specc cost` reads the same ledger when named by its URL.
        let cost = Command::new(&bin)
            .args(["cost", "--state", url])
            .env("NO_COLOR", "1")
            .output()
            .expect("cost");
        let table = String::from_utf8_lossy(&cost.stdout);
        assert!(
            cost.status.success() && table.contains("worker") && table.contains("planner"),
            "specc cost --state URL:\n{table}{}",
            String::from_utf8_lossy(&cost.stderr)
        );
    }

    // The ledger: every undisturbed task's calls once; a disturbed task's at most one full
    // set per claim (the killed worker's never reached the serve: they stay in its own).
    let db = d.join(".specc/state.db");
    let claims = claims(&db, state_url);
    assert_eq!(
        claims.len(),
        8,
        "every task was offered as a lease: {claims:?}"
    );
    let calls = worker_calls(&db, state_url);
    let journaled = journaled_responses(&db, state_url);

    let mut disturbed = 0;
    for (task, n) in &full {
        let claimed = claims.get(task).copied().unwrap_or(0);
        let got = calls.get(task).copied().unwrap_or(0);
        // Serve's journal has the workers' responses, under their claims: each paid call
        // at most once, and all of the claim that finished the task.
        let kept = usize::try_from(journaled.get(task).copied().unwrap_or(0)).expect("count");
        assert!(
            kept >= *n && kept <= got,
            "task {task}: {kept} journaled responses, {got} calls, {n} in a build"
        );
        if claimed == 1 {
            assert_eq!(got, *n, "task {task}: one claim, its calls once");
        } else {
            disturbed += 1;
            assert!(claimed >= 2, "task {task}: claimed {claimed} times");
            let most = n * usize::try_from(claimed).expect("claims");
            assert!(
                got >= *n && got <= most,
                "task {task}: {got} calls over {claimed} claims of {n}"
            );
        }
    }
    assert!(
        disturbed >= 2,
        "the killed and the paused worker's tasks were claimed again: {claims:?}"
    );
}

/// The cap the budget test sets: about three of the fixture's eight tasks' worth of worker
/// calls (each call costs $0.002 at these prices: 200 output tokens; its worst case, held
/// before it goes out, is $0.01: 1000).
const CAP: f64 = 0.03;

#[test]
fn workers_spend_one_shared_budget() {
    let bin: PathBuf = specc_tests::specc_binary();
    let dir = fixture_copy();
    let d = dir.path();
    let mut toml = std::fs::read_to_string(d.join("specc.toml")).expect("config");
    toml.push_str(&format!(
        "\n[prices.worker]\ninput = 0.0\noutput = 10.0\n\n[budget]\ndollars = {CAP}\n"
    ));
    std::fs::write(d.join("specc.toml"), toml).expect("config");
    let serve_args = ["serve", "spec.md", "--listen", "127.0.0.1:0"];
    let (mut serve, serve_rx) = spawn(&bin, d, &serve_args, None);
    let mut serve_log = Vec::new();
    let line = wait_for(&serve_rx, "listening on http://", &mut serve_log);
    let url = line.rsplit(' ').next().expect("url").to_owned();
    // Three workers, each of which would stay under the cap on its own calls.
    let worker = ["worker", "--connect", url.as_str(), "--jobs", "2"];
    let mut workers: Vec<_> = (0..3).map(|_| spawn(&bin, d, &worker, None)).collect();
    let status = serve.wait().expect("serve ends");
    serve_log.extend(serve_rx.iter());
    for (w, rx) in &mut workers {
        let _ = w.wait();
        rx.iter().for_each(drop);
    }
    let text = serve_log.join("\n");
    assert!(!status.success(), "the cap stops the build:\n{text}");
    assert!(text.contains("budget"), "it says why:\n{text}");
    let rows = specc_llm::Ledger::open_existing(&d.join(".specc/state.db"))
        .expect("ledger")
        .rows()
        .expect("rows");
    let workers_calls = rows.iter().filter(|r| r.role == "worker").count();
    let spent: f64 = rows.iter().map(|r| r.dollars).sum();
    assert!(
        workers_calls >= 3,
        "the workers' calls are in serve's ledger: {workers_calls}"
    );
    assert!(
        spent <= CAP + 1e-9,
        "the workers together spent ${spent} past the ${CAP} cap"
    );
    // Less than the whole build's cost: the cap, not the end of the work, stopped it.
    assert!(
        workers_calls < 32,
        "{workers_calls} calls: the cap did not bind"
    );
}
