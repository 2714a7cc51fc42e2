//! Reading a git repository the build exported (or any tree in one): `git -C DIR ARGS`,
//! its standard output when it succeeded. Read-only commands only; `out_dir.rs` owns the
//! commands that write, with their typed errors.

use std::path::Path;

/// The standard output of `git -C dir args`, if git ran and succeeded.
pub(crate) fn read(dir: &Path, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}
