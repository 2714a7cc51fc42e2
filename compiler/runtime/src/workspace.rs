//! Checkouts and diffs. An attempt works in `.specc/work/<task>/`, a checkout of its base
//! commit (modes kept, stale files removed, `target/` kept so builds stay warm); at `done`
//! the checkout's difference from the base becomes the changes of a submission, each with
//! the blob it expects at the base. Files a command changed outside the write scope are
//! left out of the submission (and reported): build output, formatters run too widely.
//! design: runtime.workspace

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, FileEntry, Repo};

use crate::scope::Scope;
use crate::tools::GUIDE;

/// Top-level entries of a checkout that a new checkout keeps and a diff ignores.
pub const KEPT: &[&str] = &[".git", "target"];

/// The directory of `task`'s checkout under `work` (task ids hold `/`; the name is flat).
pub fn dir_for(work: &Path, task: &str) -> PathBuf {
    let flat: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '.'
            }
        })
        .collect();
    let hash = &blake3::hash(task.as_bytes()).to_hex()[..8];
    work.join(format!("{flat}-{hash}"))
}

/// Where attempt `attempt`'s command logs (and the commands' private homes) go: beside the
/// checkout, never inside it, so the commands' own files are not part of the diff.
pub fn logs_for(checkout: &Path, attempt: u32) -> PathBuf {
    let name = checkout
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    checkout
        .with_file_name(format!("{name}.logs"))
        .join(attempt.to_string())
}

/// Makes `dir` a checkout of `base`; returns the base's files.
pub async fn prepare(repo: &Repo, base: ObjectId, dir: &Path) -> std::io::Result<Vec<FileEntry>> {
    std::fs::create_dir_all(dir)?;
    repo.checkout(base, dir, KEPT).await?;
    repo.files(base)
        .await
        .ok_or_else(|| std::io::Error::other("the base commit has no files listing"))
}

/// What a checkout changed against its base.
#[derive(Debug, Default)]
pub struct Diff {
    pub changes: Vec<Change>,
    /// Paths changed outside the write scope: not submitted.
    pub left_out: Vec<String>,
}

impl Diff {
    pub fn paths(&self) -> Vec<&str> {
        self.changes.iter().map(|c| c.path.as_str()).collect()
    }
}

/// The difference between the files under `dir` and `base`, limited to `scope` (and the
/// field guide, which every agent may write).
pub fn diff(dir: &Path, base: &[FileEntry], scope: &Scope) -> std::io::Result<Diff> {
    let base: BTreeMap<&str, &FileEntry> = base.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut now = Vec::new();
    crate::tools::walk_files(dir, &mut now);
    now.sort();
    let in_scope = |p: &str| p == GUIDE || scope.allows(p);
    let mut out = Diff::default();
    for path in &now {
        let full = dir.join(path);
        let bytes = std::fs::read(&full)?;
        let executable = std::fs::metadata(&full)?.permissions().mode() & 0o111 != 0;
        let before = base.get(path.as_str());
        if before.is_some_and(|b| b.bytes == bytes && b.executable == executable) {
            continue;
        }
        if !in_scope(path) {
            out.left_out.push(path.clone());
            continue;
        }
        out.changes.push(Change {
            path: path.clone(),
            expected: before.map(|b| ObjectId::of(Kind::Blob, &b.bytes)),
            new: Some(bytes),
            executable,
        });
    }
    for (path, entry) in &base {
        if now.binary_search_by(|p| p.as_str().cmp(path)).is_ok() || kept(path) {
            continue;
        }
        if !in_scope(path) {
            out.left_out.push((*path).to_owned());
            continue;
        }
        out.changes.push(Change {
            path: (*path).to_owned(),
            expected: Some(ObjectId::of(Kind::Blob, &entry.bytes)),
            new: None,
            executable: false,
        });
    }
    Ok(out)
}

/// Paths a walk of the checkout does not see (build output, specc's state).
fn kept(path: &str) -> bool {
    path.split('/')
        .any(|c| crate::tools::SKIPPED_DIRS.contains(&c))
}
