//! The requirement references a task must land: after `done`, every requirement the task
//! covers must be named by a `req: <id>` comment in some file of its write scope (the code
//! that implements it, or the test that tests it), found by the scan `specc check` uses. A
//! task whose scope holds no file specc can read comments in (data, prose) is exempt.
//! design: runtime.requirement-references

use std::collections::BTreeSet;
use std::path::Path;

use specc_passes::references::{self, Method, RefKind};

use crate::checkouts::{Scope, walk_files};

/// Files larger than this are not read for references (generated or vendored data).
const MAX_BYTES: u64 = 4 << 20;

/// The requirements a task covers that no file of its write scope names.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Unreferenced {
    /// Requirement ids, in the task's order.
    pub missing: Vec<String>,
    /// How many files of the scope were read.
    pub files: usize,
}

impl Unreferenced {
    /// What the worker is told.
    pub(crate) fn failure(&self) -> String {
        let ids: Vec<String> = self.missing.iter().map(|id| format!("`{id}`")).collect();
        let example = self.missing.first().map_or("R-1", String::as_str);
        format!(
            "check `requirement references`: this task covers {} but no file in its write scope \
             names {}: add a comment `req: {example}` beside the code that implements it (and \
             the test that tests it), one per requirement (`req: R-1, R-2` names several)",
            ids.join(", "),
            if self.missing.len() == 1 {
                "it"
            } else {
                "them"
            }
        )
    }
}

/// The requirements of `covers` that no file under `root` in `scope` references; `None`
/// when every one is referenced, when the task covers none, or when the scope holds no
/// file whose comments specc reads.
pub(crate) fn unreferenced(root: &Path, scope: &Scope, covers: &[String]) -> Option<Unreferenced> {
    if covers.is_empty() {
        return None;
    }
    let mut files = Vec::new();
    walk_files(root, &mut files);
    let mut found: BTreeSet<String> = BTreeSet::new();
    let mut read = 0;
    for path in files.iter().filter(|p| scope.allows(p)) {
        let name = path.rsplit('/').next().unwrap_or(path);
        let Some(method) = Method::for_file_name(name) else {
            continue;
        };
        let full = root.join(path);
        if std::fs::metadata(&full).map_or(true, |m| m.len() > MAX_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&full) else {
            continue;
        };
        read += 1;
        found.extend(
            references::extract(specc_ir::FileId(0), method, &text)
                .into_iter()
                .filter(|r| r.kind == RefKind::Requirement)
                .map(|r| r.id),
        );
    }
    let missing: Vec<String> = covers
        .iter()
        .filter(|id| !found.contains(*id))
        .cloned()
        .collect();
    (read > 0 && !missing.is_empty()).then_some(Unreferenced {
        missing,
        files: read,
    })
}
