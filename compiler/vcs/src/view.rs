//! A checkout's git view: a git repository beside an attempt's checkout whose `main` is the
//! store's history up to the attempt's base, its index that commit's tree, and a `.git`
//! file in the checkout pointing at it, so that `git status`, `git diff` and `git log`
//! answer in the checkout as in any repository.
//!
//! The views share their objects: one repository beside them (`views.git`) holds the
//! store's history as far as any view has needed it, imported once, incrementally (its
//! `main` ends with the newest store commit imported, named by its `Specc-Id` trailer); a
//! slot's view is a small repository that borrows those objects (`objects/info/alternates`)
//! and has its own `main`, set to the base's git commit, and its own index. Moving a view to
//! another base costs one `git read-tree`, whatever the number of views (design:
//! vcs.checkout-view, perf.width). Both live outside the checkouts, where the sandbox lets
//! commands read them but not write them: specc's own `git` runs on them outside the
//! sandbox, so no command may plant configuration or hooks there.
//! design: vcs.checkout-view

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::export::{self, Onto};
use crate::object::ObjectId;

/// The shared repository's name, beside the views.
pub(crate) const SHARED: &str = "views.git";

/// The view's configuration, written by specc each time: no hooks, no file-system monitor,
/// no background maintenance.
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\
    \thooksPath = /dev/null\n\tfsmonitor = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n";

/// What this process knows of each shared repository (by its path): which git commit each
/// store commit became, and its `main`'s tip.
#[derive(Default)]
pub(crate) struct Shared(HashMap<PathBuf, Known>);

#[derive(Default)]
struct Known {
    /// `main`'s tip: its git commit and store commit.
    tip: Option<(String, ObjectId)>,
    shas: HashMap<ObjectId, String>,
}

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
        .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
        .env_remove("GIT_OBJECT_DIRECTORY")
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

/// The stream of the store's commits after a given one (or all) up to the `Onto`'s end,
/// how many it holds, and the last one.
pub(crate) type Make<'a> =
    dyn Fn(Option<ObjectId>, Onto) -> Option<(Vec<u8>, usize, ObjectId)> + 'a;

/// Makes `git_dir` the view of `base` for the checkout `work_tree`, its objects in the
/// shared repository beside it, which `make` brings forward. Returns the shared
/// repository's directory, which commands must be able to read too. A view or a shared
/// repository that cannot be brought forward (damaged, or made for another history) is
/// made anew once.
pub(crate) fn run(
    git_dir: &Path,
    work_tree: &Path,
    base: ObjectId,
    make: &Make<'_>,
    shared: &Mutex<Shared>,
) -> std::io::Result<PathBuf> {
    // Absolute: git runs with other working directories (a spec named by a relative path
    // has its state, and with it the view, under a relative path).
    let git_dir = &std::path::absolute(git_dir)?;
    let common = git_dir.with_file_name(SHARED);
    let sha = {
        let mut s = shared
            .lock()
            .map_err(|_| std::io::Error::other("the views' lock is poisoned"))?;
        match s.sha(&common, base, make) {
            Ok(sha) => sha,
            Err(_) => {
                s.0.remove(&common);
                if common.exists() {
                    std::fs::remove_dir_all(&common)?;
                }
                s.sha(&common, base, make)?
            }
        }
    };
    if point(git_dir, &common, sha.as_deref()).is_err() {
        if git_dir.exists() {
            std::fs::remove_dir_all(git_dir)?;
        }
        point(git_dir, &common, sha.as_deref())?;
    }
    // The checkout's `.git`: a file naming the view (a command may have left a directory or
    // another file there).
    let dot_git = work_tree.join(".git");
    match std::fs::symlink_metadata(&dot_git) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&dot_git)?,
        Ok(_) => std::fs::remove_file(&dot_git)?,
        Err(_) => {}
    }
    std::fs::write(&dot_git, format!("gitdir: {}\n", git_dir.display()))?;
    Ok(common)
}

