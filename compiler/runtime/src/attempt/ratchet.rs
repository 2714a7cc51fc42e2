//! Checks a worker cannot weaken (after `done`, once the checks passed). Every file of the
//! base that the attempt changed or deleted is compared with the base: assertions removed
//! from a test file, a test turned off, a command silenced are evidence outright; tests
//! removed are evidence a test run can refute. When tests were removed (and the task was not
//! told they go), or a file a check runs or test configuration changed, the checks run once
//! more on the base in the same checkout (the attempt's changes set aside, then put back and
//! verified) and each run's score is compared: fewer passed, more skipped, a passing test
//! skipped or gone. When both runs were scored, the run decides about removals. The
//! evidence goes back to the worker as a failed check. The checks' scripts are specc's own
//! copy (the spec's blocks, the plan's commands), never a file of the checkout.
//! design: runtime.ratchet

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use specc_passes::eval::{Format, score};
use specc_passes::ratchet::{
    allowed, configures_tests, file_weakenings, holds_tests, run_weakenings, runs_file,
};

use super::acceptance::{self, Check, CheckResult};
use crate::checkouts::{reserved, walk_files};
use crate::tools::Toolbox;

/// The most pieces of evidence shown; the rest are counted.
const MAX_EVIDENCE: usize = 20;

/// Directories whose files are caches a run makes, never set aside or compared.
const CACHES: &[&str] = &[
    "node_modules",
    "__pycache__",
    ".venv",
    "venv",
    ".pytest_cache",
    ".mypy_cache",
    "dist",
    "build",
];

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
    let changed = changed_files(tools, base);
    if changed.is_empty() {
        return Vec::new();
    }
    let run_by = files_checks_run(checks, base);
    let (mut removals, mut firm, mut run_needed) = (Vec::new(), Vec::new(), false);
    for (path, before, now) in &changed {
        let checked = run_by.contains(path.as_str());
        run_needed |= checked || configures_tests(path);
        let Some((before, _)) = before else { continue };
        let before = String::from_utf8_lossy(before);
        let after = now
            .as_ref()
            .map(|(b, _)| String::from_utf8_lossy(b).into_owned());
        if !checked && !holds_tests(path, &before) {
            continue;
        }
        let found = file_weakenings(path, &before, after.as_deref(), checked);
        let unexplained: Vec<String> = found
            .removals
            .into_iter()
            .filter(|e| !allowed(e, allowance))
            .collect();
        run_needed |= !unexplained.is_empty();
        removals.extend(unexplained);
        firm.extend(found.firm);
    }
    if run_needed && results.iter().all(|r| r.result.success()) {
        match on_base(tools, checks, results, &changed, round, left / 2).await {
            // Both runs scored test by test: the run is the ground truth about removed
            // tests. Scored by totals only, it cannot see a test swapped for another: what
            // it found joins what the files showed.
            Ok(Some((run, by_name))) => {
                let run = run.into_iter().filter(|e| !allowed(e, allowance));
                if by_name {
                    removals = run.collect();
                } else {
                    removals.extend(run);
                }
            }
            Ok(None) => {}
            Err(e) => firm.push(e),
        }
    }
    let mut evidence: Vec<String> = firm.into_iter().chain(removals).collect();
    if evidence.len() > MAX_EVIDENCE {
        let more = evidence.len() - MAX_EVIDENCE;
        evidence.truncate(MAX_EVIDENCE);
        evidence.push(format!("… and {more} more"));
    }
    evidence
}

