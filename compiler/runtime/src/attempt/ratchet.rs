//! Checks a worker cannot weaken (after `done`, once the checks passed): every file of the
//! base that the attempt changed or deleted is compared with the base — a test file that
//! lost tests or assertions, gained a skip marker or `|| true`, or a file a check runs —
//! and, when such a file changed, the checks run once more on the base in the same
//! checkout (the attempt's changes set aside, then put back) and each test run's score is
//! compared: fewer passed, a passing test skipped or gone. The evidence goes back to the
//! worker as a failed check, unless its instructions or decisions say that test goes. The
//! checks' scripts are specc's own copy (the spec's blocks, the plan's commands), never a
//! file of the checkout.
//! design: runtime.ratchet

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use specc_passes::eval::{Format, score};
use specc_passes::ratchet::{allowed, file_weakenings, holds_tests, run_weakenings, runs_file};

use super::acceptance::{self, Check, CheckResult};
use crate::checkouts::{reserved, walk_files};
use crate::tools::Toolbox;

/// A path the attempt changed: its content and mode at the base and now (`None`: absent).
type Changed = (String, Option<(Vec<u8>, bool)>, Option<(Vec<u8>, bool)>);

/// The evidence that the attempt weakened its checks, not allowed by `allowance` (its
/// instructions and decisions); empty when it did not.
pub(crate) async fn weakenings(
    tools: &Toolbox,
    checks: &[Check],
    results: &[CheckResult],
    allowance: &str,
    round: u32,
    left: Duration,
) -> Vec<String> {
    if checks.is_empty() {
        return Vec::new(); // nothing to weaken
    }
    let Ok(base) = tools.base.files().await else {
        return Vec::new();
    };
    let run_by = files_checks_run(checks, base);
    let mut evidence = Vec::new();
    // Whether a test or check file changed whose change the task was not told of.
    let mut unexplained = false;
    // Paths whose content differs from the base: (path, the base's bytes, the worker's).
    let mut changed: Vec<Changed> = Vec::new();
    let mut suspicious = false;
    let in_base: HashMap<&str, &specc_vcs::FileEntry> =
        base.iter().map(|f| (f.path.as_str(), f)).collect();
    for f in base {
        let now = read(&tools.root, &f.path);
        if now
            .as_ref()
            .is_some_and(|(b, x)| *b == f.bytes && *x == f.executable)
        {
            continue;
        }
        let before = String::from_utf8_lossy(&f.bytes);
        let after = now
            .as_ref()
            .map(|(b, _)| String::from_utf8_lossy(b).into_owned());
        let check = run_by.get(f.path.as_str()).copied();
        let bears = check.is_some() || holds_tests(&f.path, &before);
        suspicious |= bears;
        let found = file_weakenings(&f.path, &before, after.as_deref(), check);
        unexplained |= bears && (found.is_empty() || found.iter().any(|e| !allowed(e, allowance)));
        evidence.extend(found);
        changed.push((f.path.clone(), Some((f.bytes.clone(), f.executable)), now));
    }
    // A run that lost only what the task was told goes is what it was told to do.
    if suspicious && unexplained && results.iter().all(|r| r.result.success()) {
        let mut files = Vec::new();
        walk_files(&tools.root, &mut files);
        for path in files {
            if !in_base.contains_key(path.as_str()) && !reserved(&path) {
                let now = read(&tools.root, &path);
                changed.push((path, None, now));
            }
        }
        evidence.extend(on_base(tools, checks, results, &changed, round, left).await);
    }
    evidence.retain(|e| !allowed(e, allowance));
    evidence
}

/// The files of the base a check runs, with the check's name: those its script names, and
/// those such a file names in turn (`sh check.sh` runs `check.sh`, which runs
/// `run_tests.py`), to a depth of three.
fn files_checks_run<'c>(
    checks: &'c [Check],
    base: &[specc_vcs::FileEntry],
) -> HashMap<String, &'c str> {
    let mut found: HashMap<String, &str> = HashMap::new();
    for c in checks {
        let mut texts = vec![c.script.clone()];
        for _ in 0..3 {
            let mut next = Vec::new();
            for f in base {
                if !found.contains_key(&f.path) && texts.iter().any(|t| runs_file(t, &f.path)) {
                    found.insert(f.path.clone(), c.name.as_str());
                    next.push(String::from_utf8_lossy(&f.bytes).into_owned());
                }
            }
            if next.is_empty() {
                break;
            }
            texts = next;
        }
    }
    found
}

/// The checks run on the base (the attempt's changes set aside in the checkout, then put
/// back whatever happens), each score compared with the attempt's.
async fn on_base(
    tools: &Toolbox,
    checks: &[Check],
    results: &[CheckResult],
    changed: &[Changed],
    round: u32,
    left: Duration,
) -> Vec<String> {
    let root = &tools.root;
    for (path, base, _) in changed {
        let _ = put(root, path, base.as_ref().map(|(b, x)| (b.as_slice(), *x)));
    }
    let at_base = acceptance::run(tools, checks, 1000 + round, left).await;
    for (path, _, now) in changed {
        let _ = put(root, path, now.as_ref().map(|(b, x)| (b.as_slice(), *x)));
    }
    let mut out = Vec::new();
    for (now, then) in results.iter().zip(&at_base.results) {
        if let (Some(now_score), Some(base_score)) = (
            score(Format::Auto, &output(&now.result)),
            score(Format::Auto, &output(&then.result)),
        ) {
            out.extend(run_weakenings(&now.name, &base_score, &now_score));
        }
    }
    out
}

/// A run's whole output: its log when it holds more than the capture kept.
fn output(r: &specc_sandbox::CommandResult) -> String {
    let captured = format!("{}\n{}", r.stdout.text(), r.stderr.text());
    match std::fs::read_to_string(&r.log) {
        Ok(log) if log.len() > captured.len() => log,
        _ => captured,
    }
}

/// The file at `rel` under `root` and whether it is executable; `None` when absent.
fn read(root: &Path, rel: &str) -> Option<(Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path)
        .ok()
        .filter(|m| m.is_file())?;
    let bytes = std::fs::read(&path).ok()?;
    Some((bytes, meta.permissions().mode() & 0o111 != 0))
}

/// Whether a directory on the way to `rel` under `root` is a symbolic link: such a path is
/// neither read nor written here (it could lead outside the checkout).
fn through_link(root: &Path, rel: &str) -> bool {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    parts[..parts.len().saturating_sub(1)].iter().any(|p| {
        at.push(p);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// Makes `rel` hold `content` (with its executable bit), or not exist.
fn put(root: &Path, rel: &str, content: Option<(&[u8], bool)>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    if through_link(root, rel) {
        return Err(std::io::Error::other("a directory on the way is a link"));
    }
    let path = root.join(rel);
    match content {
        None => match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        Some((bytes, executable)) => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, bytes)?;
            let mode = if executable { 0o755 } else { 0o644 };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
        }
    }
}
