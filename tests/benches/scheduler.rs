//! The orchestration's own cost: N synthetic work leaves in a DAG (groups of 100: one root
//! task, 49 that fan out from it, and a chain of 50) carried out by an instant scripted
//! worker that writes one file each (two model calls: `write`, then `done`), through the
//! real scheduler, attempts, journal, ledger (with a budget cap, so every call reserves)
//! and VCS — everything `specc build` runs but the model's latency and the export. The VCS's
//! own time is measured apart: the same N one-file commits submitted straight to a fresh
//! store, `jobs` at a time and all N at once (the median of three runs each), and the
//! smaller of the two is subtracted: an attempt at the VCS holds no job, so a build can
//! have hundreds of submissions in flight, and the VCS's group commit makes fewer fsyncs
//! for them; the VCS at its best is what is not orchestration. Overhead per task is
//! (build wall time − that VCS time) / N. The bar: ≤ 100 µs per task at 10,000, growing
//! linearly. Beside it, the CPU the process spent in the build beyond the VCS run's, per
//! task: the build's threads overlap their work, which wall time counts once.
//! `cargo bench -p specc-tests --bench scheduler [-- N…]` (default 1000 2000 5000 10000);
//! `SPECC_BENCH_DIR=DIR` puts the state directories there instead of under target/;
//! `SPECC_BENCH_BUILD_ONLY=1` runs the builds alone (no VCS baseline, no overhead figure),
//! to profile them.

// The binary's allocator, so the benchmark measures what `specc build` runs.
// design: driver.allocator
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use specc_ir::plan::{ChildKind, TaskNode};
use specc_llm::types::Author;
use specc_llm::{
    BoxFuture, Client, Ledger, LlmConfig, LlmError, Provider, Request, Response, Scripted,
    ToolCall, Usage,
};
use specc_runtime::{Plan, Services, Stores, Workers, build};
use specc_sandbox::ProcessRunner;
use specc_state::{Journal, TaskState};
use specc_vcs::{Change, Outcome, Repo, Submission};

use specc_tests::{plans, settings as common};

const JOBS: usize = 8;

/// The worker: `write` its file at the first step, `done` at the second.
struct Instant2;

impl Provider for Instant2 {
    fn name(&self) -> &str {
        "w"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let first = !request
            .messages
            .iter()
            .any(|m| m.author == Author::Assistant);
        let user = request
            .messages
            .iter()
            .find(|m| m.author == Author::User)
            .map_or("", |m| m.text.as_str());
        // "# Task `t/00042`: …"
        let task = user.split('`').nth(1).unwrap_or("t/0");
        let i: usize = task.trim_start_matches("t/").parse().unwrap_or(0);
        let call = if first {
            ToolCall {
                id: "1".into(),
                name: "write".into(),
                arguments: json!({"path": path(i), "content": format!("{task}\n")}),
            }
        } else {
            ToolCall {
                id: "2".into(),
                name: "done".into(),
                arguments: json!({"summary": "wrote it"}),
            }
        };
        let mut r = Scripted::text(
            "",
            Usage {
                input: 100,
                cached_input: 0,
                output: 10,
            },
        );
        r.tool_calls = vec![call];
        Box::pin(async move { Ok(r) })
    }
}

use specc_tests::plans::file as path;

fn leaf(i: usize) -> TaskNode {
    let group = i / 100;
    let k = i % 100;
    let dep = match k {
        0 => None,
        1..=49 => Some(group * 100),
        _ => Some(i - 1),
    };
    TaskNode {
        id: format!("t/{i:05}"),
        parent: Some("t".into()),
        kind: ChildKind::Work,
        role: "worker".into(),
        model: "w".into(),
        title: format!("file {i}"),
        instructions: format!("Write {}.", path(i)),
        decisions_to_read: Vec::new(),
        write_scope: vec![path(i)],
        read_scope: Vec::new(),
        acceptance: Vec::new(),
        dependencies: dep.map(|d| format!("t/{d:05}")).into_iter().collect(),
        covers_requirements: Vec::new(),
        covers_nodes: Vec::new(),
        budget: 1000,
        fingerprint: format!("fp{i}"),
    }
}

fn plan(n: usize) -> Plan {
    let mut tasks = vec![plans::root()];
    let leaves: Vec<TaskNode> = (0..n).map(leaf).collect();
    let orders = leaves.iter().map(plans::order).collect();
    tasks.extend(leaves);
    Plan {
        tasks,
        orders,
        seed: [("README.md".to_owned(), "synthetic\n".to_owned())].into(),
        force: Vec::new(),
        spec: Default::default(),
    }
}

/// This process's CPU time so far (user and system).
fn cpu() -> Duration {
    Duration::from_secs_f64(specc_tests::cpu::own_seconds().unwrap_or(0.0))
}

