//! What `specc trace` reads besides the spec and the tree, all read-only and each optional
//! (a spec never built has none of it): the latest plan's work leaves and what they cover
//! (`.specc/plan-cache.json`), the tasks that landed (`.specc/state.db`), who last changed
//! each file of the tree (its git history: a commit with specc's `Specc-Id` trailer is a
//! landing) and whether it changed since, and the `[eval]` suite's references and its last
//! score.
//! design: driver.trace

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use specc_passes::references::{self, Method, RefKind};

use specc_vcs::git::read as git;

/// Whether a test passed, and why specc says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "why", rename_all = "snake_case")]
pub enum TestStatus {
    Passed(String),
    Failed(String),
    NotRun(String),
}

impl TestStatus {
    pub fn passed(&self) -> bool {
        matches!(self, TestStatus::Passed(_))
    }
}

/// Who last changed a file of the tree.
struct LastChange {
    /// The commit's `Specc-Id` trailer: specc landed it (its checks passed).
    by_specc: bool,
}

pub struct Evidence {
    /// Requirement id → the work leaves that cover it.
    covering: BTreeMap<String, Vec<String>>,
    /// Requirement id → why the plan waives it (`no_code`).
    waived: BTreeMap<String, String>,
    landed: HashSet<String>,
    /// Path in the tree → its last change; `None`: the tree is not a git repository.
    history: Option<HashMap<String, LastChange>>,
    /// Paths with changes git has not committed.
    dirty: HashSet<String>,
    /// Requirement id → `(path, line)` in the `[eval]` tests.
    eval_sites: BTreeMap<String, Vec<(String, u32)>>,
    /// The last eval point's `(passed, total)`.
    eval: Option<(u64, u64)>,
    /// The tree, as the walk prefixes the paths it shows.
    tree: PathBuf,
}

impl Evidence {
    pub fn gather(dir: &Path, config: Option<&Path>, tree: &Path) -> Evidence {
        let state = dir.join(".specc");
        let mut covering: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut waived = BTreeMap::new();
        if let Some(cache) = std::fs::read(state.join("plan-cache.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<specc_plan::Cache>(&b).ok())
        {
            for (task, child) in cache.latest_leaves() {
                for r in &child.covers_requirements {
                    covering.entry(r.clone()).or_default().push(task.clone());
                }
            }
            waived = cache.latest_waivers();
        }
        let db = state.join("state.db");
        let landed = if db.is_file() {
            specc_state::read_landed(&db)
                .map(|m| m.into_keys().collect())
                .unwrap_or_default()
        } else {
            HashSet::new()
        };
        let cfg = crate::config::load_file(config, dir).ok();
        let (eval_sites, eval) = match cfg.as_ref().and_then(|c| c.eval.as_ref()) {
            Some(e) => (eval_references(&e.tests), last_eval(&db)),
            None => (BTreeMap::new(), None),
        };
        // Where the tree sits in its repository, if it is in one.
        let prefix = git(tree, &["rev-parse", "--show-prefix"]).map(|p| p.trim().to_owned());
        Evidence {
            covering,
            waived,
            landed,
            history: prefix.as_deref().and_then(|p| history(tree, p)),
            dirty: prefix
                .as_deref()
                .map(|p| dirty(tree, p))
                .unwrap_or_default(),
            eval_sites,
            eval,
            tree: tree.to_owned(),
        }
    }

    pub fn covering(&self, requirement: &str) -> Vec<String> {
        self.covering.get(requirement).cloned().unwrap_or_default()
    }

    /// Why the plan waives `requirement` (`no_code`), if it does.
    pub fn waived(&self, requirement: &str) -> Option<String> {
        self.waived.get(requirement).cloned()
    }

    pub fn landed(&self, task: &str) -> bool {
        self.landed.contains(task)
    }

    /// A test file of the tree (`path` as the walk shows it, under the tree): passed when
    /// specc landed its last change and nobody changed it since.
    pub fn tree_test(&self, path: &str) -> TestStatus {
        let path = Path::new(path)
            .strip_prefix(&self.tree)
            .ok()
            .and_then(Path::to_str)
            .unwrap_or(path);
        let Some(history) = &self.history else {
            return TestStatus::NotRun(
                "the tree is not a git repository: specc cannot tell who wrote it".to_owned(),
            );
        };
        if self.dirty.contains(path) {
            return TestStatus::NotRun("changed since it was last committed".to_owned());
        }
        match history.get(path) {
            Some(c) if c.by_specc => TestStatus::Passed(
                "the task that last changed it landed with its checks passing".to_owned(),
            ),
            Some(_) => TestStatus::NotRun(
                "last changed outside specc, so no check of specc's ran it".to_owned(),
            ),
            None => TestStatus::NotRun("never committed".to_owned()),
        }
    }

    pub fn eval_sites(&self, requirement: &str) -> Vec<(String, u32)> {
        self.eval_sites
            .get(requirement)
            .cloned()
            .unwrap_or_default()
    }

    /// A test of the `[eval]` suite: as the suite did in the last eval.
    pub fn eval_status(&self) -> TestStatus {
        match self.eval {
            Some((passed, total)) if total > 0 && passed == total => {
                TestStatus::Passed(format!("the last eval passed {passed} of {total}"))
            }
            Some((passed, total)) => {
                TestStatus::Failed(format!("the last eval passed {passed} of {total}"))
            }
            None => TestStatus::NotRun("no eval has run".to_owned()),
        }
    }
}

/// The `req:` references in the files under `dir` (the eval suite), by requirement id.
fn eval_references(dir: &Path) -> BTreeMap<String, Vec<(String, u32)>> {
    let mut out: BTreeMap<String, Vec<(String, u32)>> = BTreeMap::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let (Some(method), Ok(text)) =
                (Method::for_file_name(&name), std::fs::read_to_string(&path))
            else {
                continue;
            };
            for r in references::extract(specc_ir::FileId(0), method, &text)
                .into_iter()
                .filter(|r| r.kind == RefKind::Requirement)
            {
                let line = text[..r.span.start as usize].matches('\n').count() as u32 + 1;
                out.entry(r.id)
                    .or_default()
                    .push((path.display().to_string(), line));
            }
        }
    }
    out
}

