//! What the width benchmark watches from outside: a process's resident memory, open files
//! and threads, and its whole tree's memory and processes (the sandboxed commands and their
//! helpers), sampled every 100 ms from `/proc` until it exits.

use std::collections::HashMap;
use std::process::{Child, ExitStatus};
use std::time::Duration;

/// Peaks over the run; memory in KiB.
#[derive(Debug, Default)]
pub(crate) struct Peaks {
    pub(crate) rss: u64,
    pub(crate) tree_rss: u64,
    pub(crate) fds: usize,
    pub(crate) procs: usize,
    pub(crate) threads: u64,
}

/// Samples `child` until it exits; its status and the peaks.
pub(crate) fn watch(child: &mut Child) -> (ExitStatus, Peaks) {
    let pid = child.id();
    let mut p = Peaks::default();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return (status, p);
        }
        let own = status(pid);
        p.rss = p.rss.max(own.get("VmHWM").copied().unwrap_or(0));
        p.threads = p.threads.max(own.get("Threads").copied().unwrap_or(0));
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
        p.fds = p.fds.max(fds);
        let tree = tree(pid);
        p.procs = p.procs.max(tree.len());
        let rss: u64 = tree
            .iter()
            .map(|&q| status(q).get("VmRSS").copied().unwrap_or(0))
            .sum();
        p.tree_rss = p.tree_rss.max(rss);
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The numeric fields of `/proc/PID/status` (memory in KiB).
fn status(pid: u32) -> HashMap<String, u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let n = v.split_whitespace().next()?.parse().ok()?;
            Some((k.to_owned(), n))
        })
        .collect()
}

/// `root` and every process descended from it.
fn tree(root: u32) -> Vec<u32> {
    let mut parent: Vec<(u32, u32)> = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // After the command's closing parenthesis: state, then the parent's pid.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .and_then(|x| x.parse().ok())
            .unwrap_or(0);
        parent.push((pid, ppid));
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parent.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// CPU seconds of this process's waited-for children and their descendants.
pub(crate) fn children_cpu() -> f64 {
    specc_tests::cpu::children_seconds().unwrap_or(0.0)
}
