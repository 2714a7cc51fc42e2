//! A person's commits in `out/`, imported into the VCS before a build, so the build works on
//! top of them: each commit on `main` after specc's last export becomes one commit of the
//! store, with the person as its author, on the exported commit it was made on. Only a clean
//! change is imported: regular files that the store takes as it is (a merge commit as what it
//! changed against its first parent). A symlink or submodule, a change the store refuses (the megafile guard) or
//! one that conflicts with work specc landed since its export stops the build before
//! anything runs, and says which.
//! design: vcs.import

use std::path::Path;

use crate::object::{Kind, ObjectId};
use crate::{Change, Outcome, Repo, Submission};

use super::out_dir::PersonCommit;

/// Why the import stopped: a commit that cannot be imported, or the record of one that was.
#[derive(Debug)]
pub enum ImportError {
    Unsafe {
        out: std::path::PathBuf,
        sha: String,
        why: Unsafe,
    },
    Record {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
}

impl std::fmt::Display for ImportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ImportError::Unsafe { out, sha, why } => write!(
                f,
                "commit {} on `main` in {} cannot be imported: {why}",
                &sha[..sha.len().min(12)],
                out.display()
            ),
            ImportError::Record { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

/// Why a person's commit cannot be imported (the unsafe cases of E0403).
#[derive(Debug)]
pub enum Unsafe {
    /// A commit with no parent: a history that does not grow from specc's.
    Orphan,
    Mode {
        path: String,
        mode: String,
    },
    Conflict {
        path: String,
    },
    Refused(crate::Refusal),
    Unreadable,
    /// The store holds work landed after its last export, which `main` lacks: exported to
    /// branch `specc` beside it.
    Behind,
}

impl std::fmt::Display for Unsafe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsafe::Orphan => write!(
                f,
                "it has no parent: a history that does not grow from specc's"
            ),
            Unsafe::Mode { path, mode } => write!(
                f,
                "`{path}` has mode {mode} (a symlink or submodule); specc holds regular and executable files only"
            ),
            Unsafe::Conflict { path } => write!(
                f,
                "`{path}` conflicts with work specc landed after its last export"
            ),
            Unsafe::Refused(crate::Refusal::Megafile {
                path,
                lines,
                budget,
                ..
            }) => write!(
                f,
                "it grows `{path}` to {lines} lines, past the line budget of {budget}; split the file first"
            ),
            Unsafe::Refused(r) => write!(f, "the store refused it: {r:?}"),
            Unsafe::Unreadable => write!(f, "git could not read it"),
            Unsafe::Behind => write!(
                f,
                "specc landed work after its last export that `main` does not have (that export was refused or interrupted); it is now on branch `specc` beside `main`: put your commits on top of it (`git rebase specc` on `main`), then build again"
            ),
        }
    }
}

/// Imports `commits` (oldest first) into `repo` on top of store commit `base` (what `main`
/// held before them). Each import is recorded in `out/.git/specc-imported` before the next
/// starts, so a build killed part way imports the rest next time, and never twice. A
/// conflict part way leaves the commits before it imported: they are on `main`, as the
/// person made them.
pub async fn import(
    out: &Path,
    repo: &Repo,
    mut base: ObjectId,
    base_sha: &str,
    commits: &[PersonCommit],
) -> Result<usize, ImportError> {
    // Work the store landed after its last export is not in `main`: importing the person's
    // commits on top of it would leave it out of `out/` for good. It goes beside `main`
    // instead, for the person to rebase onto.
    if repo.head_now().is_some_and(|head| head != base) {
        let exported = repo.export_git(out, Some(("specc", base_sha, base))).await;
        let why = match exported {
            Ok(_) => Unsafe::Behind,
            Err(_) => Unsafe::Unreadable,
        };
        return Err(ImportError::Unsafe {
            out: out.to_path_buf(),
            sha: commits.first().map(|c| c.sha.clone()).unwrap_or_default(),
            why,
        });
    }
    // Every commit is read and checked before the first is submitted: a history with an
    // unsafe commit anywhere imports nothing.
    let submissions = commits
        .iter()
        .map(|c| read(out, c))
        .collect::<Result<Vec<_>, _>>()?;
    for (c, author, message, changes) in submissions {
        let unsafe_ = |why: Unsafe| ImportError::Unsafe {
            out: out.to_path_buf(),
            sha: c.sha.clone(),
            why,
        };
        let submission = Submission {
            base,
            changes,
            message: format!("{message}\n\nImported-From: {}\nAuthor: {author}", c.sha),
            task: format!("person: {author}"),
            idempotency_key: format!("import:{}", c.sha),
        };
        match repo.submit(submission).await {
            Outcome::Committed { id, .. } => {
                crate::record_import(out, &c.sha, id).map_err(|error| ImportError::Record {
                    path: out.join(crate::IMPORTED),
                    error,
                })?;
                base = id;
            }
            Outcome::Conflict(conflict) => {
                let _ = repo.withdraw(&format!("person: {author}"));
                return Err(unsafe_(Unsafe::Conflict {
                    path: conflict.path,
                }));
            }
            Outcome::Refused(r) => return Err(unsafe_(Unsafe::Refused(r))),
        }
    }
    Ok(commits.len())
}

