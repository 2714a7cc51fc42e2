//! Crash safety: a child process commits as fast as it can from eight tasks and prints every
//! acknowledged commit; the parent SIGKILLs it at a random moment, reopens the store and
//! checks that every acknowledged commit is there, that the head resolves (no partial commit
//! is visible: `Repo::open` verifies every record's hash and cuts a torn tail), and that the
//! files of every acknowledged commit read back. Fifty times in a row, on the same store.

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Options, Outcome, Repo, Submission};

const CHILD_ENV: &str = "SPECC_VCS_CRASH_CHILD";

/// The child: this test binary run again, filtered to `crash_safety_under_sigkill`, with the
/// variable set to the store's path; it commits until it is killed.
fn child(path: &str) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async move {
        let repo = Repo::open(std::path::Path::new(path), Options::default()).expect("open");
        let out = std::sync::Arc::new(std::sync::Mutex::new(std::io::stdout()));
        let mut tasks = Vec::new();
        for t in 0..8u32 {
            let repo = repo.clone();
            let out = out.clone();
            tasks.push(tokio::spawn(async move {
                for k in 0u64.. {
                    let path = if k % 5 == 0 {
                        format!("shared/{}.txt", k % 3)
                    } else {
                        format!("t{t}/f{}.txt", k % 7)
                    };
                    let Ok((head, file)) = repo.read_head(&path).await else {
                        return;
                    };
                    let mut text = file
                        .as_ref()
                        .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
                        .unwrap_or_default();
                    text.push_str(&format!("task {t} edit {k}\n"));
                    if text.lines().count() > 50 {
                        text = format!("task {t} reset {k}\n");
                    }
                    let s = Submission {
                        base: head,
                        changes: vec![Change {
                            path,
                            expected: file.map(|f| f.blob),
                            new: Some(text.into_bytes()),
                            executable: false,
                        }],
                        message: format!("task {t} edit {k}"),
                        task: format!("t{t}"),
                        idempotency_key: format!("t{t}-k{k}"),
                    };
                    if let Outcome::Committed { id, seq, .. } = repo.submit(s).await
                        && let Ok(mut o) = out.lock()
                    {
                        let _ = writeln!(o, "ack {seq} {}", id.hex());
                        let _ = o.flush();
                    }
                }
            }));
        }
        for t in tasks {
            let _ = t.await;
        }
    });
}

#[test]
fn crash_safety_under_sigkill() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        return child(&path);
    }
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("repo.log");
    let exe = std::env::current_exe().expect("test binary");
    let mut total_acked = 0usize;
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for iteration in 0..50 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let mut child = Command::new(&exe)
            .args([
                "crash_safety_under_sigkill",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the child");
        std::thread::sleep(Duration::from_millis(30 + seed % 250));
        child.kill().expect("SIGKILL");
        let stdout = child.stdout.take().expect("stdout");
        let acked: Vec<(u64, ObjectId)> = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter_map(|l| {
                let mut w = l.strip_prefix("ack ")?.split(' ');
                Some((w.next()?.parse().ok()?, ObjectId::from_hex(w.next()?)?))
            })
            .collect();
        let _ = child.wait();
        total_acked += acked.len();

        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let repo = Repo::open(&log, Options::default())
                .unwrap_or_else(|e| panic!("iteration {iteration}: the store does not open: {e}"));
            let stats = repo.stats().await;
            for (seq, id) in &acked {
                let c = repo.commit(*id).await.unwrap_or_else(|_| {
                    panic!("iteration {iteration}: acknowledged commit {seq} {id:?} is missing")
                });
                assert_eq!(c.seq, *seq);
                assert!(stats.seq >= *seq);
            }
            if let Some((_, last)) = acked.last() {
                assert!(
                    repo.read(*last, "shared/0.txt").await.is_ok()
                        || repo.read(*last, "t0/f1.txt").await.is_ok()
                );
            }
        });
    }
    assert!(
        total_acked > 1000,
        "the children acknowledged {total_acked} commits in all"
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!("50 SIGKILLs survived; {total_acked} acknowledged commits all present");
    }
}
