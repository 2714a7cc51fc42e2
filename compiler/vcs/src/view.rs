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
use std::sync::{Arc, Mutex};

use crate::export::{self, Onto};
use crate::object::ObjectId;

/// The shared repository's name, beside the views.
pub(crate) const SHARED: &str = "views.git";

/// The shared repository's configuration: no hooks, no background maintenance.
const SHARED_CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n\
    \thooksPath = /dev/null\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n";

/// The view's configuration, written by specc each time: no hooks, no file-system monitor,
/// no background maintenance.
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\
    \thooksPath = /dev/null\n\tfsmonitor = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n";

/// What this process knows of each shared repository (by its path). Looking up a base
/// already imported takes a lock only as long as a map's lookup: an import holds its
/// repository's own import lock, never the map of what is known.
#[derive(Default)]
pub(crate) struct Shared(Mutex<HashMap<PathBuf, Arc<Known>>>);

#[derive(Default)]
struct Known {
    /// Which git commit each store commit became.
    shas: Mutex<HashMap<ObjectId, String>>,
    /// Held while the repository is brought forward.
    import: Mutex<Import>,
}

#[derive(Default)]
struct Import {
    /// Whether what the repository held when this process first used it has been read.
    loaded: bool,
    /// `main`'s tip: its git commit and store commit.
    tip: Option<(String, ObjectId)>,
    /// Why the repository could not be made anew: every later view fails at once with it
    /// instead of exporting the whole history again.
    broken: Option<String>,
}

