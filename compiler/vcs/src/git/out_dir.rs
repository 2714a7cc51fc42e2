//! `out/`: the built code as a real git repository. Before a build writes there, it must
//! hold what specc's last export left plus, at most, commits people made on `main` since
//! (imported first: `import.rs`), with no modified or untracked files; otherwise the build
//! refuses and overwrites nothing. After the export (incremental `git fast-import` of the
//! VCS head), the working tree is checked out.
//! design: driver.build, vcs.import

use std::path::{Path, PathBuf};

use crate::object::ObjectId;

/// A commit of a person's on `main`, after the last one specc exported or imported.
#[derive(Clone, Debug)]
pub struct PersonCommit {
    pub sha: String,
    pub parents: Vec<String>,
}

/// Why `out/` may not be written, or the export into it failed (E0403).
#[derive(Debug)]
pub enum OutDirError {
    /// A file or directory of `out/` could not be read or written.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `out/` holds files and no repository.
    NotExported(PathBuf),
    /// git could not be run at all.
    Git(std::io::Error),
    /// git failed to do `what` in `out/`.
    GitFailed { what: &'static str, out: PathBuf },
    /// `out/` has changes made outside specc: the first lines of `git status`.
    Changed { out: PathBuf, files: Vec<String> },
    /// `main` has no commit specc made: not a repository specc exported.
    ForeignCommits(PathBuf),
    /// A person committed to `main` while this build ran: imported by the next build.
    CommittedDuring(PathBuf),
    /// The VCS's export failed.
    Export(std::io::Error),
}

impl std::fmt::Display for OutDirError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutDirError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            OutDirError::NotExported(out) => write!(
                f,
                "{} exists and is not a repository specc exported",
                out.display()
            ),
            OutDirError::Git(e) => write!(f, "git: {e}"),
            OutDirError::GitFailed { what, out } => write!(f, "git {what} {}", out.display()),
            OutDirError::Changed { out, files } => write!(
                f,
                "{} has changes made outside specc:\n{}",
                out.display(),
                files.join("\n")
            ),
            OutDirError::ForeignCommits(out) => write!(
                f,
                "`main` in {} has no commit that specc made",
                out.display()
            ),
            OutDirError::CommittedDuring(out) => write!(
                f,
                "commits were made on `main` in {} while this build ran; build again to import them",
                out.display()
            ),
            OutDirError::Export(e) => write!(f, "{e}"),
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> OutDirError + '_ {
    move |error| OutDirError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Marks an export in progress (fast-import, then checkout): a build killed during one left
/// `out/` half written by specc itself, which the next build finishes rather than refuses.
const EXPORT_MARK: &str = ".git/specc-export";

/// What `out/` holds besides specc's last export: the commits people made on `main` since,
/// oldest first, to import (design: vcs.import), on top of the store commit `base`.
#[derive(Debug, Default)]
pub struct Pending {
    pub base: Option<ObjectId>,
    /// The git commit `base` is in `out/`.
    pub base_sha: String,
    pub commits: Vec<PersonCommit>,
}

/// Whether `out/` may be written: the people's commits to import first, or why not.
pub fn check_clean(out: &Path) -> Result<Pending, OutDirError> {
    if !out.exists() {
        return Ok(Pending::default());
    }
    // An export a killed build left: marked, or the first one, never checked out (no
    // index yet: a person's repository has one once anything was checked out or added).
    let never_checked_out = out.join(".git/HEAD").exists() && !out.join(".git/index").exists();
    if out.join(EXPORT_MARK).exists() || never_checked_out {
        finish_interrupted(out)?;
    }
    if !out.join(".git").exists() {
        let empty = std::fs::read_dir(out).map_err(io(out))?.next().is_none();
        return if empty {
            Ok(Pending::default())
        } else {
            Err(OutDirError::NotExported(out.to_path_buf()))
        };
    }
    // A git that fails to answer is a refusal, never "clean".
    let status =
        git(out, &["status", "--porcelain", "--untracked-files=all"])?.ok_or_else(|| {
            OutDirError::GitFailed {
                what: "cannot read the status of",
                out: out.to_path_buf(),
            }
        })?;
    if !status.trim().is_empty() {
        return Err(OutDirError::Changed {
            out: out.to_path_buf(),
            files: status.lines().take(5).map(str::to_owned).collect(),
        });
    }
    let has_main = git(out, &["rev-parse", "--verify", "-q", "refs/heads/main"])?.is_some();
    if !has_main {
        return Ok(Pending::default()); // initialised, nothing committed yet: the export makes `main`
    }
    person_commits(out)
}

/// The commits on `main` after the last one specc exported or imported, oldest first.
fn person_commits(out: &Path) -> Result<Pending, OutDirError> {
    let log = git(
        out,
        &[
            "log",
            "--no-show-signature",
            "--first-parent",
            "-z",
            "--format=%H %P%x01%cn%x01%(trailers:key=Specc-Id,valueonly)",
            "refs/heads/main",
        ],
    )?
    .ok_or_else(|| OutDirError::GitFailed {
        what: "cannot read `main` in",
        out: out.to_path_buf(),
    })?;
    let imported = crate::imported(out);
    let mut commits = Vec::new();
    for entry in log.split('\0').filter(|e| !e.trim().is_empty()) {
        let mut parts = entry.splitn(3, '\x01');
        let (shas, committer, trailer) = (
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
            parts.next().unwrap_or_default(),
        );
        // An amended or cherry-picked commit of specc's keeps the trailer, not the committer.
        let trailer = if committer == "specc" { trailer } else { "" };
        let mut shas = shas.split_whitespace().map(str::to_owned);
        let Some(sha) = shas.next() else { continue };
        let base = ObjectId::from_hex(trailer.trim()).or_else(|| imported.get(&sha).copied());
        if let Some(base) = base {
            commits.reverse();
            return Ok(Pending {
                base: Some(base),
                base_sha: sha,
                commits,
            });
        }
        commits.push(PersonCommit {
            sha,
            parents: shas.collect(),
        });
    }
    Err(OutDirError::ForeignCommits(out.to_path_buf()))
}

/// Exports with `export` (the VCS's fast-import), then checks `main` out, between the
/// marks of an export in progress.
///
/// `Ok(false)` when there is nothing to check out: the VCS holds no commit and `out/` never
/// had a `main` (nothing landed, W0412).
pub fn export(
    out: &Path,
    export: impl FnOnce() -> std::io::Result<usize>,
) -> Result<bool, OutDirError> {
    export().map_err(OutDirError::Export)?;
    let mark = out.join(EXPORT_MARK);
    let landed = git(out, &["rev-parse", "--verify", "-q", "refs/heads/main"])?.is_some();
    if landed {
        std::fs::write(&mark, b"").map_err(io(&mark))?;
        check_out(out)?;
    }
    std::fs::remove_file(&mark).map_err(io(&mark))?;
    Ok(landed)
}

/// Marks the export as begun, for the case the process dies between fast-import and
/// checkout (the mark must exist before fast-import touches `main`).
pub fn begin_export(out: &Path) -> Result<(), OutDirError> {
    if !out.join(".git").is_dir() {
        std::fs::create_dir_all(out).map_err(io(out))?;
        crate::init_git(out).map_err(io(out))?;
    }
    let mark = out.join(EXPORT_MARK);
    std::fs::write(&mark, b"").map_err(io(&mark))
}

/// Finishes an export a killed build left: the `git fast-import` it started outlives it,
/// so it is stopped (this build holds `.specc/lock`: no other build is exporting), its lock
/// files are waited for, and `main` is checked out over what it left.
fn finish_interrupted(out: &Path) -> Result<(), OutDirError> {
    stop_orphaned_fast_import(out);
    let locks = || -> bool {
        ["index.lock", "refs/heads/main.lock", "HEAD.lock"]
            .iter()
            .any(|l| out.join(".git").join(l).exists())
    };
    for _ in 0..200 {
        if !locks() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // What is left locked was locked by a git that is gone (killed with its build, or by
    // us above): the locks are stale.
    for lock in ["index.lock", "refs/heads/main.lock", "HEAD.lock"] {
        let _ = std::fs::remove_file(out.join(".git").join(lock));
    }
    if git(out, &["rev-parse", "--verify", "-q", "refs/heads/main"])?.is_some() {
        check_out(out)?;
    }
    let mark = out.join(EXPORT_MARK);
    match std::fs::remove_file(&mark) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&mark)(e)),
        _ => Ok(()),
    }
}

