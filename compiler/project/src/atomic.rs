//! Files replaced whole or not at all: a temporary sibling, synced, renamed over the old
//! file, the directory synced. A crash leaves the old file or the new one, never half of one.

use std::io::Write as _;
use std::path::Path;

/// Replaces `path` (in directory `dir`) with `bytes`.
pub fn write(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    std::fs::File::open(dir)?.sync_all()
}
