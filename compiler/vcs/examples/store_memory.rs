//! Memory of a large store: `cargo run --release -p specc-vcs --example store_memory -- DIR N`
//! makes a store of N commits in DIR (if it has none), then opens it again in a fresh process
//! (run it twice) and prints the peak resident memory after the open, and the log's size.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;

use specc_vcs::{Change, Options, Outcome, Repo, Submission};

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .cloned()
            .unwrap_or_else(|| "/dev/shm/store".into()),
    );
    let n: u64 = args
        .get(2)
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let log = dir.join("log");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if log.exists() {
        let before = peak_kib();
        let repo = Repo::open(&log, Options::default()).expect("open");
        let seq = rt.block_on(repo.stats()).seq;
        let size = std::fs::metadata(&log).map_or(0, |m| m.len());
        println!(
            "opened {seq} commits, log {} MiB: peak resident {} MiB (before the open {} MiB)",
            size >> 20,
            peak_kib() >> 10,
            before >> 10
        );
        return;
    }
    std::fs::create_dir_all(&dir).expect("dir");
    rt.block_on(async {
        let repo = Repo::open(&log, Options::default()).expect("open");
        let per = n / 64;
        let mut tasks = Vec::new();
        for a in 0..64u64 {
            let repo = repo.clone();
            tasks.push(tokio::spawn(async move {
                for k in 0..per {
                    let path = format!("src/m{:02}/a{a}.rs", a % 16);
                    let Some((head, file)) = repo.read_head(&path).await else {
                        return;
                    };
                    let s = Submission {
                        base: head,
                        changes: vec![Change {
                            path,
                            expected: file.map(|f| f.blob),
                            new: Some(format!("// agent {a} edit {k}\nfn f() {{}}\n").into_bytes()),
                            executable: false,
                        }],
                        message: format!("agent {a} edit {k}"),
                        task: format!("a{a}"),
                        idempotency_key: String::new(),
                    };
                    let _ = matches!(repo.submit(s).await, Outcome::Committed { .. });
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
        println!("made {} commits", repo.stats().await.seq);
    });
}