/// Every path the attempt changed against `base` (outside caches and specc's own state).
fn changed_files(tools: &Toolbox, base: &[specc_vcs::FileEntry]) -> Vec<Changed> {
    let mut changed: Vec<Changed> = Vec::new();
    let in_base: HashSet<&str> = base.iter().map(|f| f.path.as_str()).collect();
    for f in base {
        let now = read(&tools.root, &f.path);
        if !now
            .as_ref()
            .is_some_and(|(b, x)| *b == f.bytes && *x == f.executable)
        {
            changed.push((f.path.clone(), Some((f.bytes.clone(), f.executable)), now));
        }
    }
    let mut files = Vec::new();
    walk_files(&tools.root, &mut files);
    for path in files {
        if !in_base.contains(path.as_str()) && !reserved(&path) && !cached(&path) {
            let now = read(&tools.root, &path);
            changed.push((path, None, now));
        }
    }
    changed
}

/// `checks` run on the attempt's base in its checkout (its changes set aside, then put
/// back and verified, whatever the run made removed): their results, or `None` when the
/// base's files could not be read or the checkout could not be set aside or put back.
pub(super) async fn checks_at_base(
    tools: &Toolbox,
    checks: &[Check],
    round: u32,
    left: Duration,
) -> Option<Vec<CheckResult>> {
    let base = tools.base.files().await.ok()?;
    let changed = changed_files(tools, base);
    run_at_base(tools, checks, &changed, round, left)
        .await
        .ok()
        .flatten()
        .map(|r| r.results)
}

/// Whether `path` lies in a cache directory a run makes.
fn cached(path: &str) -> bool {
    path.split('/').any(|p| CACHES.contains(&p))
}

/// The files of the base a check runs: those its script names, and those such a file names
/// in turn (`sh check.sh` runs `check.sh`, which runs `run_tests.py`), to a depth of three.
fn files_checks_run(checks: &[Check], base: &[specc_vcs::FileEntry]) -> HashSet<String> {
    let mut found = HashSet::new();
    let mut texts: Vec<String> = checks.iter().map(|c| c.script.clone()).collect();
    for _ in 0..3 {
        let mut next = Vec::new();
        for f in base {
            if !found.contains(&f.path) && texts.iter().any(|t| runs_file(t, &f.path)) {
                found.insert(f.path.clone());
                next.push(String::from_utf8_lossy(&f.bytes).into_owned());
            }
        }
        if next.is_empty() {
            break;
        }
        texts = next;
    }
    found
}

/// The checks run on the base, within `left` (the attempt's changes set aside, then put
/// back and verified, and whatever the run made removed), each score compared with the
/// attempt's: `Ok(Some((evidence, by_name)))` when every run could be scored both times
/// (`by_name`: each run named its tests), `Ok(None)` when some could not, `Err` when the
/// checkout could not be put back as it was.
async fn on_base(
    tools: &Toolbox,
    checks: &[Check],
    results: &[CheckResult],
    changed: &[Changed],
    round: u32,
    left: Duration,
) -> Result<Option<(Vec<String>, bool)>, String> {
    let Some(at_base) = run_at_base(tools, checks, changed, round, left).await? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let mut by_name = true;
    for (now, then) in results.iter().zip(&at_base.results) {
        let scores = (
            score(Format::Auto, &output(&now.result)),
            score(Format::Auto, &output(&then.result)),
        );
        let (Some(now_score), Some(base_score)) = scores else {
            return Ok(None);
        };
        by_name &= !base_score.tests.is_empty() && !now_score.tests.is_empty();
        out.extend(run_weakenings(&now.name, &base_score, &now_score));
    }
    Ok(Some((out, by_name)))
}

