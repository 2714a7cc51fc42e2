//! Reading the store without a checkout: a file at any commit, every file of a commit, and
//! the paths two trees differ in (what a git export writes per commit).

use crate::object::{Commit, Entry, ObjectId, decode_tree};
use crate::state::State;

pub(crate) fn commit(state: &State, id: ObjectId) -> Option<Commit> {
    Commit::decode(&state.object(id)?)
}

pub(crate) fn file_at(state: &State, commit_id: ObjectId, path: &str) -> Option<Vec<u8>> {
    entry_at(state, commit_id, path)?.map(|(bytes, _)| bytes)
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
        let entries = decode_tree(&state.object(tree)?)?;
        let Some((_, entry)) = entries.into_iter().find(|(n, _)| n == part) else {
            return Some(None);
        };
        match (entry.as_file(), entry.as_tree(), i + 1 == parts.len()) {
            (Some((id, executable)), _, true) => {
                return state.object(id).map(|b| Some((b, executable)));
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
            Some((id, executable)) => state.object(id).map(|b| (path, Some((b, executable)))),
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
/// skipped whole.
pub(crate) fn diff(state: &State, a: Option<ObjectId>, b: ObjectId) -> Option<Diff> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), a, Some(b))];
    while let Some((dir, a, b)) = stack.pop() {
        if a == b {
            continue;
        }
        let load = |t: Option<ObjectId>| -> Option<Vec<(String, Entry)>> {
            match t {
                Some(t) => decode_tree(&state.object(t)?),
                None => Some(Vec::new()),
            }
        };
        let (ea, eb) = (load(a)?, load(b)?);
        let mut names: Vec<&String> = ea.iter().chain(eb.iter()).map(|(n, _)| n).collect();
        names.sort();
        names.dedup();
        for name in names {
            let path = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            let x = ea.iter().find(|(n, _)| n == name).map(|(_, e)| *e);
            let y = eb.iter().find(|(n, _)| n == name).map(|(_, e)| *e);
            if x == y {
                continue; // the same blob with the same mode, or the same subtree
            }
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
