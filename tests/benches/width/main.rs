//! The swarm at the seed's width (issue 40, point 2): `specc build` (the optimised binary,
//! as a process) over a plan of N independent work leaves with `jobs` attempts at a time,
//! its models an OpenAI-compatible server on 127.0.0.1 in this process that answers every
//! worker call after a latency drawn from a fixed seed (2–20 s by default). Each leaf's
//! worker writes its file, then says `done`; its acceptance check (`test -f`) is one real
//! command in the sandbox. The planner answers at once with the whole plan (hand-written
//! answers: they show the pipeline at width, not that a model can do the task).
//!
//! Reported per width: the build's wall time (process start to exit: `build`, and `ratio`
//! against the ideal) and the workers' span (first worker call to last answer); the ideal
//! (the sum of every call's latency divided by `jobs`, or the longest leaf when that is
//! longer) and a zero-overhead schedule of the same leaves in plan order (`no-ovh`); the CPU
//! specc and every process it started (sandboxes, checks, git) used per leaf; peak memory
//! (specc's own, and its whole process tree's), peak open files, processes and threads; and
//! the peaks of specc's own gauges (`--gauges`: attempts and model calls in flight, the state
//! committer's backlog, submissions at the VCS).
//!
//! `cargo bench -p specc-tests --bench width -- [--leaves N] [--jobs 64,256,512]
//! [--latency 2-20] [--seed S]`; `--small` is CI's run (40 leaves, 8 and 16 jobs, 50–200 ms).
//! `SPECC_BENCH_BIN=PATH` runs another specc binary; `SPECC_BENCH_KEEP=1` keeps each build's
//! directory (its gauges, state and checkouts); `SPECC_BENCH_DIR=DIR` puts them there.
//! design: perf.width

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use specc_tests::plans::{exported, file as path, file_leaf};

mod probe;
mod server;

/// What the bench runs.
#[derive(Clone, Debug)]
struct Setup {
    leaves: usize,
    widths: Vec<usize>,
    /// Each worker call's latency, uniform in this range, in milliseconds.
    latency: (u64, u64),
    seed: u64,
}

