//! A checkout's git view: a git repository beside an attempt's checkout whose `main` is the
//! store's history up to the attempt's base, its index that commit's tree, and a `.git`
//! file in the checkout pointing at it, so that `git status`, `git diff` and `git log`
//! answer in the checkout as in any repository. Made incrementally: the view's `main` ends
//! with the store commit it was last made for (its `Specc-Id` trailer), and only the
//! commits after it are imported. The repository lives outside the checkout, where the
//! sandbox lets commands read it but not write it: specc's own `git` runs on it outside the
//! sandbox, so no command may plant configuration or hooks there.
//! design: vcs.checkout-view

use std::path::Path;
use std::process::Command;

use crate::export::{self, Onto};
use crate::object::ObjectId;

/// The view's configuration, written by specc each time: no hooks, no file-system monitor,
/// no background maintenance.
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\
    \thooksPath = /dev/null\n\tfsmonitor = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n";

/// `git --git-dir=GIT_DIR ARGS`, reading no system or user configuration.
fn git(git_dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("git")
        .arg(format!("--git-dir={}", git_dir.display()))
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
}

fn ok(o: std::io::Result<std::process::Output>, what: &str) -> std::io::Result<Vec<u8>> {
    let o = o?;
    if o.status.success() {
        return Ok(o.stdout);
    }
    Err(std::io::Error::other(format!(
        "git {what}: {}",
        String::from_utf8_lossy(&o.stderr).trim()
    )))
}

/// Makes `git_dir` the view of `base` for the checkout `work_tree`; `make` streams the
/// store's commits after a given one (or all) up to `base` onto `main`. A view that cannot
/// be brought forward (made for a commit `base` does not descend from, or damaged) is made
/// anew once.
pub(crate) fn run(
    git_dir: &Path,
    work_tree: &Path,
    base: ObjectId,
    make: impl Fn(Option<ObjectId>, Onto) -> Option<(Vec<u8>, usize, ObjectId)>,
) -> std::io::Result<()> {
    // Absolute: git runs with other working directories (a spec named by a relative path
    // has its state, and with it the view, under a relative path).
    let git_dir = &std::path::absolute(git_dir)?;
    if bring_forward(git_dir, base, &make).is_err() {
        if git_dir.exists() {
            std::fs::remove_dir_all(git_dir)?;
        }
        bring_forward(git_dir, base, &make)?;
    }
    // The checkout's `.git`: a file naming the view (a command may have left a directory or
    // another file there).
    let dot_git = work_tree.join(".git");
    match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dot_git)?,
        Ok(_) => std::fs::remove_file(&dot_git)?,
        Err(_) => {}
    }
    std::fs::write(&dot_git, format!("gitdir: {}\n", git_dir.display()))
}

/// Imports what `main` lacks up to `base` and sets the index to it.
fn bring_forward(
    git_dir: &Path,
    base: ObjectId,
    make: &impl Fn(Option<ObjectId>, Onto) -> Option<(Vec<u8>, usize, ObjectId)>,
) -> std::io::Result<()> {
    if !git_dir.join("HEAD").exists() {
        std::fs::create_dir_all(git_dir)?;
        ok(git(git_dir, &["init", "-q", "-b", "main"]), "init")?;
    }
    std::fs::write(git_dir.join("config"), CONFIG)?;
    let hooks = git_dir.join("hooks");
    if hooks.exists() {
        std::fs::remove_dir_all(hooks)?;
    }
    let head = git(
        git_dir,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%H %(trailers:key=Specc-Id,valueonly)",
            "refs/heads/main",
        ],
    )?;
    let line = String::from_utf8_lossy(&head.stdout).into_owned();
    let mut words = line.split_whitespace();
    let (sha, since) = match (words.next(), words.next().and_then(ObjectId::from_hex)) {
        (Some(sha), Some(id)) if head.status.success() => (Some(sha.to_owned()), Some(id)),
        _ if head.status.success() => {
            return Err(std::io::Error::other(
                "the view's main was not made by specc",
            ));
        }
        _ => (None, None),
    };
    if since != Some(base) {
        let mut onto = Onto::main();
        onto.until = Some(base);
        if let Some(sha) = &sha {
            onto.from = sha.clone();
        }
        let (stream, count, _) = make(since, onto).ok_or_else(|| {
            std::io::Error::other("the view's commit is not an ancestor of the base")
        })?;
        if count > 0 {
            let dir_arg = format!("--git-dir={}", git_dir.display());
            let parent = git_dir.parent().unwrap_or(Path::new("."));
            export::fast_import_with(parent, &[&dir_arg], &stream, None)?;
        } else if sha.is_some() {
            // `base` is the empty root, which is never exported: no `main`.
            ok(
                git(git_dir, &["update-ref", "-d", "refs/heads/main"]),
                "update-ref",
            )?;
        }
    }
    let has_main = git(git_dir, &["rev-parse", "--verify", "-q", "refs/heads/main"])?
        .status
        .success();
    ok(
        git(git_dir, &["symbolic-ref", "HEAD", "refs/heads/main"]),
        "symbolic-ref",
    )?;
    let tree = if has_main {
        "refs/heads/main"
    } else {
        "--empty"
    };
    ok(git(git_dir, &["read-tree", tree]), "read-tree")?;
    Ok(())
}
