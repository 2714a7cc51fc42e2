//! The one way specc starts git in a person's repository (see the module's introduction).

use std::path::Path;

/// `git -C dir args`, run and waited for.
pub(crate) fn output(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
}

/// The standard output of `git -C dir args`, if git ran and succeeded. Read-only commands
/// only: the commands that write have typed errors (`out_dir`).
pub fn read(dir: &Path, args: &[&str]) -> Option<String> {
    let o = output(dir, args).ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}