/// Runs `checks` with the `changed` files set back to the base, then puts them back:
/// `Ok(None)` when they could not be set aside, `Err` when they could not be put back.
async fn run_at_base(
    tools: &Toolbox,
    checks: &[Check],
    changed: &[Changed],
    round: u32,
    left: Duration,
) -> Result<Option<acceptance::Report>, String> {
    let root = &tools.root;
    let mut before_run = Vec::new();
    walk_files(root, &mut before_run);
    let swapped = changed.iter().all(|(path, base, _)| {
        put(root, path, base.as_ref().map(|(b, x)| (b.as_slice(), *x))).is_ok()
    });
    let at_base = match swapped {
        true => Some(acceptance::run(tools, checks, 1000 + round, left).await),
        false => None,
    };
    // Put back: the attempt's files, and nothing the run on the base made.
    let mut lost = Vec::new();
    for (path, _, now) in changed {
        let back = now.as_ref().map(|(b, x)| (b.as_slice(), *x));
        if put(root, path, back).is_err() || read(root, path) != *now {
            lost.push(path.clone());
        }
    }
    let kept: HashSet<String> = before_run.into_iter().collect();
    let mut after_run = Vec::new();
    walk_files(root, &mut after_run);
    for path in after_run
        .iter()
        .filter(|p| !kept.contains(*p) && !reserved(p))
    {
        let _ = put(root, path, None);
    }
    if !lost.is_empty() {
        return Err(format!(
            "specc could not put back {} after running the checks on the base: write {} again",
            lost.join(", "),
            if lost.len() == 1 { "it" } else { "them" }
        ));
    }
    Ok(at_base)
}

/// A run's whole output: its log when it holds more than the capture kept.
pub(super) fn output(r: &specc_sandbox::CommandResult) -> String {
    let captured = format!("{}\n{}", r.stdout.text(), r.stderr.text());
    match std::fs::read_to_string(&r.log) {
        Ok(log) if log.len() > captured.len() => log,
        _ => captured,
    }
}

/// Whether `rel` under `root` is a link, or a directory on the way to it is: such a path is
/// neither read nor written here (it could lead outside the checkout).
fn through_link(root: &Path, rel: &str) -> bool {
    let mut at = root.to_path_buf();
    rel.split('/').any(|p| {
        at.push(p);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// The file at `rel` under `root` and whether it is executable; `None` when absent.
fn read(root: &Path, rel: &str) -> Option<(Vec<u8>, bool)> {
    use std::os::unix::fs::PermissionsExt as _;
    if through_link(root, rel) {
        return None;
    }
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path)
        .ok()
        .filter(|m| m.is_file())?;
    let bytes = std::fs::read(&path).ok()?;
    Some((bytes, meta.permissions().mode() & 0o111 != 0))
}

/// Makes `rel` hold `content` (with its executable bit), or not exist. A link in the way,
/// at the path itself, is removed as a link; a link on the way is refused.
fn put(root: &Path, rel: &str, content: Option<(&[u8], bool)>) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
    let path = root.join(rel);
    let (dirs, _) = rel.rsplit_once('/').unwrap_or(("", rel));
    if !dirs.is_empty() && through_link(root, dirs) {
        return Err(std::io::Error::other("a directory on the way is a link"));
    }
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(&path)?,
        Ok(m) if m.is_dir() => return Err(std::io::Error::other("a directory is in the way")),
        _ => {}
    }
    let Some((bytes, executable)) = content else {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mode = if executable { 0o755 } else { 0o644 };
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&path)?;
    f.write_all(bytes)?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::{put, read};

    #[test]
    fn put_never_writes_through_a_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let outside = tempfile::tempdir().expect("outside");
        std::fs::write(outside.path().join("victim"), "keep\n").expect("victim");
        std::os::unix::fs::symlink(outside.path().join("victim"), dir.path().join("t.py"))
            .expect("link");
        put(dir.path(), "t.py", Some((b"base\n", false))).expect("put");
        assert_eq!(
            std::fs::read_to_string(outside.path().join("victim")).expect("read"),
            "keep\n"
        );
        assert_eq!(read(dir.path(), "t.py"), Some((b"base\n".to_vec(), false)));
        std::os::unix::fs::symlink(outside.path(), dir.path().join("tests")).expect("dir link");
        assert!(put(dir.path(), "tests/victim", Some((b"x", false))).is_err());
        assert_eq!(read(dir.path(), "tests/victim"), None);
    }
}
