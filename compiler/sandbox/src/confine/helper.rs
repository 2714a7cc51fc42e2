//! The helper: the specc binary re-executed as `specc __sandbox stage1 SPEC-FILE`. Stage 1
//! makes the pids and memory cgroups, enters new user, network, pid, IPC, UTS and cgroup
//! namespaces, maps the user and brings loopback up, then starts stage 2 (itself again,
//! `stage2 SPEC-FILE STAGE1-REPORT`), pid 1 of the new pid namespace. Stage 2 joins the
//! cgroups, enters a mount namespace of its own (a private /proc and /sys, an empty /run,
//! a read-only root with only the writable directories bound read-write), sets rlimits,
//! `NO_NEW_PRIVS` and Landlock, drops every capability, installs seccomp, leaves the
//! caller's session, and runs the command. Either stage dies with its parent
//! (`PDEATHSIG`), and when stage 2 ends the kernel kills everything left in the pid
//! namespace — daemons and `setsid` children too. With `require_full`, stage 2 runs nothing
//! unless every layer held. Both stages run before any thread exists (namespaces need a
//! single-threaded process).
//! design: runtime.sandbox

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use nix::sys::signal::Signal;

use super::spec::{Probe, Spec, Stage1};
use super::{cgroup, layers, mounts, seccomp};

/// The helper's entry: `args` are what follows `__sandbox`. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    // Die with the parent: specc, or stage 1.
    if let Err(e) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        return fail(&format!("PDEATHSIG: {e}"));
    }
    let result = match args {
        [stage, path] if stage == "stage1" => read(path).map(|spec| stage1(&spec, path)),
        [stage, path, report] if stage == "stage2" => read(path).and_then(|spec| {
            let s: Stage1 = serde_json::from_str(report).map_err(HelperError::Report)?;
            Ok(stage2(&spec, s))
        }),
        _ => Err(HelperError::Usage),
    };
    result.unwrap_or_else(|e| fail(&e.to_string()))
}

/// Why the helper could not get to confining the command.
#[derive(Debug)]
enum HelperError {
    Usage,
    /// The spec file could not be read.
    Read {
        path: String,
        error: std::io::Error,
    },
    /// The spec file is not the JSON the parent writes.
    Spec(serde_json::Error),
    /// Stage 1's report, as stage 2 is given it, is not its JSON (or could not be written).
    Report(serde_json::Error),
    /// The helper's own binary could not be found, to start stage 2.
    NoSelf(std::io::Error),
    /// Stage 2 could not be started.
    Stage2(std::io::Error),
}

impl std::fmt::Display for HelperError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HelperError::Usage => {
                write!(f, "usage: specc __sandbox stage1 SPEC | stage2 SPEC REPORT")
            }
            HelperError::Read { path, error } => write!(f, "{path}: {error}"),
            HelperError::Spec(e) => write!(f, "the sandbox spec is not valid: {e}"),
            HelperError::Report(e) => write!(f, "{e}"),
            HelperError::NoSelf(e) => write!(f, "the helper cannot find itself: {e}"),
            HelperError::Stage2(e) => write!(f, "stage 2: {e}"),
        }
    }
}

/// The sandbox spec at `path`.
fn read(path: &str) -> Result<Spec, HelperError> {
    let text = std::fs::read_to_string(path).map_err(|error| HelperError::Read {
        path: path.to_owned(),
        error,
    })?;
    serde_json::from_str(&text).map_err(HelperError::Spec)
}

fn fail(message: &str) -> i32 {
    let _ = writeln!(std::io::stderr(), "specc sandbox: {message}");
    125
}

fn stage1(spec: &Spec, path: &str) -> i32 {
    let mut s = Stage1::default();
    let mut made: Vec<PathBuf> = Vec::new();
    match cgroup::make("pids", &[("pids.max", spec.limits.pids.to_string())]) {
        Ok(c) => {
            s.pids_cgroup = Some(c.dir.display().to_string());
            made.push(c.dir);
        }
        Err(e) => s.notes.push(format!("no pids cgroup: {e}")),
    }
    let memory = [("memory.limit_in_bytes", spec.limits.memory.to_string())];
    let memory_v2 = [("memory.max", spec.limits.memory.to_string())];
    match cgroup::make("memory", &memory).or_else(|_| cgroup::make("memory", &memory_v2)) {
        Ok(c) => {
            s.memory_cgroup = Some(c.dir.display().to_string());
            made.push(c.dir);
        }
        Err(e) => s.notes.push(format!("no memory cgroup: {e}")),
    }
    let uid = nix::unistd::getuid().as_raw();
    layers::enter_namespaces(&mut s);
    if s.pids_cgroup.is_none() && uid != 0 {
        // The kernel counts RLIMIT_NPROC per user namespace: in a fresh one, only the
        // sandbox's own processes count; without one, every process of the user does.
        let base = if s.user_namespace {
            0
        } else {
            layers::processes_of(uid)
        };
        s.nproc_limit = Some(base + spec.limits.pids);
    }
    if s.network_namespace {
        match layers::loopback_up() {
            Ok(()) => s.loopback_up = true,
            Err(e) => s.notes.push(format!("loopback: {e}")),
        }
    }
    let status = std::env::current_exe()
        .map_err(HelperError::NoSelf)
        .and_then(|me| run_stage2(&me, path, &s));
    for dir in &made {
        cgroup::remove(dir);
    }
    status.unwrap_or_else(|e| fail(&e.to_string()))
}