impl Setup {
    fn parse() -> Setup {
        let mut s = Setup {
            leaves: 2000,
            widths: vec![64, 256, 512],
            latency: (2000, 20_000),
            seed: 40,
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut i = 0;
        while i < args.len() {
            let value = args.get(i + 1).cloned().unwrap_or_default();
            match args[i].as_str() {
                "--small" => {
                    s.leaves = 40;
                    s.widths = vec![8, 16];
                    s.latency = (50, 200);
                    i += 1;
                    continue;
                }
                "--leaves" => s.leaves = value.parse().expect("--leaves N"),
                "--jobs" => {
                    s.widths = value
                        .split(',')
                        .map(|w| w.parse().expect("--jobs 64,256"))
                        .collect();
                }
                "--latency" => {
                    let (a, b) = value.split_once('-').expect("--latency MIN-MAX (seconds)");
                    let ms = |x: &str| (x.parse::<f64>().expect("seconds") * 1000.0) as u64;
                    s.latency = (ms(a), ms(b));
                    assert!(
                        s.latency.0 <= s.latency.1,
                        "--latency MIN-MAX with MIN <= MAX"
                    );
                }
                "--seed" => s.seed = value.parse().expect("--seed N"),
                _ => {} // cargo bench passes --bench
            }
            i += 2;
        }
        s
    }

    /// The latency of leaf `i`'s call `step` (0: write, 1: done): a fixed function of the
    /// seed, so every width and every run serves the same latencies.
    fn latency(&self, i: usize, step: usize) -> Duration {
        let mut x = self
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add((i as u64) << 8 | step as u64);
        // splitmix64
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
        let (lo, hi) = self.latency;
        Duration::from_millis(lo + x % (hi - lo + 1))
    }

    fn leaf_time(&self, i: usize) -> Duration {
        self.latency(i, 0) + self.latency(i, 1)
    }

    /// The ideal: every call's latency over `jobs`, or the longest leaf.
    fn ideal(&self, jobs: usize) -> Duration {
        let sum: Duration = (0..self.leaves).map(|i| self.leaf_time(i)).sum();
        let longest = (0..self.leaves)
            .map(|i| self.leaf_time(i))
            .max()
            .unwrap_or_default();
        (sum / jobs as u32).max(longest)
    }

    /// The same leaves in plan order on `jobs` slots with no overhead at all: what a perfect
    /// scheduler that starts leaves in plan order would take.
    fn scheduled(&self, jobs: usize) -> Duration {
        let mut slots = vec![Duration::ZERO; jobs];
        for i in 0..self.leaves {
            let free = slots.iter_mut().min().expect("at least one job");
            *free += self.leaf_time(i);
        }
        slots.into_iter().max().unwrap_or_default()
    }
}

/// The spec: a section of a hundred requirements per directory.
fn spec(n: usize) -> String {
    let mut s = String::from(
        "# Files\n\nA synthetic build for the width benchmark: one file per requirement.\n",
    );
    for i in 0..n {
        if i % 100 == 0 {
            s.push_str(&format!(
                "\n## Directory {} {{#g{:03}}}\n\n",
                i / 100,
                i / 100
            ));
        }
        s.push_str(&format!(
            "- [R-{}] The file `{}` MUST exist.\n",
            i + 1,
            path(i)
        ));
    }
    s
}

/// The planner's answer: one work leaf per file, no dependencies.
fn plan(n: usize) -> Value {
    let children: Vec<Value> = (0..n).map(|i| file_leaf(i, &[])).collect();
    json!({"decisions": [], "children": children})
}

fn config(url: &str, jobs: usize, leaves: usize) -> String {
    format!(
        "# The width benchmark's build: hand-written answers from a server on loopback.
[providers.bench]
kind = \"openai-compatible\"
base_url = \"{url}\"
concurrency = {jobs}

[roles.planner]
provider = \"bench\"
model = \"planner\"

[roles.worker]
provider = \"bench\"
model = \"worker\"
max_tokens = 1000

[prices.worker]
input = 0.1
output = 0.4

[build]
jobs = {jobs}

[limits]
width = {leaves}
"
    )
}

/// One build at `jobs`: its row of figures.
#[allow(clippy::print_stderr)] // where a kept run is
fn run(
    bin: &Path,
    root: &Path,
    setup: &Setup,
    jobs: usize,
    url: &str,
    served: &server::Served,
) -> Row {
    let dir = tempfile::tempdir_in(root).expect("dir");
    let d = dir.path();
    std::fs::write(d.join("spec.md"), spec(setup.leaves)).expect("spec");
    std::fs::write(d.join("specc.toml"), config(url, jobs, setup.leaves)).expect("config");
    let gauges = d.join("gauges.jsonl");
    // A binary from before `--gauges` is measured without them.
    let with_gauges = Command::new(bin)
        .args(["build", "--help"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--gauges"));
    served.reset();
    let cpu = probe::children_cpu();
    let started = Instant::now();
    let mut build = Command::new(bin);
    build.arg("build").arg(d.join("spec.md"));
    if with_gauges {
        build.arg("--gauges").arg(&gauges);
    }
    let mut child = build
        .current_dir(d)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("specc build");
    // Read while it runs: a full pipe would stop the build.
    let stderr = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        use std::io::Read as _;
        let mut err = String::new();
        let _ = { stderr }.read_to_string(&mut err);
        err
    });
    let (status, peaks) = probe::watch(&mut child);
    let err = reader.join().unwrap_or_default();
    let cpu = probe::children_cpu() - cpu;
    let wall = started.elapsed();
    assert!(status.success(), "specc build failed: {err}");
    let landed = exported(d);
    assert_eq!(landed, setup.leaves, "every leaf lands: {err}");
    if std::env::var_os("SPECC_BENCH_KEEP").is_some() {
        // To read the gauges and the state afterwards.
        let kept = dir.keep();
        eprintln!("kept {}", kept.display());
    }
    let gauges = if with_gauges {
        let peaks = gauge_peaks(&gauges);
        assert!(
            peaks.contains_key("attempts"),
            "specc build --gauges wrote its gauges"
        );
        peaks
    } else {
        HashMap::new()
    };
    // Two calls a leaf, each at its seeded latency: anything else is not the ideal's run.
    let calls = served.calls.load(Ordering::Relaxed);
    assert_eq!(calls, 2 * setup.leaves, "two worker calls a leaf: {err}");
    assert_eq!(
        served.unmatched.load(Ordering::Relaxed),
        0,
        "every worker call named its leaf"
    );
    Row {
        jobs,
        wall,
        cpu_per_leaf: Duration::from_secs_f64(cpu / setup.leaves as f64),
        workers: served.span(),
        calls,
        ideal: setup.ideal(jobs),
        scheduled: setup.scheduled(jobs),
        peaks,
        gauges,
    }
}

struct Row {
    jobs: usize,
    wall: Duration,
    /// The CPU specc and every process it started used, per leaf.
    cpu_per_leaf: Duration,
    /// From the first worker call's arrival to the last answer's departure.
    workers: Duration,
    calls: usize,
    ideal: Duration,
    scheduled: Duration,
    peaks: probe::Peaks,
    gauges: HashMap<String, u64>,
}

/// The peak of each gauge specc wrote.
fn gauge_peaks(file: &Path) -> HashMap<String, u64> {
    let mut peaks = HashMap::new();
    for line in std::fs::read_to_string(file).unwrap_or_default().lines() {
        let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        for (k, v) in m {
            if let Some(v) = v.as_u64() {
                let p = peaks.entry(k).or_insert(0);
                *p = (*p).max(v);
            }
        }
    }
    peaks
}

#[allow(clippy::print_stdout)] // a bench binary reports on stdout
fn main() {
    let setup = Setup::parse();
    // SPECC_BENCH_BIN: another build of specc, to compare versions with this bench.
    let bin: PathBuf = std::env::var_os("SPECC_BENCH_BIN")
        .map_or_else(specc_tests::specc_release_binary, PathBuf::from);
    let root = std::env::var_os("SPECC_BENCH_DIR").map_or_else(
        || Path::new(env!("CARGO_TARGET_TMPDIR")).to_path_buf(),
        Into::into,
    );
    let served = Arc::new(server::Served::new(setup.clone(), plan(setup.leaves)));
    let url = server::start(served.clone());
    println!(
        "{} independent leaves, worker calls {}–{} ms (seed {}); times in seconds, cpu in ms of specc and its children per leaf, memory in MiB",
        setup.leaves, setup.latency.0, setup.latency.1, setup.seed
    );
    println!(
        "{:>5} {:>8} {:>8} {:>7} {:>6} {:>8} {:>7} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6} {:>8} {:>8} {:>6} {:>6}",
        "jobs",
        "build",
        "workers",
        "ideal",
        "ratio",
        "no-ovh",
        "cpu",
        "rss",
        "tree",
        "fds",
        "procs",
        "thrds",
        "calls",
        "attempts",
        "in-call",
        "state",
        "vcs"
    );
    for &jobs in &setup.widths {
        let r = run(&bin, &root, &setup, jobs, &url, &served);
        let g = |k: &str| r.gauges.get(k).copied().unwrap_or(0);
        println!(
            "{:>5} {:>8.1} {:>8.1} {:>7.1} {:>6.2} {:>8.1} {:>7.1} {:>7.0} {:>7.0} {:>7} {:>6} {:>6} {:>6} {:>8} {:>8} {:>6} {:>6}",
            r.jobs,
            r.wall.as_secs_f64(),
            r.workers.as_secs_f64(),
            r.ideal.as_secs_f64(),
            // The whole build (start, plan, work, export) against the ideal.
            r.wall.as_secs_f64() / r.ideal.as_secs_f64(),
            r.scheduled.as_secs_f64(),
            r.cpu_per_leaf.as_secs_f64() * 1000.0,
            r.peaks.rss as f64 / 1024.0,
            r.peaks.tree_rss as f64 / 1024.0,
            r.peaks.fds,
            r.peaks.procs,
            r.peaks.threads,
            r.calls,
            g("attempts"),
            g("model_calls"),
            g("state_backlog"),
            g("vcs_submissions"),
        );
    }
}
