//! The agent VCS under a swarm: N simulated agents (tokio tasks) edit random lines of random
//! files of a 2,000-file repository and commit, a tunable share of them on a few hot files.
//! Prints durable commits/s, conflicts, and p50/p99 acknowledge latency for N = 1, 16, 64,
//! 256 and 1,024 (or `-- --agents N` alone, on a fresh store); then makes the same kind of edits with the git CLI (one `git commit` each) and prints
//! the ratio at N = 64.
//!
//! Run: `cargo bench -p specc-vcs --bench throughput` (`-- --seconds S --contention P
//! --agents N --busy`). With `--busy`, two busy-looping processes compete for the two cores
//! while each size runs; the table then also says how much CPU the store got (user and
//! system time of this process) and the commits per CPU second, which stay where they are
//! quiet if the store degrades no worse than the CPU share it lost.
#![allow(clippy::print_stdout)]

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use specc_vcs::{Change, Options, Outcome, Repo, Submission};

const FILES: usize = 2000;
const HOT: usize = 20;

fn path(i: usize) -> String {
    format!("src/m{:02}/file{i:04}.rs", i % 40)
}

fn initial(i: usize) -> String {
    (0..30).map(|l| format!("// file {i} line {l}\n")).collect()
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

struct Run {
    commits: u64,
    conflicts: u64,
    elapsed: Duration,
    latencies: Vec<Duration>,
    batches: u64,
    /// User and system CPU time this process used during the run.
    cpu: Duration,
}

/// This process's user plus system CPU time so far (`/proc/self/stat`, in clock ticks of
/// 1/100 s, Linux's USER_HZ).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command's `)`: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Two busy-looping processes, one per core, until dropped: the `--busy` load.
struct Busy(Vec<std::process::Child>);

impl Busy {
    fn start() -> Busy {
        Busy(
            (0..2)
                .filter_map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .spawn()
                        .ok()
                })
                .collect(),
        )
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

async fn run(repo: &Repo, agents: usize, seconds: f64, contention: f64) -> Run {
    let stop = Instant::now() + Duration::from_secs_f64(seconds);
    let commits = Arc::new(AtomicU64::new(0));
    let conflicts = Arc::new(AtomicU64::new(0));
    let before = repo.stats().await.batches;
    let cpu_before = cpu_time();
    let started = Instant::now();
    let mut handles = Vec::new();
    for a in 0..agents {
        let repo = repo.clone();
        let (commits, conflicts) = (commits.clone(), conflicts.clone());
        handles.push(tokio::spawn(async move {
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ ((a as u64 + 1) * 0x1000_0001));
            let mut latencies = Vec::new();
            let mut k = 0u64;
            while Instant::now() < stop {
                k += 1;
                let hot = (rng.next() % 10_000) as f64 / 10_000.0 < contention;
                let file = if hot {
                    (rng.next() as usize) % HOT
                } else {
                    // Each agent has its own files outside the hot set.
                    let own = (FILES - HOT) / agents.max(1);
                    HOT + a * own.max(1) % (FILES - HOT) + (rng.next() as usize) % own.max(1)
                };
                let p = path(file.min(FILES - 1));
                let Ok((head, Some(current))) = repo.read_head(&p).await else {
                    continue;
                };
                let mut lines: Vec<String> = String::from_utf8_lossy(&current.bytes)
                    .lines()
                    .map(str::to_owned)
                    .collect();
                let l = (rng.next() as usize) % lines.len().max(1);
                if let Some(line) = lines.get_mut(l) {
                    *line = format!("// agent {a} edit {k}");
                }
                let text = lines.join("\n") + "\n";
                let s = Submission {
                    base: head,
                    changes: vec![Change {
                        path: p,
                        expected: Some(current.blob),
                        new: Some(text.into_bytes()),
                        executable: current.executable,
                    }],
                    message: format!("agent {a} edit {k}"),
                    task: format!("agent-{a}"),
                    idempotency_key: String::new(),
                };
                let t = Instant::now();
                let outcome = repo.submit(s).await;
                latencies.push(t.elapsed());
                match outcome {
                    Outcome::Committed { .. } => commits.fetch_add(1, Ordering::Relaxed),
                    Outcome::Conflict(_) => conflicts.fetch_add(1, Ordering::Relaxed),
                    Outcome::Refused(_) => 0,
                };
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for h in handles {
        latencies.extend(h.await.unwrap_or_default());
    }
    let elapsed = started.elapsed();
    latencies.sort();
    Run {
        commits: commits.load(Ordering::Relaxed),
        conflicts: conflicts.load(Ordering::Relaxed),
        elapsed,
        latencies,
        batches: repo.stats().await.batches - before,
        cpu: cpu_time().saturating_sub(cpu_before),
    }
}

fn pct(v: &[Duration], p: f64) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// The git CLI making `edits` edits, one `git commit` each, in a repository of the same shape.
fn git_commits_per_second(dir: &std::path::Path, edits: usize) -> Option<f64> {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.com")
            .env("GIT_COMMITTER_NAME", "bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.com")
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    git(&["init", "-q"])?;
    for i in 0..FILES {
        let p = dir.join(path(i));
        std::fs::create_dir_all(p.parent()?).ok()?;
        std::fs::write(&p, initial(i)).ok()?;
    }
    git(&["add", "-A"])?;
    git(&["commit", "-q", "-m", "initial"])?;
    let mut rng = Rng(7);
    let started = Instant::now();
    for k in 0..edits {
        let i = (rng.next() as usize) % FILES;
        let p = dir.join(path(i));
        let mut text = std::fs::read_to_string(&p).ok()?;
        text.push_str(&format!("// edit {k}\n"));
        std::fs::write(&p, text).ok()?;
        git(&["commit", "-q", "-a", "-m", &format!("edit {k}")])?;
    }
    Some(edits as f64 / started.elapsed().as_secs_f64())
}

/// A store at `log` holding the repository's files in one commit.
async fn seeded(log: &std::path::Path) -> Repo {
    let repo = Repo::open(log, Options::default()).expect("open");
    let (root, _) = repo.read_head("x").await.expect("head");
    let all = Submission {
        base: root,
        changes: (0..FILES)
            .map(|i| Change {
                path: path(i),
                expected: None,
                new: Some(initial(i).into_bytes()),
                executable: false,
            })
            .collect(),
        message: "initial".into(),
        task: "setup".into(),
        idempotency_key: String::new(),
    };
    assert!(matches!(repo.submit(all).await, Outcome::Committed { .. }));
    repo
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: f64| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let seconds = arg("--seconds", 3.0);
    // `--agents N` runs one swarm size only (on a fresh store, so sizes can be compared).
    let counts: Vec<usize> = match args.iter().position(|a| a == "--agents") {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .into_iter()
            .collect(),
        None => vec![1, 16, 64, 256, 1024],
    };
    let contention = arg("--contention", 0.05);
    let busy = args.iter().any(|a| a == "--busy");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("dir");
    println!(
        "repository: {FILES} files, {HOT} hot; contention {:.0}%; {seconds} s per run; 2 cores{}",
        contention * 100.0,
        if busy {
            "; busy: two busy-looping processes compete for them"
        } else {
            ""
        }
    );
    let mut at_64 = 0.0;
    rt.block_on(async {
        println!(
            "{:>5} {:>12} {:>10} {:>9} {:>10} {:>10} {:>13} {:>7} {:>13}",
            "N",
            "commits/s",
            "commits",
            "conflicts",
            "p50",
            "p99",
            "commits/fsync",
            "cpu s",
            "commits/cpu-s"
        );
        // Each swarm size on a store of its own, seeded the same: a size measured after the
        // commits of the sizes before it would measure the store's growth, not the agents.
        let mut last = None;
        for agents in counts.iter().copied() {
            let repo = seeded(&dir.path().join(format!("repo-{agents}.log"))).await;
            let load = busy.then(Busy::start);
            let r = run(&repo, agents, seconds, contention).await;
            drop(load);
            let rate = r.commits as f64 / r.elapsed.as_secs_f64();
            if agents == 64 {
                at_64 = rate;
            }
            println!(
                "{agents:>5} {rate:>12.0} {:>10} {:>9} {:>8.2}ms {:>8.2}ms {:>13.1} {:>7.2} {:>13.0}",
                r.commits,
                r.conflicts,
                pct(&r.latencies, 0.5).as_secs_f64() * 1e3,
                pct(&r.latencies, 0.99).as_secs_f64() * 1e3,
                r.commits as f64 / r.batches.max(1) as f64,
                r.cpu.as_secs_f64(),
                r.commits as f64 / r.cpu.as_secs_f64().max(1e-9)
            );
            last = Some(repo);
        }
        let Some(repo) = last else {
            return;
        };
        let stats = repo.stats().await;
        let hottest: Vec<String> = stats
            .conflicts
            .iter()
            .take(3)
            .map(|(p, n)| format!("{p} ({n})"))
            .collect();
        println!(
            "hottest files by conflicts (the last run): {}",
            hottest.join(", ")
        );
    });
    let git_dir = tempfile::tempdir().expect("dir");
    match git_commits_per_second(git_dir.path(), 200) {
        Some(git) => {
            println!("git CLI, one `git commit` per edit: {git:.1} commits/s");
            println!(
                "ratio at N = 64: {:.0}x the git CLI (bar: >= 200x)",
                at_64 / git
            );
        }
        None => println!("git CLI: not available"),
    }
}
