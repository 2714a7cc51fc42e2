//! The helper: the specc binary re-executed as `specc __sandbox stage1 SPEC`. Stage 1 makes
//! a pids cgroup, enters new user, network and pid namespaces, maps the user and brings
//! loopback up, then starts stage 2 (itself again), which is pid 1 of the new pid
//! namespace. Stage 2 joins the cgroup, enters a mount namespace of its own, mounts a
//! private /proc (and /sys), sets rlimits, restricts itself with
//! Landlock, `NO_NEW_PRIVS` and seccomp, and runs the command; when stage 2 ends, the
//! kernel kills everything left in the namespace — daemons and `setsid` children too.
//! Both stages run before any thread exists (namespaces need a single-threaded process).
//! design: runtime.sandbox

use std::io::Write;
use std::process::{Command, ExitStatus};

use super::layers;
use super::spec::{Probe, Spec, Stage1};

/// The helper's entry: `args` are what follows `__sandbox`. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let (stage, json) = match args {
        [stage, json] => (stage.as_str(), json.as_str()),
        _ => return fail("usage: specc __sandbox stage1|stage2 SPEC"),
    };
    let spec: Spec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => return fail(&format!("the sandbox spec is not valid: {e}")),
    };
    match stage {
        "stage1" => stage1(spec),
        "stage2" => stage2(spec),
        other => fail(&format!("unknown sandbox stage `{other}`")),
    }
}

fn fail(message: &str) -> i32 {
    let _ = writeln!(std::io::stderr(), "specc sandbox: {message}");
    125
}

fn stage1(mut spec: Spec) -> i32 {
    let mut s = Stage1::default();
    let cgroup = match layers::make_pids_cgroup(spec.limits.pids) {
        Ok(dir) => {
            s.pids_cgroup = Some(dir.display().to_string());
            Some(dir)
        }
        Err(e) => {
            s.notes.push(format!("no pids cgroup: {e}"));
            None
        }
    };
    let uid = nix::unistd::getuid().as_raw();
    if cgroup.is_none() && uid != 0 {
        s.nproc_limit = Some(layers::processes_of(uid) + spec.limits.pids);
    }
    layers::enter_namespaces(&mut s);
    if s.network_namespace {
        match layers::loopback_up() {
            Ok(()) => s.loopback_up = true,
            Err(e) => s.notes.push(format!("loopback: {e}")),
        }
    }
    spec.stage1 = Some(s);
    let status = match std::env::current_exe() {
        Ok(me) => run_stage2(&me, &spec),
        Err(e) => Err(format!("the helper cannot find itself: {e}")),
    };
    if let Some(dir) = cgroup {
        layers::remove_cgroup(&dir);
    }
    match status {
        Ok(code) => code,
        Err(e) => fail(&e),
    }
}

fn run_stage2(me: &std::path::Path, spec: &Spec) -> Result<i32, String> {
    let json = serde_json::to_string(spec).map_err(|e| e.to_string())?;
    let status = Command::new(me)
        .args(["__sandbox", "stage2", &json])
        .status()
        .map_err(|e| format!("stage 2: {e}"))?;
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

fn stage2(spec: Spec) -> i32 {
    let s = spec.stage1.clone().unwrap_or_default();
    let mut p = Probe {
        stage1: s.clone(),
        ..Probe::default()
    };
    if let Some(dir) = &s.pids_cgroup
        && let Err(e) = layers::join_cgroup(std::path::Path::new(dir))
    {
        p.stage1.pids_cgroup = None;
        p.notes.push(format!("no pids limit: {e}"));
    }
    match layers::enter_mount_namespace() {
        Ok(()) => p.stage1.mount_namespace = true,
        Err(e) => p.notes.push(e),
    }
    if p.stage1.mount_namespace && s.pid_namespace {
        match layers::private_proc_and_sys(s.network_namespace) {
            Ok(()) => p.proc_mounted = true,
            Err(e) => p.notes.push(e),
        }
    }
    match layers::set_rlimits(&spec.limits, s.nproc_limit) {
        Ok(()) => p.rlimits = true,
        Err(e) => p.notes.push(format!("rlimits: {e}")),
    }
    if let Err(e) = nix::sys::prctl::set_no_new_privs() {
        p.notes.push(format!("no_new_privs: {e}"));
    }
    p.landlock_abi = layers::landlock_abi();
    let mut writable = spec.writable.clone();
    writable.push(spec.dir.clone());
    match layers::landlock(&spec.readable, &writable) {
        Ok(full) => p.landlock_enforced = full && p.landlock_abi > 0,
        Err(e) => p.notes.push(e),
    }
    match layers::seccomp(s.network_namespace) {
        Ok(()) => p.seccomp = true,
        Err(e) => p.notes.push(e),
    }
    p.no_new_privs = layers::no_new_privs();
    if spec.probe {
        let out = serde_json::to_string(&p).unwrap_or_default();
        let _ = writeln!(std::io::stdout(), "{out}");
        return 0;
    }
    let child = Command::new("sh")
        .arg("-c")
        .arg(&spec.script)
        .current_dir(&spec.dir)
        .spawn();
    let child = match child {
        Ok(c) => c,
        Err(e) => return fail(&format!("sh: {e}")),
    };
    reap_until(child.id())
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
