//! Megafile splits. When the VCS refuses a commit because a file would pass the line budget,
//! or a worker flags a file with `flag_big_file`, the VCS stops the file from growing and the
//! scheduler adds one split task for it: a worker with no feature work there moves the
//! file's code into modules beside it, keeping behaviour. Its acceptance is the checks of the
//! tasks that landed the file, every file of the split under the budget, and every
//! `design:` reference the file held still present. The tasks that were refused wait for the
//! split and run again on top of it.
//! design: runtime.megafile

use regex::Regex;
use specc_ir::plan::{ChildKind, TaskNode};

use crate::attempt::{Check, WorkOrder};
use crate::checkouts::module_dir;

/// What ends the reason a blocked attempt is journaled with, after the file's path.
pub(crate) const BLOCKED_SUFFIX: &str = " is over the line budget";

/// A file that needs a split: over the budget, or flagged.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SplitNeed {
    pub path: String,
    /// Its lines at the head.
    pub lines: Option<usize>,
    /// The `design:` ids it references at the head.
    pub refs: Vec<String>,
}

/// What a split of `path` needs to know of the head; `None` if the head has no such file
/// (a new file over the budget is the writer's to make smaller, not a split's).
pub(crate) async fn need(repo: &specc_vcs::Repo, path: &str) -> Option<SplitNeed> {
    let (_, file) = repo.read_head(path).await.ok()?;
    let text = String::from_utf8_lossy(&file?.bytes).into_owned();
    Some(SplitNeed {
        path: path.to_owned(),
        lines: Some(text.lines().count()),
        refs: design_refs(&text),
    })
}

/// The `design:` ids a file's text references, sorted, each once.
pub(super) fn design_refs(text: &str) -> Vec<String> {
    let Ok(re) = Regex::new(r"design:\s*([A-Za-z0-9_][A-Za-z0-9_.\-]*[A-Za-z0-9_])") else {
        return Vec::new();
    };
    let mut ids: Vec<String> = re
        .captures_iter(text)
        .filter_map(|c| c.get(1).map(|m| m.as_str().to_owned()))
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// The task id of `path`'s split.
pub(super) fn split_id(path: &str) -> String {
    let slug: String = path
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("split-{slug}")
}

/// The split task for `path`, over a line budget of `budget`, which must keep `refs` and
/// pass `checks` (those of the tasks that landed the file).
pub(crate) fn split_order(
    path: &str,
    lines: Option<usize>,
    budget: usize,
    refs: &[String],
    checks: Vec<Check>,
) -> WorkOrder {
    let modules = module_dir(path);
    // Paths the VCS accepts hold no quote or backslash: single quotes are safe around them.
    let mut all = checks;
    all.push(Check::plain(
        format!("{path} is under {budget} lines"),
        format!("test ! -e '{path}' || test \"$(wc -l < '{path}')\" -le {budget}"),
    ));
    all.push(Check::plain(
        format!("every file under {modules}/ is under {budget} lines"),
        format!(
            "for f in $(find '{modules}' -type f 2>/dev/null); do \
             test \"$(wc -l < \"$f\")\" -le {budget} || {{ echo \"$f is over {budget} lines\"; exit 1; }}; done"
        ),
    ));
    for id in refs {
        all.push(Check::plain(
            format!("the `design: {id}` reference is kept"),
            format!("grep -rqF 'design: {id}' '{path}' '{modules}' 2>/dev/null"),
        ));
    }
    let size = lines.map_or_else(String::new, |n| format!(" has {n} lines and"));
    let instructions = format!(
        "`{path}`{size} must stay under the line budget of {budget} lines, and commits that \
         grow it are refused until it is split. Split it into modules under `{modules}/`, \
         keeping `{path}` as the module that declares or re-exports them, so that every file \
         is under {budget} lines. Keep behaviour exactly: move code, do not change it, and \
         keep every `design:` reference with the code it annotates. Add no feature."
    );
    let mut h = blake3::Hasher::new();
    h.update(path.as_bytes());
    for id in refs {
        h.update(id.as_bytes());
    }
    let task = TaskNode {
        id: split_id(path),
        parent: Some(String::new()),
        kind: ChildKind::Work,
        role: "worker".to_owned(),
        model: String::new(),
        title: format!("split {path}"),
        instructions,
        decisions_to_read: refs.to_vec(),
        write_scope: vec![path.to_owned(), format!("{modules}/**")],
        read_scope: Vec::new(),
        acceptance: Vec::new(),
        dependencies: Vec::new(),
        covers_requirements: Vec::new(),
        covers_nodes: Vec::new(),
        budget: 0,
        fingerprint: h.finalize().to_hex()[..16].to_owned(),
    };
    let mut o = WorkOrder {
        task,
        fingerprint: String::new(),
        decisions: Vec::new(),
        requirements: Vec::new(),
        checks: all,
        parent: None,
        spec: Vec::new(),
        other_decisions: Vec::new(),
        origin: Some(format!("split of {path}")),
    };
    o.fingerprint = crate::attempt::fingerprint(&o);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_ids_and_module_directories() {
        let text = "// design: store.format\nfn x() {} // design: store.format\n# design: a-b.c\n";
        assert_eq!(design_refs(text), ["a-b.c", "store.format"]);
        assert_eq!(split_id("src/store.rs"), "split-src-store-rs");
        assert_eq!(module_dir("src/store.rs"), "src/store");
        assert_eq!(module_dir("big.txt"), "big");
        let o = split_order(
            "src/store.rs",
            Some(700),
            600,
            &["store.format".into()],
            Vec::new(),
        );
        assert_eq!(o.task.write_scope, ["src/store.rs", "src/store/**"]);
        assert_eq!(o.checks.len(), 3);
        assert!(o.checks[2].script.contains("design: store.format"));
    }
}
