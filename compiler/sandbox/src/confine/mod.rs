//! The sandbox: every command a model proposes runs through the specc binary re-executed as
//! a helper (`helper`), which confines it before it runs (`layers`): new user, mount,
//! network (loopback only, up) and pid namespaces, a pids cgroup, a private /proc,
//! rlimits, Landlock (writes: the checkout and a private home and tmp; reads: system and
//! toolchain directories and the checkout — not `.specc/`, specc.toml, the home directory
//! or an eval tests directory), `NO_NEW_PRIVS` and seccomp. The parent side is
//! [`SandboxRunner`], a [`Runner`] that starts the helper with the interim runner's
//! process group, timeout, output capture and scrubbed environment, and says how much the
//! host enforced, as a probe found it.
//! design: runtime.sandbox

mod cgroup;
mod error;
pub mod helper;
mod layers;
mod mounts;
mod seccomp;
pub(crate) mod spec;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use self::layers::SYSTEM_READABLE;
pub(crate) use self::spec::Spec;
pub use self::spec::{Probe, Rlimits};
use crate::process::{Launch, LaunchError, ProcessRunner, launch};
use crate::runner::{BoxFuture, CommandResult, CommandSpec, Confinement, Runner};

/// The helper subcommand of the specc binary.
pub const SUBCOMMAND: &str = "__sandbox";

/// Runs commands confined by the helper.
#[derive(Clone, Debug)]
pub struct SandboxRunner {
    /// The specc binary (its `__sandbox` subcommand is the helper).
    pub helper: PathBuf,
    pub limits: Rlimits,
    /// Readable besides the system directories (toolchains, paths a config names).
    pub readable: Vec<PathBuf>,
    /// The environment and process handling of the interim runner.
    pub process: ProcessRunner,
    /// What the host enforces, from [`SandboxRunner::probe`].
    pub probe: Probe,
}

impl SandboxRunner {
    /// A runner over `helper`, probed: `probe.full()` says whether every layer holds.
    pub async fn new(helper: PathBuf, process: ProcessRunner, limits: Rlimits) -> SandboxRunner {
        let readable = toolchain_dirs();
        let mut runner = SandboxRunner {
            helper,
            limits,
            readable,
            process,
            probe: Probe::default(),
        };
        runner.probe = runner.probe().await;
        runner
    }

    /// Runs the helper in probe mode in a scratch directory.
    pub async fn probe(&self) -> Probe {
        let Ok(scratch) = tempdir() else {
            return Probe::default();
        };
        let spec = CommandSpec {
            script: String::new(),
            dir: scratch.clone(),
            read_only: Vec::new(),
            timeout: Duration::from_secs(20),
            output_cap: 1 << 16,
            env: Vec::new(),
            log: scratch.join("probe.log"),
            home: None,
        };
        let result = self.start(spec, true).await;
        let _ = std::fs::remove_dir_all(&scratch);
        serde_json::from_str(result.stdout.text().trim()).unwrap_or_else(|_| Probe {
            notes: vec![format!("the helper did not report: {}", result.report())],
            ..Probe::default()
        })
    }