/// A person's commit as it will be submitted: its author, message and changes.
fn read<'c>(
    out: &Path,
    c: &'c PersonCommit,
) -> Result<(&'c PersonCommit, String, String, Vec<Change>), ImportError> {
    let unsafe_ = |why: Unsafe| ImportError::Unsafe {
        out: out.to_path_buf(),
        sha: c.sha.clone(),
        why,
    };
    // A merge is imported as what it changed against its first parent, the line of `main`
    // the walk followed: the store then holds exactly the merge's tree.
    let Some(parent) = c.parents.first() else {
        return Err(unsafe_(Unsafe::Orphan));
    };
    let changes = changes(out, parent, &c.sha).map_err(unsafe_)?;
    let meta = git(
        out,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%an <%ae>%x00%B",
            &c.sha,
        ],
    )
    .ok_or_else(|| unsafe_(Unsafe::Unreadable))?;
    let (author, message) = meta.split_once('\0').unwrap_or(("someone", &meta));
    Ok((c, author.to_owned(), message.trim_end().to_owned(), changes))
}

/// What commit `sha` changed against `parent`, as store changes: each path with the blob
/// it had (as the store names blobs) and its new content.
fn changes(out: &Path, parent: &str, sha: &str) -> Result<Vec<Change>, Unsafe> {
    let raw = git(
        out,
        &[
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--no-commit-id",
            parent,
            sha,
        ],
    )
    .ok_or(Unsafe::Unreadable)?;
    let mut fields = raw.split('\0').filter(|f| !f.is_empty());
    let mut changes = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        // `:OLDMODE NEWMODE OLDSHA NEWSHA STATUS`
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_sha, new_sha, _status] = parts.as_slice() else {
            return Err(Unsafe::Unreadable);
        };
        for mode in [old_mode, new_mode] {
            if !matches!(*mode, "000000" | "100644" | "100755") {
                return Err(Unsafe::Mode {
                    path: path.to_owned(),
                    mode: (*mode).to_owned(),
                });
            }
        }
        let expected = match *old_mode {
            "000000" => None,
            _ => Some(ObjectId::of(Kind::Blob, &blob(out, old_sha)?)),
        };
        let new = match *new_mode {
            "000000" => None,
            _ => Some(blob(out, new_sha)?),
        };
        changes.push(Change {
            path: path.to_owned(),
            expected,
            new,
            executable: *new_mode == "100755",
        });
    }
    Ok(changes)
}

fn blob(out: &Path, sha: &str) -> Result<Vec<u8>, Unsafe> {
    let o =
        super::command::output(out, &["cat-file", "blob", sha]).map_err(|_| Unsafe::Unreadable)?;
    if o.status.success() {
        Ok(o.stdout)
    } else {
        Err(Unsafe::Unreadable)
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    super::command::read(dir, args)
}
