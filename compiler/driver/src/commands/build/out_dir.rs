//! `out/`: the built code as a real git repository. specc owns it: before a build writes
//! there, it must hold exactly what specc's last export left (no modified or untracked
//! files, `main` made by specc), or the build refuses and overwrites nothing. After the
//! export (incremental `git fast-import` of the VCS head), the working tree is checked out.
//! design: driver.build

use std::path::Path;
use std::process::Command;

/// Why `out/` may not be written.
pub(super) fn check_clean(out: &Path) -> Result<(), String> {
    if !out.exists() {
        return Ok(());
    }
    if !out.join(".git").exists() {
        let empty = std::fs::read_dir(out)
            .map_err(|e| format!("{}: {e}", out.display()))?
            .next()
            .is_none();
        return if empty {
            Ok(())
        } else {
            Err(format!(
                "{} exists and is not a repository specc exported",
                out.display()
            ))
        };
    }
    // A git that fails to answer is a refusal, never "clean".
    let status = git(out, &["status", "--porcelain", "--untracked-files=all"])?
        .ok_or_else(|| format!("git cannot read the status of {}", out.display()))?;
    if !status.trim().is_empty() {
        let files: Vec<&str> = status.lines().take(5).collect();
        return Err(format!(
            "{} has changes made outside specc:\n{}",
            out.display(),
            files.join("\n")
        ));
    }
    let has_main = git(out, &["rev-parse", "--verify", "-q", "refs/heads/main"])?.is_some();
    if !has_main {
        return Ok(()); // initialised, nothing committed yet: the export makes `main`
    }
    let trailer = git(
        out,
        &[
            "log",
            "-1",
            "--format=%(trailers:key=Specc-Id,valueonly)",
            "refs/heads/main",
        ],
    )?
    .ok_or_else(|| format!("git cannot read `main` in {}", out.display()))?;
    if trailer.trim().is_empty() {
        return Err(format!(
            "`main` in {} has commits that specc did not make",
            out.display()
        ));
    }
    Ok(())
}

/// Checks out `main` into the working tree after an export.
pub(super) fn check_out(out: &Path) -> Result<(), String> {
    git(out, &["checkout", "-q", "-f", "main"])?
        .map(drop)
        .ok_or_else(|| format!("git could not check out main in {}", out.display()))
}

/// Runs git in `dir`: its stdout when it succeeds, `None` when it fails.
fn git(dir: &Path, args: &[&str]) -> Result<Option<String>, String> {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    Ok(o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned()))
}