    async fn start(&self, mut spec: CommandSpec, probe: bool) -> CommandResult {
        // The helper starts in `dir`: every path it gets must be absolute, and the writable
        // root canonical (no link in it decides what is writable).
        spec.dir = std::fs::canonicalize(&spec.dir).unwrap_or_else(|_| absolute(&spec.dir));
        spec.log = absolute(&spec.log);
        spec.home = spec.home.as_deref().map(absolute);
        let readable: Vec<PathBuf> = self
            .readable
            .iter()
            .chain(spec.read_only.iter())
            .map(|p| absolute(p))
            .chain(ancestor_manifests(&spec.dir))
            .collect();
        let path_roots = readable.clone();
        let limits = self.limits.clone();
        let helper = self.helper.clone();
        let require_full = !probe && self.probe.full();
        let script = spec.script.clone();
        let dir = spec.dir.clone();
        launch(&self.process, spec, move |home| {
            let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
            let sandbox = Spec {
                script,
                dir,
                writable: vec![home.clone()],
                readable,
                limits,
                probe,
                require_full,
            };
            let json = serde_json::to_string(&sandbox).map_err(LaunchError::Spec)?;
            // Read by the helper before the command runs; no size limit, not in `ps`.
            let file = home.join("sandbox.json");
            std::fs::write(&file, json).map_err(|error| LaunchError::Home {
                path: file.clone(),
                error,
            })?;
            // Cargo's own home is private: the real one may hold registry tokens.
            let cargo_home = home.join("cargo");
            std::fs::create_dir_all(&cargo_home).map_err(|error| LaunchError::Home {
                path: cargo_home.clone(),
                error,
            })?;
            // Only the `PATH` directories the command may run programs from.
            let path = std::env::join_paths(sandbox_path_dirs(&path_roots))
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok(Launch {
                program: helper.into_os_string(),
                args: vec![SUBCOMMAND.into(), "stage1".into(), file.into_os_string()],
                env: vec![
                    ("CARGO_HOME".to_owned(), cargo_home.display().to_string()),
                    ("PATH".to_owned(), path),
                ],
            })
        })
        .await
    }
}

impl Runner for SandboxRunner {
    fn confinement(&self) -> Confinement {
        if self.probe.full() {
            Confinement::Full
        } else {
            Confinement::Weaker
        }
    }

    fn run(&self, spec: CommandSpec) -> BoxFuture<'_, CommandResult> {
        Box::pin(self.start(spec, false))
    }
}

/// The toolchains a command may read: rustup's home, and the directory of cargo's
/// binaries (not the rest of cargo's home, where registry tokens live).
pub fn toolchain_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let var_or = |var: &str, sub: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(sub)))
    };
    let mut dirs = Vec::new();
    if let Some(r) = var_or("RUSTUP_HOME", ".rustup") {
        dirs.push(r);
    }
    if let Some(c) = var_or("CARGO_HOME", ".cargo") {
        dirs.push(c.join("bin"));
    }
    dirs.retain(|d| Path::new(d).is_dir());
    dirs
}

/// The directories of this process's `PATH` that lie inside one the sandbox lets a command
/// read (the system's, the toolchains', `readable`), in order: the `PATH` a sandboxed
/// command gets. A directory outside them could only fail (`Permission denied`), and worse,
/// mislead: Python's `sys.executable` names the first `python3` on `PATH`, a pyenv shim
/// the sandbox cannot run, although `/usr/bin/python3` runs.
pub(crate) fn sandbox_path_dirs(readable: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = SYSTEM_READABLE.iter().map(PathBuf::from).collect();
    roots.extend(toolchain_dirs());
    roots.extend(readable.iter().cloned());
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| {
            let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            roots.iter().any(|r| inside(&real, r))
        })
        .collect()
}

/// Whether `dir` is `root` or below it (`root` resolved as the sandbox resolves it).
fn inside(dir: &Path, root: &Path) -> bool {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    dir.starts_with(root)
}

/// The `Cargo.toml` files of `dir`'s ancestors: cargo reads them to find its workspace,
/// and fails on one it may not read, so they are readable (manifests, not secrets).
fn ancestor_manifests(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .skip(1)
        .map(|a| a.join("Cargo.toml"))
        .filter(|m| m.is_file())
        .collect()
}

/// `p` made absolute against the current directory (without resolving links).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A scratch directory of our own for a probe: a new name each time, made with
/// `create_dir` (never one another user made first).
fn tempdir() -> std::io::Result<PathBuf> {
    let mut last = None;
    for attempt in 0..16u32 {
        let seed = format!(
            "{}-{}-{attempt}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let name = &blake3::hash(seed.as_bytes()).to_hex()[..16];
        let dir = std::env::temp_dir().join(format!("specc-probe-{name}"));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no scratch directory")))
}
