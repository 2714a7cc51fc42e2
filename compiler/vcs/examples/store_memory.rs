//! Memory of a large store:
//! `cargo run --release -p specc-vcs --example store_memory -- DIR N [PATHS FILE_BYTES [CACHE]]`
//! makes a store of N commits in DIR (if it has none; by default 64 small files, else PATHS
//! files of FILE_BYTES each), then opens it again in a fresh process (run it twice), reads
//! every head file once, and prints the peak resident memory and the log's size. CACHE is
//! the head cache's budget in MiB (default 64; a huge value keeps every file, as before the
//! cache existed). design: vcs.memory
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

/// File `p` of `paths` (0: the 64 small files, one per agent), three directories deep.
fn path_of(p: u64, paths: u64) -> String {
    if paths == 0 {
        return format!("src/m{:02}/a{p}.rs", p % 16);
    }
    format!("src/{:02}/{:02}/f{}.rs", p % 32, (p / 32) % 32, p / 1024)
}

/// An edit's content: two lines, padded with comment lines to `bytes`.
fn content(a: u64, k: u64, bytes: usize) -> Vec<u8> {
    let mut s = format!("// agent {a} edit {k}\nfn f() {{}}\n");
    while s.len() < bytes {
        s.push_str("// ....................................................................\n");
    }
    s.into_bytes()
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
    let paths: u64 = args.get(3).and_then(|v| v.parse().ok()).unwrap_or(0);
    let file_bytes: usize = args.get(4).and_then(|v| v.parse().ok()).unwrap_or(0);
    let cache_mib: usize = args.get(5).and_then(|v| v.parse().ok()).unwrap_or(64);
    let options = Options {
        head_cache_bytes: cache_mib.saturating_mul(1 << 20),
        ..Options::default()
    };
    let log = dir.join("log");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    if log.exists() {
        let before = peak_kib();
        let repo = Repo::open(&log, options).expect("open");
        let seq = rt.block_on(repo.stats()).seq;
        let opened = peak_kib();
        let mut read = 0u64;
        for p in 0..paths.max(64) {
            let path = path_of(p, paths);
            if let Ok((_, Some(f))) = rt.block_on(repo.read_head(&path)) {
                read += f.bytes.len() as u64;
            }
        }
        let size = std::fs::metadata(&log).map_or(0, |m| m.len());
        println!(
            "opened {seq} commits, log {} MiB: peak resident {} MiB after the open, {} MiB \
             after reading {} MiB of head files (before the open {} MiB)",
            size >> 20,
            opened >> 10,
            peak_kib() >> 10,
            read >> 20,
            before >> 10
        );
        return;
    }
    std::fs::create_dir_all(&dir).expect("dir");
    rt.block_on(async {
        let repo = Repo::open(&log, options).expect("open");
        let per = n / 64;
        let mut tasks = Vec::new();
        for a in 0..64u64 {
            let repo = repo.clone();
            tasks.push(tokio::spawn(async move {
                for k in 0..per {
                    let path = if paths == 0 {
                        path_of(a, 0)
                    } else {
                        path_of((a * per + k) % paths, paths)
                    };
                    let Ok((head, file)) = repo.read_head(&path).await else {
                        return;
                    };
                    let s = Submission {
                        base: head,
                        changes: vec![Change {
                            path,
                            expected: file.map(|f| f.blob),
                            new: Some(content(a, k, file_bytes)),
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
