//! Writing a checkout's files: what moves a slot, and the one-lookup open the tools' writes
//! share (design: perf.orchestration).
//! design: runtime.workspace

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use specc_vcs::FileAt;

/// Writes `changes` into the checkout at `dir`: each file with its mode (a link or anything
/// else in the way removed first, never written through), each removed file deleted with
/// the directories it leaves empty (a directory at a removed path is left: its files have
/// entries of their own). A file already there is rewritten in place, its mode
/// changed only if it differs.
pub fn apply(dir: &Path, changes: &[(String, FileAt)]) -> std::io::Result<()> {
    for (path, file) in changes {
        let full = dir.join(path);
        match file {
            Some((bytes, executable)) => write_file(dir, &full, bytes, mode_of(*executable))?,
            None => {
                match std::fs::symlink_metadata(&full) {
                    // No file there; a directory holds other paths, each with an entry of
                    // its own (a path a tool failed to write can be a directory's).
                    Ok(m) if m.is_dir() => continue,
                    Ok(_) => std::fs::remove_file(&full)?,
                    Err(_) => continue,
                }
                let mut at = full.parent();
                while let Some(p) = at.filter(|p| *p != dir) {
                    if std::fs::remove_dir(p).is_err() {
                        break; // not empty
                    }
                    at = p.parent();
                }
            }
        }
    }
    Ok(())
}

/// A file's mode in a checkout: 755 if executable, else 644.
pub(crate) fn mode_of(executable: bool) -> u32 {
    if executable { 0o755 } else { 0o644 }
}

/// Writes one file of a checkout. The common case costs one path lookup ([`open_regular`]);
/// anything else (a missing directory, a link, a directory or another kind of file in the
/// way) takes the careful path, which looks first.
/// design: perf.orchestration
fn write_file(dir: &Path, full: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let opened = match open_regular(full, mode) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match full.parent() {
            Some(parent) => {
                make_dirs(dir, parent)?;
                open_regular(full, mode)
            }
            None => Err(e),
        },
        other => other,
    };
    match opened {
        Ok(Some((f, meta))) => fill(f, &meta, bytes, mode),
        // A link, a directory, a FIFO or anything else in the way.
        Ok(None) | Err(_) => write_carefully(dir, full, bytes, mode),
    }
}

/// Opens `full` for writing as a regular file, created with `mode` (less the umask) if
/// missing, in one path lookup: a link is not followed (`O_NOFOLLOW`) and a FIFO cannot
/// block the open (`O_NONBLOCK`). `Ok(None)`: something other than a regular file is
/// there; `NotFound`: its directory is missing.
pub(crate) fn open_regular(
    full: &Path,
    mode: u32,
) -> std::io::Result<Option<(std::fs::File, std::fs::Metadata)>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(full);
    let f = match opened {
        Ok(f) => f,
        // A link (ELOOP), a directory (EISDIR), a FIFO nobody reads (ENXIO).
        Err(e)
            if e.raw_os_error()
                .is_some_and(|c| [libc::ELOOP, libc::EISDIR, libc::ENXIO].contains(&c)) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let meta = f.metadata()?;
    Ok(meta.is_file().then_some((f, meta)))
}

/// Writes `bytes` into a file [`open_regular`] opened, then gives it `mode` if it has
/// another (a new file's mode went through the umask; an old file kept its own).
pub(crate) fn fill(
    mut f: std::fs::File,
    meta: &std::fs::Metadata,
    bytes: &[u8],
    mode: u32,
) -> std::io::Result<()> {
    use std::io::Write as _;
    f.write_all(bytes)?;
    if meta.permissions().mode() & 0o777 != mode {
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// [`write_file`] for when something may be in the way: whatever is not a regular file is
/// removed first, and the parent directories made.
fn write_carefully(dir: &Path, full: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write as _;
    let existing = match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_file() => Some(m.permissions().mode() & 0o777),
        Ok(m) if m.is_dir() => {
            std::fs::remove_dir_all(full)?;
            None
        }
        Ok(_) => {
            std::fs::remove_file(full)?;
            None
        }
        Err(_) => None,
    };
    if existing.is_none()
        && let Some(parent) = full.parent()
    {
        make_dirs(dir, parent)?;
    }
    let mut f = std::fs::File::create(full)?;
    f.write_all(bytes)?;
    if existing != Some(mode) {
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Creates `parent` under `dir`, replacing any file or link in the way of a directory. A
/// slot in a known state holds no link (only specc's tools, which make none, wrote since a
/// checkout removed them all), so a parent that is already a directory is taken as is.
fn make_dirs(dir: &Path, parent: &Path) -> std::io::Result<()> {
    let Ok(rel) = parent.strip_prefix(dir) else {
        return Err(std::io::Error::other("a path outside the checkout"));
    };
    if std::fs::symlink_metadata(parent).is_ok_and(|m| m.is_dir()) {
        return Ok(());
    }
    let mut at = dir.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                std::fs::remove_file(&at)?;
                std::fs::create_dir(&at)?;
            }
            Err(_) => std::fs::create_dir(&at)?,
        }
    }
    Ok(())
}
