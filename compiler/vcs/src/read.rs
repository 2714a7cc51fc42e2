//! Reading the store without a checkout: a file at any commit, every file of a commit, and
//! the paths two trees differ in (what a git export writes per commit).

use crate::object::{Commit, Entry, ObjectId, decode_tree};
use crate::state::State;

pub(crate) fn commit(state: &State, id: ObjectId) -> Option<Commit> {
    Commit::decode(&state.object(id)?)
}

pub(crate) fn file_at(state: &State, commit_id: ObjectId, path: &str) -> Option<Vec<u8>> {
    let mut tree = commit(state, commit_id)?.tree;
    let parts: Vec<&str> = path.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let entries = decode_tree(&state.object(tree)?)?;
        let (_, entry) = entries.into_iter().find(|(n, _)| n == part)?;
        match (entry, i + 1 == parts.len()) {
            (Entry::Blob(id), true) => return state.object(id),
            (Entry::Tree(id), false) => tree = id,
            _ => return None,
        }
    }
    None
}

/// Every file of a tree: (path, blob).
pub(crate) fn files(state: &State, tree: ObjectId) -> Option<Vec<(String, ObjectId)>> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), tree)];
    while let Some((dir, tree)) = stack.pop() {
        for (name, e) in decode_tree(&state.object(tree)?)? {
            let path = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            match e {
                Entry::Blob(id) => out.push((path, id)),
                Entry::Tree(id) => stack.push((path, id)),
            }
        }
    }
    out.sort();
    Some(out)
}

/// The paths whose blob differs between trees `a` and `b`, with `b`'s blob (`None`: gone).
/// Equal subtrees are skipped whole.
pub(crate) fn diff(
    state: &State,
    a: Option<ObjectId>,
    b: ObjectId,
) -> Option<Vec<(String, Option<ObjectId>)>> {
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
            match (x, y) {
                (Some(Entry::Blob(p)), Some(Entry::Blob(q))) if p == q => {}
                (_, Some(Entry::Blob(q))) => {
                    if let Some(Entry::Tree(t)) = x {
                        stack.push((path.clone(), Some(t), None));
                    }
                    out.push((path, Some(q)));
                }
                (Some(Entry::Blob(_)), None) => out.push((path, None)),
                (x, Some(Entry::Tree(t))) => {
                    if let Some(Entry::Blob(_)) = x {
                        out.push((path.clone(), None));
                    }
                    let old = match x {
                        Some(Entry::Tree(o)) => Some(o),
                        _ => None,
                    };
                    stack.push((path, old, Some(t)));
                }
                (Some(Entry::Tree(t)), None) => stack.push((path, Some(t), None)),
                (None, None) => {}
            }
        }
    }
    Some(out)
}
