//! Diffs. An attempt works in a checkout slot of its base commit (`slots`: modes kept,
//! stale files removed, `target/` kept so builds stay warm); at `done` the checkout's
//! difference from the base becomes the changes of a submission, each with the blob it
//! expects at the base. While no command ran, the paths the tools wrote are all that can
//! differ, and only they are compared (`diff_tracked`); otherwise the whole checkout is
//! (`diff`). Files a command changed outside the write scope are left out of the
//! submission (and reported): build output, formatters run too widely.
//! design: runtime.workspace

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, FileEntry, Repo};

use specc_plan::field_guide::PATH as GUIDE;

use super::generated::{Generated, generated};
use super::scope::Scope;
use super::tracked::Wrote;
use super::tree::{skipped, walk_files};

/// Where attempt `attempt` of `task` logs its commands (and keeps the commands' private
/// homes): under `work/logs/`, never inside a checkout, so the commands' own files are not
/// part of the diff. Task ids hold `/`; the directory name is flat, with a hash.
pub(crate) fn logs_for(work: &Path, task: &str, attempt: u32) -> PathBuf {
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
    work.join("logs")
        .join(format!("{flat}-{hash}"))
        .join(attempt.to_string())
}

/// What a checkout changed against its base.
#[derive(Debug, Default)]
pub(crate) struct Diff {
    pub changes: Vec<Change>,
    /// Paths changed outside the write scope: not submitted.
    pub left_out: Vec<String>,
    /// Lock files a command wrote outside the write scope: kept in the checkout, not
    /// submitted (runtime.generated-files).
    pub generated: Vec<String>,
}

impl Diff {
    /// Takes in a changed path outside the write scope: a lock file is generated, the
    /// rest is left out.
    fn outside(&mut self, path: String) {
        match generated(&path) {
            Some(Generated::Lockfile) => self.generated.push(path),
            _ => self.left_out.push(path),
        }
    }

    pub(crate) fn paths(&self) -> Vec<&str> {
        self.changes.iter().map(|c| c.path.as_str()).collect()
    }
}

/// [`diff`] when only the tools wrote since the checkout held `base`: only `paths` are
/// compared, each with the base's file read from the VCS. Costs what the task wrote.
pub(crate) async fn diff_tracked(
    repo: &Repo,
    base: ObjectId,
    dir: &Path,
    paths: &Wrote,
    scope: &Scope,
) -> std::io::Result<Diff> {
    let mut out = Diff::default();
    for (path, touched) in paths.iter().filter(|(p, _)| !skipped(p) && !is_cache(p)) {
        let before = match &touched.before {
            Some(before) => before.clone(),
            None => repo.file(base, path).await?,
        };
        let full = dir.join(path);
        let now = match &touched.now {
            // A file a tool wrote whole is known without reading it.
            Some(w) => Some((w.bytes.to_vec(), w.executable)),
            None => on_disk(&full)?,
        };
        if before == now {
            continue;
        }
        if !(path == GUIDE || scope.allows(path)) {
            out.outside(path.clone());
            continue;
        }
        let executable = now.as_ref().is_some_and(|(_, x)| *x);
        out.changes.push(Change {
            path: path.clone(),
            expected: before.map(|(b, _)| ObjectId::of(Kind::Blob, &b)),
            new: now.map(|(b, _)| b),
            executable,
        });
    }
    Ok(out)
}

/// The regular file at `full` with its mode; `None` if there is none (or something else).
fn on_disk(full: &Path) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_file() => Ok(Some((
            std::fs::read(full)?,
            m.permissions().mode() & 0o111 != 0,
        ))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The difference between the files under `dir` and `base`, limited to `scope` (and the
/// field guide, which every agent may write).
pub(crate) fn diff(dir: &Path, base: &[FileEntry], scope: &Scope) -> std::io::Result<Diff> {
    let in_scope = |p: &str| p == GUIDE || scope.allows(p);
    let mut out = Diff::default();
    for c in changes(dir, base, &in_scope)? {
        if !in_scope(&c.path) {
            out.outside(c.path);
            continue;
        }
        let expected = c.before.map(|b| ObjectId::of(Kind::Blob, &b.bytes));
        let (new, executable) = match c.now {
            Now::File { bytes, executable } => (Some(bytes), executable),
            Now::Gone => (None, false),
            Now::Unread => continue, // only paths outside the scope go unread
        };
        out.changes.push(Change {
            path: c.path,
            expected,
            new,
            executable,
        });
    }
    Ok(out)
}

/// Undoes every change outside `scope` (the field guide aside): files the base has are
/// written back with their mode, new files are removed. Returns the paths it touched.
pub(crate) fn restore_outside(
    dir: &Path,
    base: &[FileEntry],
    scope: &Scope,
) -> std::io::Result<Vec<String>> {
    let in_scope = |p: &str| p == GUIDE || scope.allows(p);
    let mut touched = Vec::new();
    for c in changes(dir, base, &in_scope)? {
        // Lock files stay for the checks (runtime.generated-files).
        if in_scope(&c.path) || generated(&c.path).is_some() {
            continue;
        }
        let full = dir.join(&c.path);
        match c.before {
            Some(b) => {
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                // Never through a link a command left there.
                if std::fs::symlink_metadata(&full).is_ok() {
                    std::fs::remove_file(&full)?;
                }
                std::fs::write(&full, &b.bytes)?;
                let mode = if b.executable { 0o755 } else { 0o644 };
                std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode))?;
            }
            None => std::fs::remove_file(&full)?,
        }
        touched.push(c.path);
    }
    Ok(touched)
}

/// What a changed path holds now.
enum Now {
    File {
        bytes: Vec<u8>,
        executable: bool,
    },
    /// A file the base lacks, outside what the caller reads.
    Unread,
    Gone,
}

/// A path whose state in the checkout differs from the base's.
struct Changed<'a> {
    path: String,
    now: Now,
    before: Option<&'a FileEntry>,
}

/// Every path of the checkout (regular files, outside the top-level skipped directories)
/// that differs from `base`, in path order. A file the base lacks is read only if `read`
/// says so; the others must be read to be compared.
fn changes<'a>(
    dir: &Path,
    base: &'a [FileEntry],
    read: &dyn Fn(&str) -> bool,
) -> std::io::Result<Vec<Changed<'a>>> {
    let by_path: BTreeMap<&str, &FileEntry> = base.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut now = Vec::new();
    walk_files(dir, &mut now);
    now.sort();
    let mut out = Vec::new();
    for path in now.iter().filter(|p| !is_cache(p)) {
        let before = by_path.get(path.as_str()).copied();
        if before.is_none() && !read(path) {
            out.push(Changed {
                path: path.clone(),
                now: Now::Unread,
                before,
            });
            continue;
        }
        let full = dir.join(path);
        let bytes = std::fs::read(&full)?;
        let executable = std::fs::metadata(&full)?.permissions().mode() & 0o111 != 0;
        if before.is_some_and(|b| b.bytes == bytes && b.executable == executable) {
            continue;
        }
        out.push(Changed {
            path: path.clone(),
            now: Now::File { bytes, executable },
            before,
        });
    }
    for (path, entry) in by_path {
        if now.binary_search_by(|p| p.as_str().cmp(path)).is_err()
            && !skipped(path)
            && !is_cache(path)
        {
            out.push(Changed {
                path: path.to_owned(),
                now: Now::Gone,
                before: Some(entry),
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// Whether `path` is a cache or build product, never compared nor landed.
fn is_cache(path: &str) -> bool {
    generated(path) == Some(Generated::Cache)
}