impl Shared {
    /// The git commit of `base` in the shared repository `common`, imported if it is not
    /// there yet; `None` for the empty root (never exported).
    fn sha(
        &mut self,
        common: &Path,
        base: ObjectId,
        make: &Make<'_>,
    ) -> std::io::Result<Option<String>> {
        let known = self.0.entry(common.to_owned()).or_default();
        if !common.join("HEAD").exists() {
            std::fs::create_dir_all(common)?;
            ok(git(common, &["init", "-q", "--bare", "-b", "main"]), "init")?;
            *known = Known::default();
        } else if known.tip.is_none() {
            // Made by an earlier build: what it holds.
            known.load(common, None)?;
        }
        if let Some(sha) = known.shas.get(&base) {
            return Ok(Some(sha.clone()));
        }
        let mut onto = Onto::main();
        onto.until = Some(base);
        let since = known.tip.as_ref().map(|(sha, id)| {
            onto.from = sha.clone();
            *id
        });
        let (stream, count) = match make(since, onto) {
            Some((stream, count, _)) => (stream, count),
            // Not after the tip: the empty root (nothing to import), or another history.
            None => match make(None, {
                let mut all = Onto::main();
                all.until = Some(base);
                all
            }) {
                Some((_, 0, _)) => return Ok(None),
                _ => {
                    return Err(std::io::Error::other(
                        "the views' history is not the store's",
                    ));
                }
            },
        };
        if count == 0 {
            return Ok(None);
        }
        let dir_arg = format!("--git-dir={}", common.display());
        let parent = common.parent().unwrap_or(Path::new("."));
        export::fast_import_with(parent, &[&dir_arg], &stream, None)?;
        let from = known.tip.as_ref().map(|(sha, _)| sha.clone());
        known.load(common, from.as_deref())?;
        match known.shas.get(&base) {
            Some(sha) => Ok(Some(sha.clone())),
            None => Err(std::io::Error::other("the import did not reach the base")),
        }
    }
}

impl Known {
    /// Reads `main`'s commits after `from` (all without it): each one's store commit.
    fn load(&mut self, common: &Path, from: Option<&str>) -> std::io::Result<()> {
        let range = match from {
            Some(from) => format!("{from}..refs/heads/main"),
            None => "refs/heads/main".to_owned(),
        };
        let out = git(
            common,
            &[
                "log",
                "--no-show-signature",
                "--format=%H %(trailers:key=Specc-Id,valueonly)",
                &range,
            ],
        )?;
        if !out.status.success() {
            // No `main` yet: nothing imported.
            return if from.is_none() {
                Ok(())
            } else {
                Err(std::io::Error::other("the views' main is gone"))
            };
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut sha: Option<&str> = None;
        let mut newest = true;
        for word in text.split_whitespace() {
            match ObjectId::from_hex(word) {
                Some(id) => {
                    let Some(sha) = sha.take() else {
                        return Err(std::io::Error::other(
                            "the views' main was not made by specc",
                        ));
                    };
                    if newest {
                        self.tip = Some((sha.to_owned(), id));
                        newest = false;
                    }
                    self.shas.insert(id, sha.to_owned());
                }
                None if sha.is_none() => sha = Some(word),
                None => {
                    return Err(std::io::Error::other(
                        "the views' main was not made by specc",
                    ));
                }
            }
        }
        if sha.is_some() {
            return Err(std::io::Error::other(
                "the views' main was not made by specc",
            ));
        }
        Ok(())
    }
}

/// Makes `git_dir` a view borrowing `common`'s objects, its `main` at `sha` (none for the
/// empty root), its index that commit's tree.
fn point(git_dir: &Path, common: &Path, sha: Option<&str>) -> std::io::Result<()> {
    let alternates = git_dir.join("objects/info/alternates");
    if !alternates.exists() {
        // New, or a view of an earlier specc that held its own objects.
        if git_dir.exists() {
            std::fs::remove_dir_all(git_dir)?;
        }
        std::fs::create_dir_all(git_dir)?;
        ok(git(git_dir, &["init", "-q", "-b", "main"]), "init")?;
        std::fs::create_dir_all(git_dir.join("objects/info"))?;
        std::fs::write(
            &alternates,
            format!("{}\n", common.join("objects").display()),
        )?;
    }
    std::fs::write(git_dir.join("config"), CONFIG)?;
    std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/main\n")?;
    let hooks = git_dir.join("hooks");
    if hooks.exists() {
        std::fs::remove_dir_all(hooks)?;
    }
    let main = git_dir.join("refs/heads/main");
    let tree = match sha {
        Some(sha) => {
            std::fs::create_dir_all(git_dir.join("refs/heads"))?;
            let part = git_dir.join("refs/heads/main.specc-new");
            std::fs::write(&part, format!("{sha}\n"))?;
            std::fs::rename(&part, &main)?;
            "refs/heads/main"
        }
        None => {
            if main.exists() {
                std::fs::remove_file(&main)?;
            }
            "--empty"
        }
    };
    ok(git(git_dir, &["read-tree", tree]), "read-tree")?;
    Ok(())
}
