//! Helpers the VCS's test binaries share.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` and returns its stdout; a failure fails the test with git's stderr.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}