/// Kills the `git fast-import` a killed build left running, if it still runs, and waits for
/// it to be gone.
fn stop_orphaned_fast_import(out: &Path) {
    let pid_file = out.join(crate::FAST_IMPORT_PID);
    let Some(pid) = std::fs::read_to_string(&pid_file)
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
    else {
        return;
    };
    let proc = Path::new("/proc").join(pid.to_string());
    let is_git = std::fs::read_to_string(proc.join("comm")).is_ok_and(|c| c.starts_with("git"));
    if is_git {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        for _ in 0..500 {
            // Gone, or a zombie nobody will reap (its parent died): either way it is over.
            let state = std::fs::read_to_string(proc.join("stat")).unwrap_or_default();
            if state.is_empty() || state.contains(") Z ") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    let _ = std::fs::remove_file(&pid_file);
}

/// Checks out `main` into the working tree after an export.
fn check_out(out: &Path) -> Result<(), OutDirError> {
    git(out, &["checkout", "-q", "-f", "main"])?
        .map(drop)
        .ok_or_else(|| OutDirError::GitFailed {
            what: "could not check out main in",
            out: out.to_path_buf(),
        })
}

/// Runs git in `dir`: its stdout when it succeeds, `None` when it fails.
fn git(dir: &Path, args: &[&str]) -> Result<Option<String>, OutDirError> {
    let o = super::command::output(dir, args).map_err(OutDirError::Git)?;
    Ok(o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned()))
}
