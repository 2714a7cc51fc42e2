//! Export to a real git repository through `git fast-import`: every commit after the last
//! one exported, with its message and task id, as one stream; executables get mode 100755. Times are derived from the
//! sequence number, so the export is deterministic. Incremental: each exported commit carries
//! a `Specc-Id` trailer, and the next export starts after the one `main` ends with.
//! design: vcs.git-export

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::object::ObjectId;
use crate::read;
use crate::state::State;

const EPOCH: u64 = 1_700_000_000;

/// Where an export goes: `refs/heads/main` on top of itself, or another branch made anew
/// from a given git commit (the store's work that `main` does not have, beside it).
#[derive(Clone, Debug)]
pub(crate) struct Onto {
    branch: String,
    /// What the first commit's parent is, in git's words.
    pub(crate) from: String,
    /// Whether the branch is (re)set to `from` first.
    reset: bool,
    /// The last commit exported: the head's when `None`.
    pub(crate) until: Option<ObjectId>,
}

impl Onto {
    pub(crate) fn main() -> Onto {
        Onto {
            branch: "main".to_owned(),
            from: "refs/heads/main^0".to_owned(),
            reset: false,
            until: None,
        }
    }
}

/// The fast-import stream of the commits after `since` (or all, after the root), and how
/// many commits it holds.
pub(crate) fn stream(
    state: &State,
    since: Option<ObjectId>,
    onto: &Onto,
) -> Option<(Vec<u8>, usize)> {
    let mut chain = Vec::new();
    let mut at = Some(onto.until.unwrap_or(state.head));
    while let Some(id) = at {
        if Some(id) == since {
            break;
        }
        let c = read::commit(state, id)?;
        if c.parent.is_none() {
            if since.is_some() {
                return None; // the last export is not on this branch
            }
            break; // the empty root is not exported
        }
        at = c.parent;
        chain.push((id, c));
    }
    chain.reverse();
    let mut out = Vec::new();
    if onto.reset {
        let _ = write!(
            out,
            "reset refs/heads/{}\nfrom {}\n\n",
            onto.branch, onto.from
        );
    }
    for (i, (id, c)) in chain.iter().enumerate() {
        let parent_tree = match c.parent {
            Some(p) => Some(read::commit(state, p)?.tree),
            None => None,
        };
        let message = format!(
            "{}\n\nSpecc-Task: {}\nSpecc-Seq: {}\nSpecc-Id: {}\n",
            c.message,
            c.task,
            c.seq,
            id.hex()
        );
        let _ = write!(
            out,
            "commit refs/heads/{}\nmark :{}\ncommitter specc <specc@localhost> {} +0000\ndata {}\n{}",
            onto.branch,
            i + 1,
            EPOCH + c.seq,
            message.len(),
            message
        );
        if i == 0 && since.is_some() {
            let _ = writeln!(out, "from {}", onto.from);
        } else if i > 0 {
            let _ = writeln!(out, "from :{i}");
        }
        for (path, file) in read::diff(state, parent_tree, c.tree)? {
            match file {
                Some((id, executable)) => {
                    let bytes = state.object(id)?;
                    let mode = if executable { "100755" } else { "100644" };
                    let _ = write!(
                        out,
                        "M {mode} inline {}\ndata {}\n",
                        quote(&path),
                        bytes.len()
                    );
                    out.extend_from_slice(&bytes);
                    out.push(b'\n');
                }
                None => {
                    let _ = writeln!(out, "D {}", quote(&path));
                }
            }
        }
        out.push(b'\n');
    }
    Some((out, chain.len()))
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    clean_env(Command::new("git").args(args).current_dir(dir)).output()
}

/// A git command that reads no system or user configuration and no repository or object
/// directory from the environment: specc's git does what its arguments say, whoever runs it.
pub(crate) fn clean_env(c: &mut Command) -> &mut Command {
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("GIT_OBJECT_DIRECTORY")
}

/// Runs the export into the repository at `dir` (created if needed). Returns how many
/// commits were added.
pub(crate) fn run(
    dir: &Path,
    make: impl FnOnce(Option<ObjectId>, Onto) -> Option<(Vec<u8>, usize, ObjectId)>,
) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    if !dir.join(".git").exists() {
        init(dir)?;
    }
    // Where the last export ended is read back from git itself (the `Specc-Id` trailer of
    // `main`), so an export interrupted after fast-import is never repeated.
    let has_main = git(dir, &["rev-parse", "--verify", "-q", "refs/heads/main"])?
        .status
        .success();
    // The commit `main` was read at: the export goes on top of exactly that one, so a commit
    // made on `main` meanwhile makes fast-import refuse rather than be built over.
    let mut onto = Onto::main();
    let since = if has_main {
        let o = git(
            dir,
            &[
                "log",
                "-1",
                "--no-show-signature",
                "--format=%H %cn %(trailers:key=Specc-Id,valueonly)",
                "refs/heads/main",
            ],
        )?;
        let line = String::from_utf8_lossy(&o.stdout).into_owned();
        let mut words = line.split_whitespace();
        let (sha, committer, trailer) = (
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
        );
        // A commit that kept specc's trailer but not its committer (amended, cherry-picked)
        // is a person's.
        let trailer = if committer == "specc" { trailer } else { "" };
        // `main` ends with specc's commit, or with a person's commit that was imported
        // into the store (design: vcs.import).
        let id = ObjectId::from_hex(trailer.trim()).or_else(|| imported(dir).get(sha).copied());
        onto.from = sha.to_owned();
        if id.is_none() {
            return Err(std::io::Error::other(
                "main in the target repository was not made by specc's export",
            ));
        }
        id
    } else {
        None
    };
    let Some((stream, count, _head)) = make(since, onto) else {
        return Err(std::io::Error::other(
            "the store could not be read, or the last export is not on its branch",
        ));
    };
    if count == 0 {
        return Ok(0);
    }
    fast_import(dir, &stream)?;
    Ok(count)
}

