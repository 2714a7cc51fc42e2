//! A bounded cache of blob contents: the head's files are kept by blob id and line count,
//! and their bytes come from here or, on a miss, from the log.
//! design: vcs.memory
//!
//! Two generations: new and used entries go to `hot`; when `hot` holds half the budget it
//! becomes `cold` (the old `cold` is dropped), and a hit in `cold` moves the entry back to
//! `hot`. What was used in the last generation survives, the contents held never exceed the
//! budget plus the entry that tipped a generation (each entry costs about 100 bytes more in
//! keys and map slots), and every operation is O(1): an LRU's effect without its list.

use std::collections::HashMap;
use std::sync::Arc;

use crate::object::ObjectId;

pub(crate) struct BlobCache {
    /// Bytes `hot` may hold before it turns cold: half the budget.
    half: usize,
    hot: HashMap<ObjectId, Arc<Vec<u8>>>,
    hot_bytes: usize,
    cold: HashMap<ObjectId, Arc<Vec<u8>>>,
}

impl BlobCache {
    pub(crate) fn new(budget: usize) -> BlobCache {
        BlobCache {
            half: budget / 2,
            hot: HashMap::new(),
            hot_bytes: 0,
            cold: HashMap::new(),
        }
    }

    pub(crate) fn get(&mut self, id: &ObjectId) -> Option<Arc<Vec<u8>>> {
        if let Some(b) = self.hot.get(id) {
            return Some(b.clone());
        }
        let b = self.cold.remove(id)?;
        self.insert(*id, b.clone());
        Some(b)
    }

    /// Keeps `bytes` under `id`; a blob larger than half the budget is not kept.
    pub(crate) fn insert(&mut self, id: ObjectId, bytes: Arc<Vec<u8>>) {
        if bytes.len() > self.half || self.hot.contains_key(&id) {
            return;
        }
        // One copy: an entry moving up leaves the cold generation.
        self.cold.remove(&id);
        self.hot_bytes += bytes.len();
        self.hot.insert(id, bytes);
        if self.hot_bytes > self.half {
            self.cold = std::mem::take(&mut self.hot);
            self.hot_bytes = 0;
        }
    }

    /// Bytes held in both generations.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.hot
            .values()
            .chain(self.cold.values())
            .map(|b| b.len())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId([n; 32])
    }

    #[test]
    fn holds_at_most_its_budget_and_keeps_what_is_used() {
        let mut c = BlobCache::new(1000);
        for n in 0..100u8 {
            c.insert(id(n), Arc::new(vec![n; 100]));
            // Entry 0 is used after every insert: it never falls out.
            assert!(
                c.get(&id(0)).is_some(),
                "the entry in use survived insert {n}"
            );
            assert!(c.held() <= 1100, "held {} after insert {n}", c.held());
        }
        assert!(
            c.get(&id(1)).is_none(),
            "an entry unused for generations is gone"
        );
        assert_eq!(c.get(&id(99)).map(|b| b.len()), Some(100));
    }

    #[test]
    fn a_blob_over_half_the_budget_is_not_kept() {
        let mut c = BlobCache::new(1000);
        c.insert(id(1), Arc::new(vec![0; 501]));
        assert!(c.get(&id(1)).is_none());
        c.insert(id(2), Arc::new(vec![0; 500]));
        assert!(c.get(&id(2)).is_some());
    }
}
