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
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let setup = |reporter: &mut Reporter, err: &mut dyn Write, message: String| {
        let d = Diagnostic::new(codes::BUILD_SETUP, message);
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let Some(helper) = env.sandbox_helper.clone() else {
        return setup(
            &mut reporter,
            err,
            "no sandbox helper: run the specc binary".to_owned(),
        );
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return setup(&mut reporter, err, format!("no async runtime: {e}")),
    };
    // As a worker's `run` would: the key variables specc.toml names (beside the directory,
    // if there is one) are kept from the command, as every variable named like a key is.
    let dir = match args.dir.clone().map_or_else(std::env::current_dir, Ok) {
        Ok(d) => d,
        Err(e) => return setup(&mut reporter, err, format!("the working directory: {e}")),
    };
    let secret_vars = std::fs::read_to_string(dir.join("specc.toml"))
        .ok()
        .and_then(|t| specc_llm::LlmConfig::parse(&t).ok())
        .map(|c| {
            c.providers
                .values()
                .filter_map(|p| p.api_key_env.clone())
                .collect()
        })
        .unwrap_or_default();
    let runner = rt.block_on(SandboxRunner::new(
        helper,
        ProcessRunner { secret_vars },
        Rlimits::default(),
    ));
    if args.probe || args.command.is_empty() {
        let _ = write_probe(&runner.probe, out);
        return if runner.probe.full() {
            exit::OK
        } else {
            exit::ERRORS
        };
    }
    let logs = match tempfile::tempdir() {
        Ok(t) => t,
        Err(e) => return setup(&mut reporter, err, format!("a directory for the logs: {e}")),
    };
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
        Exit::Code(c) => c,
        Exit::Signal(s) => 128 + s,
        Exit::TimedOut => {
            let _ = writeln!(err, "specc sandbox: timed out after {} s", args.timeout);
            124
        }
        Exit::NotStarted(e) => setup(
            &mut reporter,
            err,
            format!("the command did not start: {e}"),
        ),
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