/// One build of `n` leaves; its wall time and CPU time.
fn run_build(rt: &tokio::runtime::Runtime, dir: &Path, n: usize) -> (Duration, Duration) {
    let db = dir.join("state.db");
    let ledger = Arc::new(Ledger::open(&db).expect("ledger"));
    let journal = Journal::on(ledger.state_db()).expect("journal");
    std::fs::create_dir_all(dir.join("vcs")).expect("dir");
    let repo = Repo::open(&dir.join("vcs/log"), specc_vcs::Options::default()).expect("repo");
    let config = LlmConfig::parse(
        "[providers.w]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.worker]\nprovider = \"w\"\nmodel = \"w\"\n\
         [prices.w]\ninput = 1.0\noutput = 2.0\n[budget]\ndollars = 1000000.0\n",
    )
    .expect("config");
    let client = Client::from_config(config, &|_| None, None)
        .with_provider("w", Arc::new(Instant2), JOBS)
        .with_ledger(ledger, "bench");
    let settings = common::settings(false, 1000);
    let events = |_: specc_runtime::Event| {};
    let slots = specc_runtime::Slots::new(dir.join("work"));
    let intents = specc_runtime::Intents::default();
    let stores = Stores {
        client: &client,
        journal: &journal,
        repo: &repo,
        run: "bench",
    };
    let services = Services::new(
        stores,
        Arc::new(ProcessRunner::default()),
        &slots,
        &intents,
        &settings,
        &events,
    );
    journal.start_run("bench", "synthetic").expect("run");
    let plan = plan(n);
    let (started, cpu0) = (Instant::now(), cpu());
    let report = rt.block_on(build(&services, plan, Workers::Local { jobs: JOBS }));
    let (wall, used) = (started.elapsed(), cpu().saturating_sub(cpu0));
    assert_eq!(report.count(TaskState::Landed), n, "{:?}", report.stopped);
    (wall, used)
}

/// The VCS alone: the same `n` one-file commits, `in_flight` at a time, each on the head it
/// saw; its wall time and CPU time.
fn run_vcs(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    n: usize,
    in_flight: usize,
) -> (Duration, Duration) {
    std::fs::create_dir_all(dir.join("vcs")).expect("dir");
    let repo = Repo::open(&dir.join("vcs/log"), specc_vcs::Options::default()).expect("repo");
    let (started, cpu0) = (Instant::now(), cpu());
    rt.block_on(async {
        let head = repo.stats().await.head.expect("a head");
        let seed = repo
            .submit(submission(head, "README.md", "synthetic\n", "seed"))
            .await;
        let Outcome::Committed { .. } = seed else {
            panic!("{seed:?}")
        };
        let mut next = 0;
        let mut running = futures_util::stream::FuturesUnordered::new();
        use futures_util::StreamExt;
        loop {
            while running.len() < in_flight && next < n {
                let i = next;
                next += 1;
                let repo = &repo;
                running.push(async move {
                    // The durable head without a round trip, as an attempt takes its base.
                    let head = repo.head_now().expect("a head");
                    let task = format!("t/{i:05}");
                    repo.submit(submission(head, &path(i), &format!("{task}\n"), &task))
                        .await
                });
            }
            match running.next().await {
                Some(Outcome::Committed { .. }) => {}
                Some(other) => panic!("{other:?}"),
                None => break,
            }
        }
    });
    let wall = started.elapsed();
    drop(repo); // the integrator's last work counts
    (wall, cpu().saturating_sub(cpu0))
}

fn submission(base: specc_vcs::object::ObjectId, path: &str, text: &str, task: &str) -> Submission {
    Submission {
        base,
        changes: vec![Change {
            path: path.to_owned(),
            expected: None,
            new: Some(text.as_bytes().to_vec()),
            executable: false,
        }],
        message: format!("{task}: write"),
        task: task.to_owned(),
        idempotency_key: task.to_owned(),
    }
}

#[allow(clippy::print_stdout)] // a bench binary reports on stdout
fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1000, 2000, 5000, 10000]
    } else {
        sizes
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!("tasks   build s   tasks/s   vcs s   cpu/task µs   overhead/task µs");
    // The state lives beside the spec, on the project's file system: under target/ unless
    // SPECC_BENCH_DIR names another place (to compare file systems).
    let root = std::env::var_os("SPECC_BENCH_DIR").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf(),
        Into::into,
    );
    let root = root.as_path();
    for n in sizes {
        let a = tempfile::tempdir_in(root).expect("dir");
        let (wall, build_cpu) = run_build(&rt, a.path(), n);
        if std::env::var_os("SPECC_BENCH_BUILD_ONLY").is_some() {
            let cpu = build_cpu.as_secs_f64() / n as f64 * 1e6;
            println!("{n:>5}  {:>8.2}  cpu/task µs {cpu:.0}", wall.as_secs_f64());
            continue;
        }
        // The VCS alone varies by a factor of two from run to run on a disk (its fsyncs):
        // the median of three, each on a fresh store; at `JOBS` and at `n` in flight, the
        // faster of the two.
        let (vcs, vcs_cpu) = [JOBS, n]
            .into_iter()
            .map(|in_flight| {
                let mut runs: Vec<(Duration, Duration)> = (0..3)
                    .map(|_| {
                        let b = tempfile::tempdir_in(root).expect("dir");
                        run_vcs(&rt, b.path(), n, in_flight)
                    })
                    .collect();
                runs.sort();
                runs[1]
            })
            .min()
            .expect("two");
        let overhead = wall.saturating_sub(vcs).as_secs_f64() / n as f64 * 1e6;
        // The CPU the build spent beyond the VCS's, per task: wall time counts work the
        // threads overlap once, this counts it all.
        let cpu = build_cpu.saturating_sub(vcs_cpu).as_secs_f64() / n as f64 * 1e6;
        println!(
            "{n:>5}  {:>8.2}  {:>8.0}  {:>6.2}  {cpu:>11.0}  {overhead:>16.0}",
            wall.as_secs_f64(),
            n as f64 / wall.as_secs_f64(),
            vcs.as_secs_f64()
        );
    }
}