fn run_stage2(me: &Path, path: &str, s: &Stage1) -> Result<i32, HelperError> {
    let report = serde_json::to_string(s).map_err(HelperError::Report)?;
    let status = Command::new(me)
        .args(["__sandbox", "stage2", path, &report])
        .status()
        .map_err(HelperError::Stage2)?;
    Ok(code(status))
}

/// An exit status as a shell reports it: the code, or 128 + the signal.
fn code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(125)
}

fn stage2(spec: &Spec, s: Stage1) -> i32 {
    let p = confine(spec, s);
    if spec.probe {
        let out = serde_json::to_string(&p).unwrap_or_default();
        let _ = writeln!(std::io::stdout(), "{out}");
        return 0;
    }
    if spec.require_full && !p.full() {
        return fail(&format!(
            "not running the command: {} did not hold ({})",
            p.missing().join(", "),
            p.stage1
                .notes
                .iter()
                .chain(&p.notes)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    // Away from the caller's session and terminal.
    let _ = nix::unistd::setsid();
    let child = Command::new("sh")
        .arg("-c")
        .arg(&spec.script)
        .current_dir(&spec.dir)
        .spawn();
    match child {
        Ok(c) => reap_until(c.id()),
        Err(e) => fail(&format!("sh: {e}")),
    }
}

/// Applies every layer to this process, in order, and says which held.
fn confine(spec: &Spec, s: Stage1) -> Probe {
    let mut p = Probe {
        stage1: s,
        ..Probe::default()
    };
    for dir in [&p.stage1.pids_cgroup, &p.stage1.memory_cgroup]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>()
    {
        if let Err(e) = cgroup::join(Path::new(&dir)) {
            p.notes.push(format!("cgroup: {e}"));
            if p.stage1.pids_cgroup.as_deref() == Some(dir.as_str()) {
                p.stage1.pids_cgroup = None;
            }
        }
    }
    let mut writable = spec.writable.clone();
    writable.push(spec.dir.clone());
    match mounts::enter_namespace() {
        Ok(()) => p.stage1.mount_namespace = true,
        Err(e) => p.notes.push(e.to_string()),
    }
    if p.stage1.mount_namespace {
        if p.stage1.pid_namespace {
            match mounts::private_proc_and_sys(p.stage1.network_namespace) {
                Ok(()) => p.proc_mounted = true,
                Err(e) => p.notes.push(e.to_string()),
            }
        }
        if let Err(e) = mounts::empty_run(&writable) {
            p.notes.push(e.to_string());
        }
        match mounts::read_only_root(&writable) {
            Ok(()) => p.read_only_root = true,
            Err(e) => p.notes.push(e.to_string()),
        }
    }
    let (all, failed) = layers::set_rlimits(&spec.limits, p.stage1.nproc_limit);
    p.rlimits = all;
    if !all {
        if failed.iter().any(|f| f.contains("NPROC")) {
            p.stage1.nproc_limit = None;
        }
        p.notes.extend(failed);
    }
    if let Err(e) = nix::sys::prctl::set_no_new_privs() {
        p.notes.push(format!("no_new_privs: {e}"));
    }
    p.landlock_abi = layers::landlock_abi();
    match layers::landlock(&spec.readable, &writable) {
        Ok(full) => p.landlock_enforced = full && p.landlock_abi > 0,
        Err(e) => p.notes.push(e.to_string()),
    }
    match layers::drop_capabilities() {
        Ok(()) => p.capabilities_dropped = true,
        Err(e) => p.notes.push(e.to_string()),
    }
    match seccomp::install(p.stage1.network_namespace) {
        Ok(()) => p.seccomp = true,
        Err(e) => p.notes.push(e.to_string()),
    }
    p.no_new_privs = layers::no_new_privs();
    p
}

/// As pid 1, reaps every child that exits (orphans are re-parented to it) until the
/// command itself ends; returns its status.
fn reap_until(pid: u32) -> i32 {
    use nix::sys::wait::{WaitStatus, waitpid};
    let target = nix::unistd::Pid::from_raw(pid as i32);
    loop {
        match waitpid(None, None) {
            Ok(WaitStatus::Exited(p, c)) if p == target => return c,
            Ok(WaitStatus::Signaled(p, sig, _)) if p == target => return 128 + sig as i32,
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return fail(&format!("waiting for the command: {e}")),
        }
    }
}
