//! `specc sandbox --probe`: what this host enforces of the sandbox, and `specc sandbox
//! [--dir D] -- CMD ARGS…`: a command run exactly as a worker's `run` would be.
//! design: runtime.sandbox

use std::io::Write;
use std::time::Duration;

use specc_ir::{Diagnostic, codes};
use specc_sandbox::{CommandSpec, Exit, Probe, ProcessRunner, Rlimits, Runner, SandboxRunner};

use crate::cli::{MessageFormat, SandboxArgs};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &SandboxArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match prepare(args, env) {
        Ok((rt, runner, dir)) => {
            if args.probe || args.command.is_empty() {
                let _ = write_probe(&runner.probe, out);
                return if runner.probe.full() {
                    exit::OK
                } else {
                    exit::ERRORS
                };
            }
            match command(args, &rt, &runner, dir, out, err) {
                Ok(code) => code,
                Err(d) => setup(env, err, d),
            }
        }
        Err(d) => setup(env, err, d),
    }
}

/// What stopped the command before it ran (E0406).
struct Unset(String);

fn unset(message: impl Into<String>) -> Unset {
    Unset(message.into())
}

/// Reports what stopped the command before it ran.
fn setup(env: &Env, err: &mut dyn Write, Unset(message): Unset) -> i32 {
    let d = Diagnostic::new(codes::BUILD_SETUP, message);
    Reporter::new(MessageFormat::Human, env).report(&Files::default(), &d, err);
    exit::USAGE
}

/// The runtime, the sandbox runner (which probes the host) and the directory to run in.
fn prepare(
    args: &SandboxArgs,
    env: &Env,
) -> Result<(tokio::runtime::Runtime, SandboxRunner, std::path::PathBuf), Unset> {
    let helper = env
        .sandbox_helper
        .clone()
        .ok_or_else(|| unset("no sandbox helper: run the specc binary"))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| unset(format!("no async runtime: {e}")))?;
    let dir = args
        .dir
        .clone()
        .map_or_else(std::env::current_dir, Ok)
        .map_err(|e| unset(format!("the working directory: {e}")))?;
    // As a worker's `run` would: the key variables specc.toml names (beside the directory,
    // if there is one) are kept from the command, as every variable named like a key is.
    let secret_vars = specc_project::secrets::key_vars(&dir);
    let runner = rt.block_on(SandboxRunner::new(
        helper,
        ProcessRunner { secret_vars },
        Rlimits::default(),
    ));
    Ok((rt, runner, dir))
}

/// Runs the command in `dir` as a worker's `run` would; its output goes to ours, and its
/// exit status is ours (128 + a signal, 124 on a timeout).
fn command(
    args: &SandboxArgs,
    rt: &tokio::runtime::Runtime,
    runner: &SandboxRunner,
    dir: std::path::PathBuf,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Unset> {
    let logs = tempfile::tempdir().map_err(|e| unset(format!("a directory for the logs: {e}")))?;
    let script = args
        .command
        .iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let result = rt.block_on(runner.run(CommandSpec {
        script,
        dir,
        read_only: Vec::new(),
        timeout: Duration::from_secs(args.timeout),
        output_cap: 1 << 20,
        env: Vec::new(),
        log: logs.path().join("command.log"),
        home: None,
    }));
    let _ = write!(out, "{}", result.stdout.text());
    let _ = write!(err, "{}", result.stderr.text());
    match result.exit {
        Exit::Code(c) => Ok(c),
        Exit::Signal(s) => Ok(128 + s),
        Exit::TimedOut => {
            let _ = writeln!(err, "specc sandbox: timed out after {} s", args.timeout);
            Ok(124)
        }
        Exit::NotStarted(e) => Err(unset(format!("the command did not start: {e}"))),
    }
}

/// One word for `sh -c`, single-quoted.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

fn write_probe(p: &Probe, out: &mut dyn Write) -> std::io::Result<()> {
    let s = &p.stage1;
    let yes = |b: bool| if b { "yes" } else { "NO" };
    let cgroup = |c: &Option<String>| c.clone().map(|c| format!("yes (cgroup {c})"));
    let rows: Vec<(&str, String)> = vec![
        ("user namespace", yes(s.user_namespace).to_owned()),
        (
            "network namespace (loopback only)",
            yes(s.network_namespace).to_owned(),
        ),
        ("loopback up", yes(s.loopback_up).to_owned()),
        ("pid namespace", yes(s.pid_namespace).to_owned()),
        (
            "IPC, UTS and cgroup namespaces",
            yes(s.ipc_namespace).to_owned(),
        ),
        (
            "mount namespace, private /proc",
            yes(s.mount_namespace && p.proc_mounted).to_owned(),
        ),
        (
            "read-only root (writable: checkout, private home)",
            yes(p.read_only_root).to_owned(),
        ),
        (
            "pids limit",
            cgroup(&s.pids_cgroup)
                .or_else(|| s.nproc_limit.map(|n| format!("yes (RLIMIT_NPROC {n})")))
                .unwrap_or_else(|| "NO".to_owned()),
        ),
        (
            "memory limit",
            cgroup(&s.memory_cgroup).unwrap_or_else(|| "no (not required)".to_owned()),
        ),
        (
            "rlimits (address space, file size, open files)",
            yes(p.rlimits).to_owned(),
        ),
        (
            "Landlock",
            if p.landlock_abi == 0 {
                "NO (not in this kernel)".to_owned()
            } else {
                format!(
                    "ABI {}, {}",
                    p.landlock_abi,
                    if p.landlock_enforced {
                        "enforced"
                    } else {
                        "NOT fully enforced"
                    }
                )
            },
        ),
        ("no_new_privs", yes(p.no_new_privs).to_owned()),
        (
            "capabilities dropped",
            yes(p.capabilities_dropped).to_owned(),
        ),
        ("seccomp", yes(p.seccomp).to_owned()),
        ("full sandbox", yes(p.full()).to_owned()),
    ];
    for (what, v) in rows {
        writeln!(out, "{what:<48} {v}")?;
    }
    for n in s.notes.iter().chain(p.notes.iter()) {
        writeln!(out, "note: {n}")?;
    }
    let missing = p.missing();
    if !missing.is_empty() {
        writeln!(out, "missing: {}", missing.join(", "))?;
    }
    Ok(())
}
