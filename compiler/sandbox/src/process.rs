//! Running a command a model proposed (a worker's `run`, acceptance checks): the interim
//! runner. The interim runner gives a command
//! its own process group in the checkout, a scrubbed environment (an allow-list; no key
//! variable ever), a private HOME and tmp, a wall clock after which the whole group is
//! killed (and it is killed again when the command ends, so daemons in the group die with
//! it), and output capped to head and tail with the full log kept on disk. It is *not* the
//! sandbox of the design (namespaces, Landlock, seccomp): `confinement()` says so, and the
//! build refuses live models on it unless the user allows a weaker sandbox. Running as the
//! same user, a command can still reach the network, write outside its checkout and read
//! specc's own environment through `/proc`.
//! design: runtime.runner

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use crate::runner::{BoxFuture, Captured, CommandResult, CommandSpec, Confinement, Exit, Runner};

/// The interim runner (see the module comment).
#[derive(Clone, Debug, Default)]
pub struct ProcessRunner {
    /// Variable names that must never reach a command (the API keys specc.toml names).
    pub secret_vars: Vec<String>,
}

/// Variables a command may inherit.
pub const ALLOWED_VARS: &[&str] = &[
    "PATH",
    "LANG",
    "LC_ALL",
    "TERM",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
];

impl ProcessRunner {
    /// The environment a command gets: the allow-list, the toolchain homes (which default to
    /// the real HOME's, so rustup's proxies still find their toolchain), HOME and TMPDIR in
    /// private directories, and `extra`. Never a variable in `secret_vars`.
    pub fn environment(&self, home: &Path, extra: &[(String, String)]) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = ALLOWED_VARS
            .iter()
            .filter_map(|k| Some(((*k).to_owned(), std::env::var(k).ok()?)))
            .collect();
        if let Ok(real_home) = std::env::var("HOME") {
            for (var, sub) in [("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")] {
                let p = Path::new(&real_home).join(sub);
                if !env.iter().any(|(k, _)| k == var) && p.is_dir() {
                    env.push((var.to_owned(), p.display().to_string()));
                }
            }
        }
        env.push(("HOME".to_owned(), home.display().to_string()));
        env.push(("TMPDIR".to_owned(), home.join("tmp").display().to_string()));
        env.extend(extra.iter().cloned());
        env.retain(|(k, _)| !self.secret_vars.contains(k) && !looks_secret(k));
        env
    }
}

/// Names that hold keys by convention never pass, whatever the allow-list says.
fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD"]
        .iter()
        .any(|w| n.contains(w))
}

impl Runner for ProcessRunner {
    fn confinement(&self) -> Confinement {
        Confinement::Weaker
    }

    fn run(&self, spec: CommandSpec) -> BoxFuture<'_, CommandResult> {
        Box::pin(async move {
            let script = spec.script.clone();
            launch(self, spec, |_home| {
                Ok(Launch {
                    program: "sh".into(),
                    args: vec!["-c".into(), script.into()],
                    env: Vec::new(),
                })
            })
            .await
        })
    }
}

