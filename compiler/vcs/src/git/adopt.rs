//! The first build of a repository `specc adopt` took in (`[build] adopted = true`): its
//! `main` has no commit of specc's, so the tree at `main` is imported into the empty store
//! as one snapshot commit (regular and executable files; symlinks and submodules stay in
//! git only), recorded like any import (`out/.git/specc-imported`). The store is opened for
//! this with no line budget: existing files over it are the code base as it is, and the
//! megafile guard refuses their growth afterwards like any other's.
//! design: driver.adopt, vcs.import

use std::path::Path;

use crate::{Change, Options, Outcome, Repo, Submission};

/// Why the snapshot could not be taken.
#[derive(Debug)]
pub enum AdoptError {
    NoMain(std::path::PathBuf),
    StoreNotEmpty,
    Git(&'static str),
    Store(String),
}

impl std::fmt::Display for AdoptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdoptError::NoMain(out) => write!(
                f,
                "the adopted repository {} has no branch `main`, which specc builds on; rename yours (`git -C {} branch -m main`) or make one",
                out.display(),
                out.display()
            ),
            AdoptError::StoreNotEmpty => write!(
                f,
                "the build's store already has commits, but `main` has none of specc's: .specc/ belongs to another output"
            ),
            AdoptError::Git(what) => write!(f, "git could not {what}"),
            AdoptError::Store(why) => write!(f, "the store did not take the snapshot: {why}"),
        }
    }
}

/// The files of commit `sha` as store changes, and how many git entries the store cannot
/// hold were left out.
fn main_files(out: &Path, sha: &str) -> Result<(Vec<Change>, usize), AdoptError> {
    let listing = super::command::read(out, &["ls-tree", "-r", "-z", "--full-tree", sha])
        .ok_or(AdoptError::Git("list the files of main"))?;
    let mut changes = Vec::new();
    let mut left_out = 0;
    for entry in listing.split('\0').filter(|e| !e.is_empty()) {
        // `MODE TYPE SHA\tPATH`
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let mut parts = meta.split(' ');
        let (Some(mode), Some(_), Some(blob)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        // What the store cannot hold stays in git only: links, submodules, and names with
        // quotes, backslashes or control characters (the store's path rule).
        let odd_name = path
            .chars()
            .any(|c| c.is_control() || c == '"' || c == '\\');
        if !matches!(mode, "100644" | "100755") || odd_name {
            left_out += 1;
            continue;
        }
        let bytes = super::command::output(out, &["cat-file", "blob", blob])
            .ok()
            .filter(|o| o.status.success())
            .ok_or(AdoptError::Git("read a file of main"))?
            .stdout;
        changes.push(Change {
            path: path.to_owned(),
            expected: None,
            new: Some(bytes),
            executable: mode == "100755",
        });
    }
    Ok((changes, left_out))
}

/// Imports `main`'s tree into the store at `log` as its first commit. Returns how many
/// files it holds and how many git entries (symlinks, submodules) it left out.
pub fn snapshot(
    out: &Path,
    log: &Path,
    rt: &tokio::runtime::Runtime,
) -> Result<(usize, usize), AdoptError> {
    let git = |args: &[&str]| super::command::read(out, args);
    let sha = git(&["rev-parse", "--verify", "-q", "refs/heads/main"])
        .map(|s| s.trim().to_owned())
        .ok_or_else(|| AdoptError::NoMain(out.to_path_buf()))?;
    let (changes, left_out) = main_files(out, &sha)?;
    let files = changes.len();
    let options = Options {
        line_budget: usize::MAX,
        ..Options::default()
    };
    let repo = Repo::open(log, options).map_err(|e| AdoptError::Store(e.to_string()))?;
    let id = rt.block_on(async {
        let stats = repo.stats().await;
        let Some(head) = stats.head else {
            return Err(AdoptError::Store("it is not available".to_owned()));
        };
        if stats.seq != 0 {
            // A build killed after the snapshot was taken and before it was recorded: the
            // store's one commit is that snapshot.
            let taken = repo.commit(head).await.is_ok_and(|c| {
                stats.seq == 1 && c.message.contains(&format!("Imported-From: {sha}"))
            });
            return if taken {
                Ok(head)
            } else {
                Err(AdoptError::StoreNotEmpty)
            };
        }
        let root = head;
        let submission = Submission {
            base: root,
            changes,
            message: format!("the code base as adopted\n\nImported-From: {sha}"),
            task: "adopted".to_owned(),
            idempotency_key: format!("import:{sha}"),
        };
        match repo.submit(submission).await {
            Outcome::Committed { id, .. } => Ok(id),
            other => Err(AdoptError::Store(format!("{other:?}"))),
        }
    })?;
    drop(repo); // closed (its lock released) before the build opens it
    crate::record_import(out, &sha, id).map_err(|e| AdoptError::Store(e.to_string()))?;
    Ok((files, left_out))
}
