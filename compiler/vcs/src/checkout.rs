//! Checking a commit out into a directory: the directory ends up holding exactly the commit's
//! files, with their modes, apart from the top-level entries the caller keeps (`.git`,
//! `target`). A symlink is never followed: one that is not in the commit (none is: the store
//! holds files only) is removed as a link, and one standing where the commit has a file or a
//! directory is replaced. Writers of a work tree (agents, builds) may leave links pointing
//! anywhere; a checkout must not write or delete through them.
//! design: vcs.checkout

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{self, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::FileEntry;

/// Makes `dir` hold the files of a commit; returns how many files were written.
pub(crate) fn run(dir: &Path, files: &[FileEntry], keep: &[OsString]) -> std::io::Result<usize> {
    fs::create_dir_all(dir)?;
    // What the commit has, relative to `dir`: its files and every directory above them.
    let mut wanted_files: HashSet<PathBuf> = HashSet::with_capacity(files.len());
    let mut wanted_dirs: HashSet<PathBuf> = HashSet::new();
    for f in files {
        let rel = PathBuf::from(&f.path);
        let mut up = rel.parent();
        while let Some(d) = up.filter(|d| !d.as_os_str().is_empty()) {
            if !wanted_dirs.insert(d.to_owned()) {
                break; // its ancestors are in already
            }
            up = d.parent();
        }
        wanted_files.insert(rel);
    }
    remove_stale(dir, Path::new(""), &wanted_files, &wanted_dirs, keep)?;
    let mut made: HashSet<PathBuf> = HashSet::new();
    for f in files {
        write_file(dir, f, &mut made)?;
    }
    Ok(files.len())
}

/// Removes, under `dir/rel`, every entry the commit does not have: files and symlinks one by
/// one, directories the commit has no file under as a whole (so none is left empty). Kept
/// top-level entries are skipped.
fn remove_stale(
    dir: &Path,
    rel: &Path,
    wanted_files: &HashSet<PathBuf>,
    wanted_dirs: &HashSet<PathBuf>,
    keep: &[OsString],
) -> std::io::Result<()> {
    for entry in fs::read_dir(dir.join(rel))? {
        let entry = entry?;
        let name = entry.file_name();
        if rel.as_os_str().is_empty() && keep.contains(&name) {
            continue;
        }
        let path = rel.join(&name);
        // `file_type` does not follow a symlink: a link to a directory is a link.
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if wanted_dirs.contains(&path) {
                remove_stale(dir, &path, wanted_files, wanted_dirs, keep)?;
            } else {
                fs::remove_dir_all(entry.path())?; // does not follow links inside either
            }
        } else if !(kind.is_file() && wanted_files.contains(&path)) {
            // A stale file, or a symlink (or other special file) wherever it is: even one at
            // a path of the commit is replaced by a regular file.
            fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Removes whatever is at `p` (a link as a link); nothing there is fine.
fn remove_any(p: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Writes one file with its mode. Every directory on its way must be a real directory
/// (anything else there is replaced), and the file itself is created afresh (`create_new`
/// fails rather than follow a link), so nothing outside `dir` is ever written.
fn write_file(dir: &Path, f: &FileEntry, made: &mut HashSet<PathBuf>) -> std::io::Result<()> {
    let mut at = dir.to_path_buf();
    let mut parts = f.path.split('/').peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        if parts.peek().is_none() {
            break;
        }
        if made.contains(&at) {
            continue;
        }
        match fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                fs::remove_file(&at)?;
                fs::create_dir(&at)?;
            }
            Err(e) if e.kind() == ErrorKind::NotFound => fs::create_dir(&at)?,
            Err(e) => return Err(e),
        }
        made.insert(at.clone());
    }
    // A regular file that already holds these bytes and this mode is left alone, so its
    // modification time stays and builds kept in the checkout stay warm.
    if let Ok(m) = fs::symlink_metadata(&at)
        && m.is_file()
        && m.len() == f.bytes.len() as u64
        && m.permissions().mode() & 0o777 == if f.executable { 0o755 } else { 0o644 }
        && fs::read(&at).is_ok_and(|b| b == f.bytes)
    {
        return Ok(());
    }
    remove_any(&at)?;
    let mut file = OpenOptions::new().write(true).create_new(true).open(&at)?;
    file.write_all(&f.bytes)?;
    // Set on the open file, so the umask does not decide and no path is looked up again.
    let mode = if f.executable { 0o755 } else { 0o644 };
    file.set_permissions(Permissions::from_mode(mode))?;
    Ok(())
}