/// Writes the store's commits after `since` onto `branch` of the repository at `dir`, made
/// anew from git commit `from` (which holds `since`): the work of the store that `main`
/// does not have, where a person can see it and rebase onto it. Returns how many commits.
pub(crate) fn run_branch(
    dir: &Path,
    branch: &str,
    from: &str,
    since: ObjectId,
    make: impl FnOnce(Option<ObjectId>, Onto) -> Option<(Vec<u8>, usize, ObjectId)>,
) -> std::io::Result<usize> {
    let onto = Onto {
        branch: branch.to_owned(),
        from: from.to_owned(),
        reset: true,
        until: None,
    };
    let Some((stream, count, _)) = make(Some(since), onto) else {
        return Err(std::io::Error::other(
            "the store could not be read, or the commit is not on its branch",
        ));
    };
    fast_import(dir, &stream)?;
    Ok(count)
}

/// Pipes `stream` into `git fast-import` in `dir`.
fn fast_import(dir: &Path, stream: &[u8]) -> std::io::Result<()> {
    fast_import_with(dir, &[], stream, Some(&dir.join(FAST_IMPORT_PID)))
}

/// Pipes `stream` into `git ARGS fast-import` in `dir` (`--git-dir=…` for a repository
/// elsewhere), its pid in `pid_file` while it runs.
pub(crate) fn fast_import_with(
    dir: &Path,
    args: &[&str],
    stream: &[u8],
    pid_file: Option<&Path>,
) -> std::io::Result<()> {
    let mut child = clean_env(&mut Command::new("git"))
        .args(args)
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    // While it runs, its pid is in `.git/`: a fast-import whose caller was killed outlives
    // it, and whoever exports next must stop it first (see `FAST_IMPORT_PID`).
    if let Some(pid_file) = pid_file {
        std::fs::write(pid_file, child.id().to_string())?;
    }
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(stream)?;
    }
    let o = child.wait_with_output()?;
    if let Some(pid_file) = pid_file {
        std::fs::remove_file(pid_file)?;
    }
    if !o.status.success() {
        return Err(std::io::Error::other(format!(
            "git fast-import failed: {}",
            String::from_utf8_lossy(&o.stderr)
        )));
    }
    Ok(())
}

/// Where the commits of people that were imported into the store are recorded, relative to
/// the repository: one `GIT-SHA STORE-ID` line each (design: vcs.import).
pub(crate) const IMPORTED: &str = ".git/specc-imported";

/// The git commits imported into the store, each with the store commit it became.
pub(crate) fn imported(dir: &Path) -> std::collections::HashMap<String, ObjectId> {
    let text = std::fs::read_to_string(dir.join(IMPORTED)).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (sha, id) = l.split_once(' ')?;
            Some((sha.to_owned(), ObjectId::from_hex(id.trim())?))
        })
        .collect()
}

/// Records that git commit `sha` was imported as store commit `id`. Appended and synced
/// before the import is reported done: a build killed before this line imports the commit
/// again, which the store answers from its idempotency key.
pub(crate) fn record_import(dir: &Path, sha: &str, id: ObjectId) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(IMPORTED))?;
    writeln!(f, "{sha} {}", id.hex())?;
    f.sync_all()
}

/// Where the pid of a running `git fast-import` is kept, relative to the repository.
pub(crate) const FAST_IMPORT_PID: &str = ".git/specc-fast-import.pid";

/// Makes `dir/.git` all at once: `git init` in a scratch directory beside it, then one
/// rename, so a process killed meanwhile never leaves a half-made repository behind.
pub(crate) fn init(dir: &Path) -> std::io::Result<()> {
    // Beside `dir`, not in it: a scratch directory left in `dir` would look like a file
    // nobody exported.
    let name = dir
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let scratch = dir.with_file_name(format!(".{name}.specc-git-init"));
    if scratch.exists() {
        std::fs::remove_dir_all(&scratch)?;
    }
    std::fs::create_dir_all(&scratch)?;
    let o = git(&scratch, &["init", "-q", "-b", "main"])?;
    if !o.status.success() {
        return Err(std::io::Error::other(
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ));
    }
    std::fs::rename(scratch.join(".git"), dir.join(".git"))?;
    std::fs::remove_dir_all(&scratch)
}

/// A path as fast-import reads it: quoted (paths are checked on commit to hold no quotes,
/// backslashes or control characters, so no escapes are needed; quoting keeps spaces safe).
fn quote(path: &str) -> String {
    format!("\"{path}\"")
}
