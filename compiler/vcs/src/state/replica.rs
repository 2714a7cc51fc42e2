//! The branch's side of replication: the objects a replica lacks (`bundle`), and taking a
//! bundle in (`import`) on a replica, whose head moves only by what its upstream sends.
//! design: vcs.replica

use std::collections::{HashMap, HashSet};

use super::State;
use crate::bundle::Bundle;
use crate::object::{Commit, Entry, Kind, ObjectId};

impl State {
    /// The objects between `have` (a commit the replica holds) and the head: every commit
    /// after it, and for each, the trees and blobs its parent's tree does not share. A
    /// `have` that is not on the branch gets the whole branch. `None`: the log is unreadable.
    pub(crate) fn bundle(&self, have: Option<ObjectId>) -> Option<Bundle> {
        let have = have.filter(|h| self.commits.contains_key(h));
        let mut objects = Vec::new();
        let mut seen = HashSet::new();
        let mut at = Some(self.head);
        while let Some(id) = at {
            if Some(id) == have {
                break;
            }
            let bytes = self.object(id)?;
            let c = Commit::decode(&bytes)?;
            let before = match c.parent {
                Some(p) => Some(Commit::decode(&self.object(p)?)?.tree),
                None => None,
            };
            self.tree_delta(before, c.tree, &mut seen, &mut objects)?;
            objects.push((Kind::Commit, bytes));
            at = c.parent;
        }
        Some(Bundle {
            head: self.head,
            seq: self.seq,
            flagged: self.flagged.iter().cloned().collect(),
            objects,
        })
    }

    /// `new`'s tree and what under it differs from `old`'s (equal subtrees are skipped).
    fn tree_delta(
        &self,
        old: Option<ObjectId>,
        new: ObjectId,
        seen: &mut HashSet<ObjectId>,
        out: &mut Vec<(Kind, Vec<u8>)>,
    ) -> Option<()> {
        if old == Some(new) || !seen.insert(new) {
            return Some(());
        }
        let before: HashMap<String, Entry> = match old {
            Some(t) => self.tree(t)?.iter().cloned().collect(),
            None => HashMap::new(),
        };
        for (name, entry) in self.tree(new)?.iter() {
            let was = before.get(name).copied();
            if was == Some(*entry) {
                continue;
            }
            match (entry.as_file(), entry.as_tree()) {
                (_, Some(tree)) => {
                    self.tree_delta(was.and_then(Entry::as_tree), tree, seen, out)?;
                }
                (Some((blob, _)), _) => {
                    if seen.insert(blob) {
                        out.push((Kind::Blob, self.object(blob)?));
                    }
                }
                (None, None) => {}
            }
        }
        out.push((Kind::Tree, self.object(new)?));
        Some(())
    }

    /// Takes `b`'s objects in and moves the head to its head, if that is newer than this
    /// one's and every object it needs is here; the caller makes it durable. `false`: the
    /// bundle does not resolve (nothing of the branch changed; its objects stay, unused).
    pub(crate) fn import(&mut self, b: &Bundle) -> bool {
        for (kind, payload) in &b.objects {
            self.put(*kind, payload);
        }
        if b.seq <= self.seq {
            return self.commits.contains_key(&b.head) || b.seq < self.seq;
        }
        if !self.resolves(b.head) {
            return false;
        }
        self.files.clear();
        self.dirs.clear();
        self.history.clear();
        if self.load(&[(b.head, b.seq)]).is_none() {
            return false;
        }
        self.flagged = b.flagged.iter().cloned().collect();
        true
    }

    /// Whether `head`'s commits, and every tree and blob of its tree, are in the store.
    fn resolves(&self, head: ObjectId) -> bool {
        let mut at = Some(head);
        let mut first = None;
        while let Some(id) = at {
            if self.commits.contains_key(&id) {
                break;
            }
            let Some(c) = self.object(id).and_then(|b| Commit::decode(&b)) else {
                return false;
            };
            first.get_or_insert(c.tree);
            at = c.parent;
        }
        let mut trees: Vec<ObjectId> = first.into_iter().collect();
        while let Some(t) = trees.pop() {
            let Some(entries) = self.tree(t) else {
                return false;
            };
            for (_, e) in entries.iter() {
                match (e.as_file(), e.as_tree()) {
                    (_, Some(sub)) => trees.push(sub),
                    (Some((blob, _)), _) if !self.index.contains_key(&blob) => return false,
                    _ => {}
                }
            }
        }
        true
    }
}
