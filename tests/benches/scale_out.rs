//! Scale-out: `specc serve` with its leases in PostgreSQL and 1, 2 and 4 `specc worker`
//! processes on loopback, against `specc build` on one machine with as many jobs in all, its
//! state in `.specc/state.db` and, like for like, in PostgreSQL too.
//! The tasks are the scheduler benchmark's synthetic leaves (groups of 100: a root, 49 that
//! fan out from it, a chain of 50 after them), each writing one file and passing one
//! sandboxed acceptance check (`test -f`). The answers are hand-written (an answer book made
//! here, recorded once by an in-process build, then replayed by every process): the models
//! answer at once, so what is measured is specc's own work per leaf — claims, the replica's
//! fetch, the checkout, the agent loop, the sandboxed check, the submission, the landing —
//! not a model's latency. Every run is the optimised `specc` binary as a process, exit to
//! exit, planning and export included.
//!
//! Reported per run: wall time, tasks/s, the mean lease latency (the state store's time in a
//! claim that handed out a leaf: serve's `specc_serve_claim_seconds_total` over
//! `specc_serve_claims_total`, from the counts serve logs when the leaves are over), the
//! mean time a ready leaf waited for a claim (queueing included), the CPU specc's processes
//! (and, apart, PostgreSQL's) used over the wall time (cores busy: on a two-core machine,
//! 2.0 is saturated), and
//! serve's own CPU per leaf — with the workers on other machines, one serve core's ceiling
//! is 1000 / that many leaves a second.
//!
//! `cargo bench -p specc-tests --bench scale_out [-- N [JOBS]]` (default 400 leaves, 2 jobs
//! per worker process). PostgreSQL: a database of its own per run in `SPECC_TEST_PG_URL`'s
//! cluster, or in a throwaway cluster this process starts (specc-test-support's `pg`).
//! design: state.deployment

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use specc_tests::answers::AnswerBook;
use specc_tests::plans::{exported, file as path, file_leaf, key};

use specc_test_support::pg;

const TOKEN: &str = "scale-out-bench-token-0123456789";

/// The scheduler benchmark's DAG: in each group of 100, a root, 49 that depend on it, and a
/// chain of 50 after the 49th.
fn dependency(i: usize) -> Option<usize> {
    match i % 100 {
        0 => None,
        1..=49 => Some(i / 100 * 100),
        _ => Some(i - 1),
    }
}

fn spec(n: usize) -> String {
    let mut s = String::from(
        "# Files\n\nA synthetic build for the scale-out benchmark: one file per requirement.\n\n## Files\n\n",
    );
    for i in 0..n {
        s.push_str(&format!(
            "- [R-{}] The file `{}` MUST exist.\n",
            i + 1,
            path(i)
        ));
    }
    s
}

/// Hand-written answers: the planner's one plan of `n` leaves, and each leaf's worker
/// writing its file, then saying it is done.
fn book(n: usize) -> Value {
    let children: Vec<Value> = (0..n)
        .map(|i| file_leaf(i, &dependency(i).map(key).into_iter().collect::<Vec<_>>()))
        .collect();
    let workers: serde_json::Map<String, Value> = (0..n)
        .map(|i| {
            let write = json!([{"name": "write", "arguments": {"path": path(i), "content": format!("{}\n", key(i))}}]);
            let done = json!([{"name": "done", "arguments": {"summary": "written"}}]);
            (key(i), json!([[write, done]]))
        })
        .collect();
    json!({
        "note": "Hand-written answers for the scale-out benchmark: they show the pipeline works, not that a model can do the task.",
        "planner": {"": {"decisions": [], "children": children}},
        "workers": workers,
    })
}

const CONFIG: &str = "# The scale-out benchmark's build: hand-written answers, replayed.
[providers.recorded]
kind = \"replay\"
recording = \"recording.jsonl\"

[roles.planner]
provider = \"recorded\"
model = \"planner\"

[roles.worker]
provider = \"recorded\"
model = \"worker\"
max_tokens = 1000

[build]
jobs = 2

[limits]
# One planned node holds every leaf.
width = ";

