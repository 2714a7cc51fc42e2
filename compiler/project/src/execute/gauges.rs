//! `specc build --gauges FILE`: once a second, one JSON line of what the build holds at that
//! moment — attempts working and waiting for a job, model calls waiting for a permit and
//! out, the state database's uncommitted writes, submissions at the VCS, and the process's
//! memory, open files and threads — to choose `jobs` and the providers' `concurrency` on a
//! machine, and to find what limits a wide build (design: perf.width).

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use specc_runtime::Services;

/// Samples `s` into `file` every second until dropped (the build's end); a file that
/// cannot be written stops the sampling, not the build.
pub(super) async fn sample(
    file: &Path,
    s: &Services<'_>,
    state: &specc_state::StateDb,
) -> std::convert::Infallible {
    let mut out = match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(file = %file.display(), error = %e, "--gauges: cannot open the file");
            return std::future::pending().await;
        }
    };
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let (working, returning) = s.landings.gauges();
        let (waiting, out_calls) = s.client.call_gauges().read();
        let me = own();
        let line = json!({
            "seconds": started.elapsed().as_secs_f64(),
            "attempts": working,
            "attempts_returning": returning,
            "model_calls": out_calls,
            "model_calls_waiting": waiting,
            "state_backlog": state.backlog(),
            "vcs_submissions": s.repo.submissions_in_flight(),
            "rss_kib": me.rss_kib,
            "open_files": me.fds,
            "threads": me.threads,
        });
        // One write a line: a reader following the file never sees half of one.
        if out.write_all(format!("{line}\n").as_bytes()).is_err() {
            return std::future::pending().await;
        }
    }
}

/// This process's resident memory, open files and threads (0 where `/proc` has none).
struct Own {
    rss_kib: u64,
    fds: usize,
    threads: u64,
}

fn own() -> Own {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    Own {
        rss_kib: field("VmRSS:"),
        fds: std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()),
        threads: field("Threads:"),
    }
}