/// Why a runner could not prepare what it starts: the command did not start.
#[derive(Debug)]
pub(crate) enum LaunchError {
    /// The helper's spec could not be written as JSON.
    Spec(serde_json::Error),
    /// A file or directory of the command's private home could not be made.
    Home {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LaunchError::Spec(e) => write!(f, "{e}"),
            LaunchError::Home { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

/// What to start for a command: a program, its arguments, variables beyond the runner's.
pub(crate) struct Launch {
    pub(crate) program: std::ffi::OsString,
    pub(crate) args: Vec<std::ffi::OsString>,
    pub(crate) env: Vec<(String, String)>,
}

/// Starts what `how` says (given the private home) in its own process group, with the
/// runner's environment; enforces the timeout, kills the group, captures the output.
pub(crate) async fn launch(
    runner: &ProcessRunner,
    spec: CommandSpec,
    how: impl FnOnce(&Path) -> Result<Launch, LaunchError>,
) -> CommandResult {
    let not_started = |e: String| CommandResult {
        exit: Exit::NotStarted(e),
        stdout: Captured::default(),
        stderr: Captured::default(),
        log: spec.log.clone(),
    };
    let home = spec
        .home
        .clone()
        .unwrap_or_else(|| spec.log.with_extension("home"));
    if let Err(e) = std::fs::create_dir_all(home.join("tmp")) {
        return not_started(format!("private home {}: {e}", home.display()));
    }
    if let Some(parent) = spec.log.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let launch = match how(&home) {
        Ok(l) => l,
        Err(e) => return not_started(e.to_string()),
    };
    let mut env = runner.environment(&home, &spec.env);
    env.retain(|(k, _)| !launch.env.iter().any(|(l, _)| l == k));
    env.extend(launch.env);
    let mut cmd = tokio::process::Command::new(&launch.program);
    cmd.args(&launch.args)
        .current_dir(&spec.dir)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return not_started(e.to_string()),
    };
    let group = child.id().map(|id| nix::unistd::Pid::from_raw(id as i32));
    let cap = spec.output_cap.max(2);
    let out = child.stdout.take().map(|s| tokio::spawn(capture(s, cap)));
    let err = child.stderr.take().map(|s| tokio::spawn(capture(s, cap)));
    let exit = wait(&mut child, group, spec.timeout).await;
    let (stdout, out_log) = collect(out).await;
    let (stderr, err_log) = collect(err).await;
    write_log(&spec.log, &out_log, &err_log).await;
    CommandResult {
        exit,
        stdout,
        stderr,
        log: spec.log,
    }
}

/// Waits for the command up to `timeout`, then kills its process group: background
/// children and daemons that kept the group die with it.
async fn wait(
    child: &mut tokio::process::Child,
    group: Option<nix::unistd::Pid>,
    timeout: Duration,
) -> Exit {
    let exit = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                (None, None) => Exit::Code(-1),
            }
        }
        Ok(Err(e)) => Exit::NotStarted(e.to_string()),
        Err(_) => Exit::TimedOut,
    };
    if let Some(pgid) = group {
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    }
    let _ = child.wait().await;
    exit
}

/// A stream's capture. A child that left the group may still hold the pipes: wait a
/// moment, not forever.
async fn collect(h: Option<tokio::task::JoinHandle<(Captured, Vec<u8>)>>) -> (Captured, Vec<u8>) {
    let grace = Duration::from_secs(2);
    match h {
        Some(h) => match tokio::time::timeout(grace, h).await {
            Ok(Ok(c)) => c,
            _ => (Captured::default(), Vec::new()),
        },
        None => (Captured::default(), Vec::new()),
    }
}

/// The command's log file: both streams, as kept.
async fn write_log(log: &Path, out: &[u8], err: &[u8]) {
    if let Ok(mut f) = tokio::fs::File::create(log).await {
        let _ = f.write_all(b"--- stdout ---\n").await;
        let _ = f.write_all(out).await;
        let _ = f.write_all(b"\n--- stderr ---\n").await;
        let _ = f.write_all(err).await;
    }
}

/// Most bytes of one stream kept for the log file.
pub const LOG_CAP: usize = 16 << 20;

/// Reads a stream to its end, keeping `cap / 2` bytes from the start and from the end, and
/// up to [`LOG_CAP`] bytes for the log.
async fn capture(mut r: impl AsyncRead + Unpin, cap: usize) -> (Captured, Vec<u8>) {
    let half = cap / 2;
    let mut head = Vec::new();
    let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    let mut log = Vec::new();
    let mut total = 0u64;
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        total += n as u64;
        let mut chunk = &buf[..n];
        if log.len() < LOG_CAP {
            let room = (LOG_CAP - log.len()).min(chunk.len());
            log.extend_from_slice(&chunk[..room]);
        }
        if head.len() < half {
            let room = (half - head.len()).min(chunk.len());
            head.extend_from_slice(&chunk[..room]);
            chunk = &chunk[room..];
        }
        if chunk.len() >= half {
            tail.clear();
            tail.extend(&chunk[chunk.len() - half..]);
        } else {
            tail.extend(chunk);
            let excess = tail.len().saturating_sub(half);
            tail.drain(..excess);
        }
    }
    let tail: Vec<u8> = tail.into_iter().collect();
    (
        Captured {
            head: String::from_utf8_lossy(&head).into_owned(),
            tail: String::from_utf8_lossy(&tail).into_owned(),
            total,
        },
        log,
    )
}