/// The project: spec, config, and the recording an in-process build made from the book.
fn project(root: &Path, n: usize, helper: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(root).expect("dir");
    let d = dir.path();
    std::fs::write(d.join("spec.md"), spec(n)).expect("spec");
    std::fs::write(d.join("specc.toml"), format!("{CONFIG}{n}\n")).expect("config");
    let env = specc::Env::plain()
        .with_models(Arc::new(AnswerBook::new(book(n))))
        .with_sandbox_helper(helper.to_path_buf());
    let recording = d.join("recording.new.jsonl");
    let args = [
        "specc".to_owned(),
        "build".to_owned(),
        d.join("spec.md").display().to_string(),
        "--record".to_owned(),
        recording.display().to_string(),
    ];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(args, &env, &mut out, &mut err);
    assert_eq!(code, 0, "recording: {}", String::from_utf8_lossy(&err));
    std::fs::rename(&recording, d.join("recording.jsonl")).expect("recording");
    for gone in [".specc", "out"] {
        let _ = std::fs::remove_dir_all(d.join(gone));
    }
    dir
}

fn copy(root: &Path, from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(root).expect("dir");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(from.join(f), dir.path().join(f)).expect("copy");
    }
    dir
}

/// CPU time of this process's waited-for children (and theirs), in seconds.
fn children_cpu() -> f64 {
    specc_tests::cpu::children_seconds().unwrap_or(0.0)
}

/// CPU time of the PostgreSQL server's processes so far, in seconds: each live one's own
/// and, through the postmaster, its exited backends'.
fn postgres_cpu() -> f64 {
    let mut ticks = 0.0;
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if !head.ends_with("(postgres") {
            continue;
        }
        let f: Vec<f64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0.0))
            .collect();
        ticks += f.get(11..15).map_or(0.0, |t| t.iter().sum());
    }
    ticks / 100.0
}

struct Run {
    wall: Duration,
    cpu: f64,
    /// PostgreSQL's CPU seconds over the run (serve's runs).
    pg: Option<f64>,
    /// Claims, seconds in the store's claims, seconds leaves waited, serve's own CPU
    /// seconds: from serve's final counts.
    claims: Option<(f64, f64, f64, f64)>,
}

/// `specc build` with `jobs`, its state in `.specc/` or, with `state_url`, in PostgreSQL.
fn single(
    bin: &Path,
    root: &Path,
    project: &Path,
    n: usize,
    jobs: usize,
    state_url: Option<&str>,
) -> Run {
    let dir = copy(root, project);
    let cpu = children_cpu();
    let started = Instant::now();
    let mut command = Command::new(bin);
    if let Some(url) = state_url {
        command.env("SPECC_STATE_URL", url);
    }
    let o = command
        .args(["build", "spec.md", "--jobs", &jobs.to_string()])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("specc build");
    let wall = started.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(exported(dir.path()), n, "every leaf's file is exported");
    Run {
        wall,
        cpu: children_cpu() - cpu,
        pg: None,
        claims: None,
    }
}

/// `GET /metrics` from serve at `addr`.
fn scrape(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.contains(" 200 ").then_some(text)
}

/// `name=VALUE` in a log line.
fn field(line: &str, name: &str) -> f64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
        .unwrap_or(0.0)
}