/// Why the shared repository could not give a base's commit.
enum Fault {
    /// It holds another history, or something specc did not make: it is made anew.
    Foreign(&'static str),
    /// Git or the disk failed: this view fails, the repository stays as it is.
    Io(std::io::Error),
}

impl From<std::io::Error> for Fault {
    fn from(e: std::io::Error) -> Self {
        Fault::Io(e)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every guarded value is replaced whole, never left half-updated: a panic elsewhere
    // leaves it usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `git --git-dir=GIT_DIR ARGS`, reading no system or user configuration.
fn git(git_dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    let mut c = Command::new("git");
    c.arg(format!("--git-dir={}", git_dir.display())).args(args);
    export::clean_env(&mut c).output()
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
/// repository's directory, which commands must be able to read too. A shared repository
/// made for another history is made anew beside it and swapped in, never emptied in place
/// while other views borrow from it; a failure of git or the disk fails this view only.
/// A view that cannot be pointed is made anew once.
pub(crate) fn run(
    git_dir: &Path,
    work_tree: &Path,
    base: ObjectId,
    make: &Make<'_>,
    shared: &Shared,
) -> std::io::Result<PathBuf> {
    // Absolute: git runs with other working directories (a spec named by a relative path
    // has its state, and with it the view, under a relative path).
    let git_dir = &std::path::absolute(git_dir)?;
    let common = git_dir.with_file_name(SHARED);
    let known = lock(&shared.0).entry(common.clone()).or_default().clone();
    let sha = known.sha(&common, base, make)?;
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

impl Known {
    /// The git commit of `base` in the shared repository `common`, imported if it is not
    /// there yet; `None` for the empty root (never exported).
    fn sha(
        &self,
        common: &Path,
        base: ObjectId,
        make: &Make<'_>,
    ) -> std::io::Result<Option<String>> {
        if let Some(sha) = lock(&self.shas).get(&base) {
            return Ok(Some(sha.clone()));
        }
        let mut import = lock(&self.import);
        if let Some(why) = &import.broken {
            return Err(std::io::Error::other(why.clone()));
        }
        // Imported while this one waited for the lock.
        if let Some(sha) = lock(&self.shas).get(&base) {
            return Ok(Some(sha.clone()));
        }
        match self.forward(&mut import, common, base, make) {
            Ok(sha) => Ok(sha),
            Err(Fault::Io(e)) => Err(e),
            Err(Fault::Foreign(_)) => {
                let made = self.remake(&mut import, common, base, make);
                if let Err(e) = &made {
                    import.broken = Some(format!("the checkouts' shared git repository: {e}"));
                }
                made
            }
        }
    }

    /// Brings `common` forward to `base`, creating it if it does not exist.
    fn forward(
        &self,
        import: &mut Import,
        common: &Path,
        base: ObjectId,
        make: &Make<'_>,
    ) -> Result<Option<String>, Fault> {
        if !common.join("HEAD").exists() {
            std::fs::create_dir_all(common)?;
            ok(git(common, &["init", "-q", "--bare", "-b", "main"]), "init")?;
            std::fs::write(common.join("config"), SHARED_CONFIG)?;
            *import = Import {
                loaded: true,
                ..Import::default()
            };
        } else if !import.loaded {
            // Made by an earlier build: what it holds.
            self.load(import, common, None)?;
            import.loaded = true;
        }
        if let Some(sha) = lock(&self.shas).get(&base) {
            return Ok(Some(sha.clone()));
        }
        let mut onto = Onto::main();
        onto.until = Some(base);
        let since = import.tip.as_ref().map(|(sha, id)| {
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
                Some(_) => return Err(Fault::Foreign("the views' history is not the store's")),
                None => {
                    return Err(Fault::Io(std::io::Error::other(
                        "the store could not export its history",
                    )));
                }
            },
        };
        if count == 0 {
            return Ok(None);
        }
        let dir_arg = format!("--git-dir={}", common.display());
        let parent = common.parent().unwrap_or(Path::new("."));
        // No pid file: one a killed build left behind reads the end of its input and
        // stops; if it still holds `main`'s lock, this import fails this view only.
        export::fast_import_with(parent, &[&dir_arg], &stream, None)?;
        let from = import.tip.as_ref().map(|(sha, _)| sha.clone());
        self.load(import, common, from.as_deref())?;
        match lock(&self.shas).get(&base) {
            Some(sha) => Ok(Some(sha.clone())),
            None => Err(Fault::Foreign("the import did not reach the base")),
        }
    }

    /// Makes the shared repository anew beside the old one, then swaps it in: views that
    /// borrow the old one's objects keep reading them until the rename.
    fn remake(
        &self,
        import: &mut Import,
        common: &Path,
        base: ObjectId,
        make: &Make<'_>,
    ) -> std::io::Result<Option<String>> {
        let fresh = common.with_extension("git.specc-new");
        let old = common.with_extension("git.specc-old");
        for dir in [&fresh, &old] {
            if dir.exists() {
                std::fs::remove_dir_all(dir)?;
            }
        }
        *import = Import::default();
        lock(&self.shas).clear();
        let sha = match self.forward(import, &fresh, base, make) {
            Ok(sha) => sha,
            Err(Fault::Io(e)) => return Err(e),
            Err(Fault::Foreign(why)) => return Err(std::io::Error::other(why)),
        };
        if common.exists() {
            std::fs::rename(common, &old)?;
        }
        std::fs::rename(&fresh, common)?;
        if old.exists() {
            std::fs::remove_dir_all(&old)?;
        }
        Ok(sha)
    }

    /// Reads `main`'s commits after `from` (all without it): each one's store commit.
    fn load(&self, import: &mut Import, common: &Path, from: Option<&str>) -> Result<(), Fault> {
        const NOT_OURS: Fault = Fault::Foreign("the views' main was not made by specc");
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
                Err(Fault::Foreign("the views' main is gone"))
            };
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut sha: Option<&str> = None;
        let mut found = Vec::new();
        for word in text.split_whitespace() {
            match ObjectId::from_hex(word) {
                Some(id) => {
                    let Some(sha) = sha.take() else {
                        return Err(NOT_OURS);
                    };
                    found.push((id, sha.to_owned()));
                }
                None if sha.is_none() => sha = Some(word),
                None => return Err(NOT_OURS),
            }
        }
        if sha.is_some() {
            return Err(NOT_OURS);
        }
        // Newest first.
        if let Some((id, sha)) = found.first() {
            import.tip = Some((sha.clone(), *id));
        }
        lock(&self.shas).extend(found);
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