/// The last eval point of the latest run that has one.
fn last_eval(db: &Path) -> Option<(u64, u64)> {
    if !db.is_file() {
        return None;
    }
    let series = specc_runtime::eval::series::read(db).ok()?;
    let (_, points) = series.into_iter().last()?;
    let p = points.last()?;
    Some((p.passed?, p.total?))
}

/// Each committed file under `tree` (the directory at `prefix` of its git repository) with
/// its last change, by its path relative to `tree`.
fn history(tree: &Path, prefix: &str) -> Option<HashMap<String, LastChange>> {
    // Newest first, NUL-separated (`-z`, so no path is quoted): each commit starts with a
    // marker and whether it has specc's trailer, then its files, relative to the top.
    let log = git(
        tree,
        &[
            "log",
            "-z",
            "--format=%x01%(trailers:key=Specc-Id,valueonly,separator=%x2C)",
            "--name-only",
            "--no-renames",
            "--",
            ".",
        ],
    )?;
    let mut out = HashMap::new();
    let mut by_specc = false;
    for field in log.split('\0') {
        let field = field.trim_start_matches('\n');
        if let Some(trailer) = field.strip_prefix('\u{1}') {
            // The header and the commit's first file share a field: `\x01TRAILER\n\nPATH`.
            let (trailer, first) = trailer.split_once('\n').unwrap_or((trailer, ""));
            by_specc = !trailer.trim().is_empty();
            let first = first.trim_start_matches('\n');
            if let Some(rel) = first.strip_prefix(prefix).filter(|r| !r.is_empty()) {
                out.entry(rel.to_owned()).or_insert(LastChange { by_specc });
            }
        } else if let Some(rel) = field.strip_prefix(prefix).filter(|r| !r.is_empty()) {
            out.entry(rel.to_owned()).or_insert(LastChange { by_specc });
        }
    }
    Some(out)
}

/// Paths under `tree` (the directory at `prefix` of its repository), relative to it, that
/// git sees changed or untracked.
fn dirty(tree: &Path, prefix: &str) -> HashSet<String> {
    git(
        tree,
        &["status", "--porcelain", "-z", "--no-renames", "--", "."],
    )
    .map(|s| {
        s.split('\0')
            .filter_map(|entry| entry.get(3..))
            .filter_map(|p| p.strip_prefix(prefix))
            .map(str::to_owned)
            .collect()
    })
    .unwrap_or_default()
}
