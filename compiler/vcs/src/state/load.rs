//! Starting the branch: an empty one, or the one the log holds after a restart.
//! design: vcs.protocol

use std::sync::Arc;

use super::{Head, State, lines};
use crate::Outcome;
use crate::object::{Commit, Kind, ObjectId};

impl State {
    /// Starts an empty branch: the root commit with an empty tree.
    pub(crate) fn init(&mut self) {
        let tree = self.put(Kind::Tree, &[]);
        let commit = Commit {
            parent: None,
            tree,
            seq: 0,
            task: String::new(),
            idempotency_key: String::new(),
            message: "root".to_owned(),
        };
        let id = self.put(Kind::Commit, &commit.encode());
        self.head = id;
        self.seq = 0;
        self.commits.insert(id, 0);
        self.log.push_head(id, 0);
    }

    /// Rebuilds the head's files and trees from the log after a restart.
    pub(crate) fn load(&mut self, heads: &[(ObjectId, u64)]) -> Option<()> {
        let &(head, seq) = heads.last()?;
        self.head = head;
        self.seq = seq;
        // Every commit on the branch, and the idempotency keys of committed submissions.
        let mut at = Some(head);
        while let Some(id) = at {
            let c = Commit::decode(&self.object(id)?)?;
            self.commits.insert(id, c.seq);
            if !c.idempotency_key.is_empty() {
                self.by_key
                    .entry(c.idempotency_key.clone())
                    .or_insert(Outcome::Committed {
                        id,
                        seq: c.seq,
                        merged: Vec::new(),
                    });
            }
            at = c.parent;
        }
        let root = Commit::decode(&self.object(head)?)?.tree;
        let mut stack = vec![(String::new(), root)];
        while let Some((dir, tree)) = stack.pop() {
            let entries = crate::object::decode_tree(&self.object(tree)?)?;
            let map = self.dirs.entry(dir.clone()).or_default();
            for (name, e) in &entries {
                map.insert(name.clone(), *e);
            }
            for (name, e) in entries {
                let path = if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                };
                match (e.as_file(), e.as_tree()) {
                    (_, Some(id)) => stack.push((path, id)),
                    (Some((blob, executable)), _) => {
                        let bytes = Arc::new(self.object(blob)?);
                        let lines = lines(&bytes);
                        if lines > self.budget {
                            self.flagged.insert(path.clone());
                        }
                        self.blobs.get_mut().insert(blob, bytes);
                        self.history
                            .entry(path.clone())
                            .or_default()
                            .push_back((seq, Some((blob, executable))));
                        let file = Head {
                            blob,
                            executable,
                            lines,
                        };
                        self.files.insert(path, file);
                    }
                    (None, None) => {}
                }
            }
        }
        self.loaded_at = seq;
        Some(())
    }
}