fn scaled(
    bin: &Path,
    root: &Path,
    project: &Path,
    n: usize,
    workers: usize,
    jobs: usize,
    url: &str,
) -> Run {
    let dir = copy(root, project);
    let d = dir.path();
    let cpu = children_cpu();
    let pg = postgres_cpu();
    let started = Instant::now();
    let mut serve = Command::new(bin)
        .args(["serve", "spec.md", "--listen", "127.0.0.1:0"])
        .current_dir(d)
        .env("NO_COLOR", "1")
        .env("SPECC_SERVE_TOKEN", TOKEN)
        .env("SPECC_STATE_URL", url)
        .env("SPECC_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("specc serve");
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let stderr = serve.stderr.take().expect("stderr");
        let log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("specc serve: listening on http://") {
                    let _ = tx.send(addr.to_owned());
                }
                log.lock().expect("log").push(line);
            }
        });
    }
    let addr = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            panic!(
                "serve did not listen:\n{}",
                log.lock().expect("log").join("\n")
            )
        });
    let connect = format!("http://{addr}");
    let mut children: Vec<_> = (0..workers)
        .map(|_| {
            Command::new(bin)
                .args(["worker", "--connect", &connect, "--jobs", &jobs.to_string()])
                .current_dir(d)
                .env("NO_COLOR", "1")
                .env("SPECC_SERVE_TOKEN", TOKEN)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("specc worker")
        })
        .collect();
    // The metrics endpoint answers while the build runs: scraped until it has once (each
    // scrape reads the ledger, which would weigh on serve's figures if repeated).
    let mut scraped = false;
    let status = loop {
        if let Some(status) = serve.try_wait().expect("wait") {
            break status;
        }
        if !scraped {
            scraped = scrape(&addr).is_some_and(|m| m.contains("specc_serve_claims_total"));
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let wall = started.elapsed();
    for c in &mut children {
        let _ = c.wait();
    }
    assert!(
        status.success(),
        "serve:\n{}",
        log.lock().expect("log").join("\n")
    );
    assert_eq!(exported(d), n, "every leaf's file is exported");
    assert!(scraped, "serve's metrics endpoint answered");
    // The final counts: serve logs them once the build's leaves are over.
    let log = log.lock().expect("log").join("\n");
    let over = log
        .lines()
        .find(|l| l.contains("the build's leaves are over"))
        .unwrap_or_else(|| panic!("no final counts in serve's log:\n{log}"));
    let claims = Some((
        field(over, "claims"),
        field(over, "claim_micros") / 1e6,
        field(over, "ready_micros") / 1e6,
        field(over, "cpu_ms") / 1e3,
    ));
    // Serve's connections are gone: their backends' time is the postmaster's now.
    std::thread::sleep(Duration::from_millis(300));
    Run {
        wall,
        cpu: children_cpu() - cpu,
        pg: Some(postgres_cpu() - pg),
        claims,
    }
}

#[allow(clippy::print_stdout)] // a bench binary reports on stdout
fn report(what: &str, procs: usize, jobs: usize, n: usize, r: &Run) {
    let secs = r.wall.as_secs_f64();
    let (claims, lease, ready, serve) = match r.claims {
        Some((c, s, w, cpu)) if c > 0.0 => (
            format!("{c:.0}"),
            format!("{:.2}", s / c * 1e3),
            format!("{:.0}", w / c * 1e3),
            format!("{:.2}", cpu / n as f64 * 1e3),
        ),
        _ => ("-".into(), "-".into(), "-".into(), "-".into()),
    };
    let pg = r.pg.map_or("-".into(), |pg| format!("{:.2}", pg / secs));
    println!(
        "{what:<22} {procs:>5} {jobs:>5} {secs:>7.2} {:>8.1} {claims:>7} {lease:>9} {ready:>9} {:>6.2} {pg:>6} {serve:>9}",
        n as f64 / secs,
        r.cpu / secs
    );
}

#[allow(clippy::print_stdout)]
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(400);
    let jobs = args.get(1).copied().unwrap_or(2);
    let bin: PathBuf = specc_tests::specc_release_binary();
    let root = std::env::var_os("SPECC_BENCH_DIR").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf(),
        Into::into,
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let project = project(&root, n, &bin);
    println!(
        "{n} leaves, {jobs} jobs per worker process; lease and ready: means per claim; \
         cpu: cores busy (specc's processes); pg: cores busy (PostgreSQL's); \
         serve ms: serve's own CPU per leaf"
    );
    println!(
        "{:<22} {:>5} {:>5} {:>7} {:>8} {:>7} {:>9} {:>9} {:>6} {:>6} {:>9}",
        "run",
        "procs",
        "jobs",
        "wall s",
        "tasks/s",
        "claims",
        "lease ms",
        "ready ms",
        "cpu",
        "pg",
        "serve ms"
    );
    for workers in [1, 2, 4] {
        let r = single(&bin, &root, project.path(), n, workers * jobs, None);
        report("specc build", 1, workers * jobs, n, &r);
        // The same build with its whole state in PostgreSQL: like for like with serve's.
        let db = rt.block_on(pg::database());
        let r = single(
            &bin,
            &root,
            project.path(),
            n,
            workers * jobs,
            Some(&db.url),
        );
        report("specc build (pg)", 1, workers * jobs, n, &r);
        let db = rt.block_on(pg::database());
        let r = scaled(&bin, &root, project.path(), n, workers, jobs, &db.url);
        report("serve + workers (pg)", workers, jobs, n, &r);
    }
}
