//! Running a command a model proposed (a worker's `run`, an acceptance check, an eval):
//! the [`Runner`] interface every such command goes through, and what a command is given
//! ([`CommandSpec`]) and gives back ([`CommandResult`]). The runners are the interim
//! [`ProcessRunner`](crate::ProcessRunner) (`process.rs`) and the sandbox's
//! [`SandboxRunner`](crate::SandboxRunner) (`confine/`).
//! design: runtime.runner

use std::path::PathBuf;
use std::time::Duration;

/// A boxed future of a runner (object-safe traits cannot return `impl Future`).
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// What a command gets: its wall clock and the bytes of each stream a model sees.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandLimits {
    pub timeout: Duration,
    pub output_cap: usize,
}

/// One command to run.
#[derive(Clone, Debug)]
pub struct CommandSpec {
    /// Run by `sh -c`.
    pub script: String,
    /// The working directory: the writable root (a task's checkout).
    pub dir: PathBuf,
    /// Paths the command may read besides the system's (the sandbox enforces it).
    pub read_only: Vec<PathBuf>,
    pub timeout: Duration,
    /// Bytes of each stream kept: half from the start, half from the end.
    pub output_cap: usize,
    /// Extra variables (after the allow-list): never a key.
    pub env: Vec<(String, String)>,
    /// Where the full output goes.
    pub log: PathBuf,
    /// The private home (`HOME`, and `TMPDIR` its `tmp`): one that several commands share
    /// (an attempt's `run` calls), or `None` for a new one beside the log.
    pub home: Option<PathBuf>,
}

/// How a command ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum Exit {
    Code(i32),
    Signal(i32),
    TimedOut,
    /// It could not be started.
    NotStarted(String),
}

/// One stream's output: the start and end, and how much there was.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Captured {
    pub head: String,
    pub tail: String,
    pub total: u64,
}

impl Captured {
    /// The output as a model reads it: head, a line saying how much was left out, tail.
    pub fn text(&self) -> String {
        let kept = (self.head.len() + self.tail.len()) as u64;
        if self.total <= kept {
            return format!("{}{}", self.head, self.tail);
        }
        format!(
            "{}\n[… {} bytes left out …]\n{}",
            self.head,
            self.total - kept,
            self.tail
        )
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommandResult {
    pub exit: Exit,
    pub stdout: Captured,
    pub stderr: Captured,
    pub log: PathBuf,
}

impl CommandResult {
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// A short report for a model: how it ended, then stdout and stderr.
    pub fn report(&self) -> String {
        let how = match &self.exit {
            Exit::Code(c) => format!("exit status {c}"),
            Exit::Signal(s) => format!("killed by signal {s}"),
            Exit::TimedOut => "timed out (the whole process group was killed)".to_owned(),
            Exit::NotStarted(e) => format!("could not start: {e}"),
        };
        let mut out = how;
        for (name, c) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            if c.total > 0 {
                out.push_str(&format!("\n--- {name} ---\n{}", c.text().trim_end()));
            }
        }
        out
    }
}

/// What a runner enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Confinement {
    /// The design's sandbox: namespaces, Landlock, seccomp, rlimits.
    Full,
    /// Process group, timeout, output cap, scrubbed environment only.
    Weaker,
}

/// Runs commands for the runtime. Everything a model proposes goes through one of these.
pub trait Runner: Send + Sync {
    fn confinement(&self) -> Confinement;
    fn run(&self, spec: CommandSpec) -> BoxFuture<'_, CommandResult>;
}

/// Raises this process's soft limit on open files towards its hard limit (at most 65,536,
/// which children inherit), and returns the soft limit now: a wide build holds a few
/// descriptors for each attempt in flight (its model connection, its command's pipes, the
/// sandbox helper's), more than the 1,024 many systems start a process with once `jobs`
/// passes a few hundred (design: perf.width). Sandboxed commands get the sandbox's own,
/// lower limit.
pub fn raise_open_files() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    let want = hard.min(65_536);
    if soft < want && setrlimit(Resource::RLIMIT_NOFILE, want, hard).is_ok() {
        return Some(want);
    }
    Some(soft)
}
