//! Reading the store without a checkout: a file at any commit, every file of a commit, and
//! the paths two trees differ in (what a git export writes per commit).

use std::sync::Arc;

use crate::object::{Commit, Entry, ObjectId, decode_tree};
use crate::state::State;

/// A tree's entries in name order: as stored (trees are written sorted), else sorted here.
fn sorted(entries: Arc<Vec<(String, Entry)>>) -> Arc<Vec<(String, Entry)>> {
    if entries.is_sorted_by(|x, y| x.0 < y.0) {
        return entries;
    }
    let mut v = entries.as_ref().clone();
    v.sort_by(|x, y| x.0.cmp(&y.0));
    v.dedup_by(|x, y| x.0 == y.0);
    Arc::new(v)
}

pub(crate) fn commit(state: &State, id: ObjectId) -> Option<Commit> {
    Commit::decode(&state.object(id)?)
}

/// The content and mode of `path` at a commit: `None` if the commit is unknown,
/// `Some(None)` if it has no file there.
pub(crate) fn entry_at(
    state: &State,
    commit_id: ObjectId,
    path: &str,
) -> Option<Option<(Vec<u8>, bool)>> {
    let mut tree = commit(state, commit_id)?.tree;
    let parts: Vec<&str> = path.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        // Through the tree cache: a task's landing reads its paths at its base.
        let entries = state.tree(tree)?;
        let Some(&(_, entry)) = entries.iter().find(|(n, _)| n == part) else {
            return Some(None);
        };
        match (entry.as_file(), entry.as_tree(), i + 1 == parts.len()) {
            (Some((id, executable)), _, true) => {
                return state.blob(id).map(|b| Some((b.to_vec(), executable)));
            }
            (_, Some(id), false) => tree = id,
            _ => return Some(None),
        }
    }
    Some(None)
}

/// What moving a checkout from commit `from` to commit `to` writes: each path that
/// differs, with `to`'s content and mode (`None`: remove it). Equal subtrees are skipped,
/// so it costs what changed, not the tree.
pub(crate) fn changes(state: &State, from: ObjectId, to: ObjectId) -> Option<Changes> {
    let (a, b) = (commit(state, from)?.tree, commit(state, to)?.tree);
    diff(state, Some(a), b)?
        .into_iter()
        .map(|(path, file)| match file {
            // Through the blob cache: every checkout slot asks for each file that lands.
            Some((id, executable)) => state
                .blob(id)
                .map(|b| (path, Some((b.to_vec(), executable)))),
            None => Some((path, None)),
        })
        .collect()
}

/// See [`changes`].
pub type Changes = Vec<(String, FileAt)>;

/// A file's content and whether it is executable, or no file (`None`).
pub type FileAt = Option<(Vec<u8>, bool)>;

/// Every file of a tree: (path, blob, executable), sorted by path.
pub(crate) fn files(state: &State, tree: ObjectId) -> Option<Vec<(String, ObjectId, bool)>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), tree)];
    while let Some((dir, tree)) = stack.pop() {
        for (name, e) in decode_tree(&state.object(tree)?)? {
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            match (e.as_file(), e.as_tree()) {
                (Some((id, executable)), _) => out.push((path, id, executable)),
                (_, Some(id)) => stack.push((path, id)),
                (None, None) => {}
            }
        }
    }
    out.sort();
    Some(out)
}

/// Paths that differ between two trees, with the second tree's blob and whether it is
/// executable (`None`: gone).
pub(crate) type Diff = Vec<(String, Option<(ObjectId, bool)>)>;

/// The paths whose blob or mode differs between trees `a` and `b`. Equal subtrees are
/// skipped whole, and two versions of a directory are compared in one merge of their sorted
/// entries: linear in the directory's size (design: perf.orchestration).
pub(crate) fn diff(state: &State, a: Option<ObjectId>, b: ObjectId) -> Option<Diff> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), a, Some(b))];
    while let Some((dir, a, b)) = stack.pop() {
        if a == b {
            continue;
        }
        let load = |t: Option<ObjectId>| -> Option<Arc<Vec<(String, Entry)>>> {
            match t {
                Some(t) => state.tree(t),
                None => Some(Arc::new(Vec::new())),
            }
        };
        let (ea, eb) = (sorted(load(a)?), sorted(load(b)?));
        let (mut i, mut j) = (0, 0);
        while i < ea.len() || j < eb.len() {
            // The next name in order, from either side or both.
            let (name, x, y) = match (ea.get(i), eb.get(j)) {
                (Some((na, xa)), Some((nb, yb))) if na == nb => {
                    i += 1;
                    j += 1;
                    (na, Some(*xa), Some(*yb))
                }
                (Some((na, xa)), Some((nb, _))) if na < nb => {
                    i += 1;
                    (na, Some(*xa), None)
                }
                (Some((na, xa)), None) => {
                    i += 1;
                    (na, Some(*xa), None)
                }
                (_, Some((nb, yb))) => {
                    j += 1;
                    (nb, None, Some(*yb))
                }
                (None, None) => break,
            };
            if x == y {
                continue; // the same blob with the same mode, or the same subtree
            }
            let path = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            let (old_file, old_tree) = (x.and_then(Entry::as_file), x.and_then(Entry::as_tree));
            match (y.and_then(Entry::as_file), y.and_then(Entry::as_tree)) {
                (Some(file), _) => {
                    // A file (new, changed, or only its mode), perhaps where a directory was.
                    if old_tree.is_some() {
                        stack.push((path.clone(), old_tree, None));
                    }
                    out.push((path, Some(file)));
                }
                (_, Some(t)) => {
                    if old_file.is_some() {
                        out.push((path.clone(), None));
                    }
                    stack.push((path, old_tree, Some(t)));
                }
                (None, None) => {
                    if old_file.is_some() {
                        out.push((path, None));
                    } else if old_tree.is_some() {
                        stack.push((path, old_tree, None));
                    }
                }
            }
        }
    }
    Some(out)
}
