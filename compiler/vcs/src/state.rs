//! The branch as the integrator holds it: the head's files, the directory trees, the guard
//! and the idempotency table. Applying a submission is synchronous and touches only memory
//! and the log's queue; the integrator makes each batch durable with one fsync.
//! design: vcs.protocol

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::cache::BlobCache;
use crate::log::{Location, Log};
use crate::merge::merge3;
use crate::object::{Commit, Entry, Kind, ObjectId, encode_tree};
use crate::{Change, Conflict, HeadFile, Outcome, Refusal, Submission, line_count as lines};

mod load;
mod replica;

/// A file at the head: its blob, mode and line count. Its bytes are not kept here: they
/// come from the bounded blob cache or the log (design: vcs.memory).
#[derive(Clone, Copy)]
pub(crate) struct Head {
    pub(crate) blob: ObjectId,
    pub(crate) executable: bool,
    pub(crate) lines: usize,
}

/// A decoded tree.
type TreeEntries = Vec<(String, Entry)>;

/// A file as a tree holds it: its blob and whether it is executable.
type File = (ObjectId, bool);

/// What a change leaves at its path: content and whether it is executable, or nothing.
type Content = Option<(Vec<u8>, bool)>;

/// A submission's decided contents by path, and the paths that were merged 3-way.
type Decided = (Vec<(String, Content)>, Vec<String>);

pub(crate) struct State {
    pub(crate) log: Log,
    pub(crate) index: HashMap<ObjectId, Location>,
    pub(crate) head: ObjectId,
    pub(crate) seq: u64,
    /// path → its file at the head.
    pub(crate) files: HashMap<String, Head>,
    /// Recently used blobs' bytes, within `Options::head_cache_bytes`.
    blobs: std::cell::RefCell<BlobCache>,
    /// directory ("" is the root) → its entries.
    dirs: BTreeMap<String, BTreeMap<String, Entry>>,
    /// Commits on the branch, by id → seq (a base must be one of them).
    pub(crate) commits: HashMap<ObjectId, u64>,
    pub(crate) by_key: HashMap<String, Outcome>,
    pub(crate) budget: usize,
    pub(crate) flagged: BTreeSet<String>,
    pub(crate) conflicts: HashMap<String, u64>,
    /// path → message of the commit that last changed it (this process's memory only).
    /// By path: the message and task of the commit that last changed it (this process).
    last_intent: HashMap<String, (String, String)>,
    /// Decoded trees, and how many entries they hold together.
    tree_cache: std::cell::RefCell<(HashMap<ObjectId, Arc<TreeEntries>>, usize)>,
    /// path → its last changes (seq, file), oldest first; the first entry is the path's
    /// state as of its seq. Paths without an entry have not existed since `loaded_at`.
    history: HashMap<String, std::collections::VecDeque<(u64, Option<File>)>>,
    /// The head's seq when this process loaded the branch.
    loaded_at: u64,
    /// The commits made since the integrator last published, with the files each changed
    /// (design: vcs.recent-changes).
    pub(crate) made: Vec<(ObjectId, crate::published::Files)>,
}

/// Tree entries kept decoded: about 100 bytes each with its name, plus about 80 per tree for
/// its map slot and `Arc`, so a few tens of MiB at most.
const TREE_CACHE_ENTRIES: usize = 1 << 18;

/// Changes of one path kept in memory for base lookups.
const HISTORY: usize = 64;

fn parent_dir(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("", path),
    }
}

impl State {
    pub(crate) fn new(
        log: Log,
        index: HashMap<ObjectId, Location>,
        budget: usize,
        cache_bytes: usize,
    ) -> State {
        State {
            log,
            index,
            head: ObjectId([0; 32]),
            seq: 0,
            files: HashMap::new(),
            blobs: std::cell::RefCell::new(BlobCache::new(cache_bytes)),
            dirs: BTreeMap::new(),
            commits: HashMap::new(),
            by_key: HashMap::new(),
            budget,
            flagged: BTreeSet::new(),
            conflicts: HashMap::new(),
            last_intent: HashMap::new(),
            tree_cache: Default::default(),
            history: HashMap::new(),
            loaded_at: 0,
            made: Vec::new(),
        }
    }

    pub(crate) fn object(&self, id: ObjectId) -> Option<Vec<u8>> {
        self.index.get(&id).and_then(|loc| self.log.read(*loc).ok())
    }

    /// A blob's bytes, from the cache or the log.
    pub(crate) fn blob(&self, id: ObjectId) -> Option<Arc<Vec<u8>>> {
        if let Some(b) = self.blobs.borrow_mut().get(&id) {
            return Some(b);
        }
        let b = Arc::new(self.object(id)?);
        self.blobs.borrow_mut().insert(id, b.clone());
        Some(b)
    }

    /// The file at `path` at the head with its bytes: `Some(None)` when there is none,
    /// `None` when its bytes cannot be read.
    pub(crate) fn head_file(&self, path: &str) -> Option<Option<HeadFile>> {
        let Some(h) = self.files.get(path) else {
            return Some(None);
        };
        Some(Some(HeadFile {
            blob: h.blob,
            bytes: self.blob(h.blob)?,
            executable: h.executable,
        }))
    }

    fn put(&mut self, kind: Kind, payload: &[u8]) -> ObjectId {
        let id = ObjectId::of(kind, payload);
        if !self.index.contains_key(&id) {
            let loc = self.log.push(kind, id, payload);
            self.index.insert(id, loc);
        }
        id
    }

    /// Sets one file in the head's trees (None deletes it).
    fn set_file(&mut self, path: &str, file: Option<File>) {
        let (dir, name) = parent_dir(path);
        match file {
            Some((id, executable)) => {
                self.dirs
                    .entry(dir.to_owned())
                    .or_default()
                    .insert(name.to_owned(), Entry::file(id, executable));
                // Make sure every ancestor lists its child directory.
                let mut d = dir;
                while !d.is_empty() {
                    let (up, child) = parent_dir(d);
                    let entry = self.dirs.entry(up.to_owned()).or_default();
                    entry
                        .entry(child.to_owned())
                        .or_insert(Entry::Tree(ObjectId([0; 32])));
                    d = up;
                }
            }
            None => {
                if let Some(entries) = self.dirs.get_mut(dir) {
                    entries.remove(name);
                }
            }
        }
    }

    /// Writes the trees of the directories in `dirty` (and their ancestors), deepest first;
    /// returns the root tree.
    fn write_trees(&mut self, dirty: &BTreeSet<String>) -> ObjectId {
        let mut todo: BTreeSet<String> = BTreeSet::new();
        for d in dirty {
            let mut d = d.as_str();
            loop {
                todo.insert(d.to_owned());
                if d.is_empty() {
                    break;
                }
                d = parent_dir(d).0;
            }
        }
        let mut order: Vec<String> = todo.into_iter().collect();
        order.sort_by_key(|d| {
            std::cmp::Reverse(if d.is_empty() {
                0
            } else {
                d.matches('/').count() + 1
            })
        });
        let mut root = ObjectId([0; 32]);
        for d in order {
            // Encoded in place: a directory's entries are not copied for it.
            let entries = self.dirs.get(&d);
            let empty = entries.is_none_or(|e| e.is_empty());
            let tree = encode_tree(entries.into_iter().flatten().map(|(n, e)| (n.as_str(), *e)));
            let id = self.put(Kind::Tree, &tree);
            if d.is_empty() {
                root = id;
            } else {
                let (up, child) = parent_dir(&d);
                // Empty directories disappear, as in git.
                let parent = self.dirs.entry(up.to_owned()).or_default();
                if empty {
                    parent.remove(child);
                } else {
                    parent.insert(child.to_owned(), Entry::Tree(id));
                }
            }
        }
        root
    }

    /// Applies one submission to the head: pushrebase, 3-way merge, the guard, a commit.
    pub(crate) fn apply(&mut self, s: &Submission) -> Outcome {
        if !s.idempotency_key.is_empty()
            && let Some(first) = self.by_key.get(&s.idempotency_key)
        {
            return first.clone();
        }
        let outcome = self.apply_new(s);
        if !s.idempotency_key.is_empty() {
            self.by_key
                .insert(s.idempotency_key.clone(), outcome.clone());
        }
        outcome
    }

    fn apply_new(&mut self, s: &Submission) -> Outcome {
        if !self.commits.contains_key(&s.base) {
            return Outcome::Refused(Refusal::UnknownBase);
        }
        if let Some(refusal) = self.check_paths(s) {
            return Outcome::Refused(refusal);
        }
        // Decide every path first; commit only if all of them go through.
        let (decided, merged) = match self.decide_all(s) {
            Ok(d) => d,
            Err(outcome) => return *outcome,
        };
        if let Some(refusal) = self.megafile_guard(&decided) {
            return Outcome::Refused(refusal);
        }
        let (dirty, files) = self.write_changes(s, decided);
        let id = self.commit(s, &dirty);
        self.made.push((id, files));
        Outcome::Committed {
            id,
            seq: self.seq,
            merged,
        }
    }

    /// What each change of `s` becomes at the head: taken as written (its path did not move
    /// since the base), merged 3-way, or a conflict that refuses the whole submission.
    /// Returns the contents and the paths that were merged.
    fn decide_all(&mut self, s: &Submission) -> Result<Decided, Box<Outcome>> {
        let mut decided: Vec<(String, Content)> = Vec::with_capacity(s.changes.len());
        let mut merged = Vec::new();
        for c in &s.changes {
            // What the writer says it saw must be what its base has: the base, not the
            // writer's word, decides what is a rebase and what needs a merge.
            let at_base = self
                .blob_at_base(s.base, &c.path)
                .ok_or(Box::new(Outcome::Refused(Refusal::Unavailable)))?;
            if at_base.map(|(id, _)| id) != c.expected {
                return Err(Box::new(Outcome::Refused(Refusal::ExpectedMismatch {
                    path: c.path.clone(),
                })));
            }
            // The head's bytes are read only when the change needs a merge.
            let head = match self.files.get(&c.path).copied() {
                Some(h) if Some(h.blob) != c.expected => {
                    let bytes = self
                        .blob(h.blob)
                        .ok_or(Box::new(Outcome::Refused(Refusal::Unavailable)))?;
                    Some((h, Some(bytes)))
                }
                h => h.map(|h| (h, None)),
            };
            match self.decide(c, at_base, head) {
                Ok((content, was_merged)) => {
                    if was_merged {
                        merged.push(c.path.clone());
                    }
                    decided.push((c.path.clone(), content));
                }
                Err(conflict) => {
                    *self.conflicts.entry(c.path.clone()).or_default() += 1;
                    return Err(Box::new(Outcome::Conflict(*conflict)));
                }
            }
        }
        Ok((decided, merged))
    }

    /// The megafile guard: a file may not grow past the line budget, and a flagged file may
    /// not grow at all until it is split. An existing file refused for its size is flagged.
    fn megafile_guard(&mut self, decided: &[(String, Content)]) -> Option<Refusal> {
        for (path, content) in decided {
            let new_lines = content.as_ref().map_or(0, |(b, _)| lines(b));
            let old_lines = self.files.get(path).map_or(0, |f| f.lines);
            if new_lines > self.budget && new_lines > old_lines {
                // A file that does not exist yet is refused but not flagged.
                let exists = self.files.contains_key(path);
                let already = self.flagged.contains(path);
                if exists {
                    self.flagged.insert(path.clone());
                }
                return Some(Refusal::Megafile {
                    path: path.clone(),
                    lines: new_lines,
                    budget: self.budget,
                    already_flagged: already,
                });
            }
            if self.flagged.contains(path) && new_lines > old_lines {
                return Some(Refusal::Megafile {
                    path: path.clone(),
                    lines: new_lines,
                    budget: self.budget,
                    already_flagged: true,
                });
            }
        }
        None
    }

    /// Writes the decided contents to the head's files (blobs, recent history, flags);
    /// returns the directories whose trees must be written again.
    fn write_changes(
        &mut self,
        s: &Submission,
        decided: Vec<(String, Content)>,
    ) -> (BTreeSet<String>, crate::published::Files) {
        let mut dirty = BTreeSet::new();
        let mut files = Vec::with_capacity(decided.len());
        for (path, _) in &decided {
            self.last_intent
                .insert(path.clone(), (s.message.clone(), s.task.clone()));
        }
        for (path, content) in decided {
            let file = content
                .as_ref()
                .map(|(b, executable)| (self.put(Kind::Blob, b), *executable));
            self.set_file(&path, file);
            let recent = self.history.entry(path.clone()).or_default();
            recent.push_back((self.seq + 1, file));
            if recent.len() > HISTORY {
                recent.pop_front();
            }
            dirty.insert(parent_dir(&path).0.to_owned());
            match (file, content) {
                (Some((blob, executable)), Some((bytes, _))) => {
                    let lines = lines(&bytes);
                    if lines <= self.budget {
                        self.flagged.remove(&path);
                    }
                    let bytes = Arc::new(bytes);
                    files.push((path.clone(), Some((bytes.clone(), executable))));
                    self.blobs.get_mut().insert(blob, bytes);
                    self.files.insert(
                        path,
                        Head {
                            blob,
                            executable,
                            lines,
                        },
                    );
                }
                _ => {
                    files.push((path.clone(), None));
                    self.flagged.remove(&path);
                    self.files.remove(&path);
                }
            }
        }
        (dirty, files)
    }

    /// The commit of `s` over the trees `dirty` touched: the new head.
    fn commit(&mut self, s: &Submission, dirty: &BTreeSet<String>) -> ObjectId {
        let tree = self.write_trees(dirty);
        let commit = Commit {
            parent: Some(self.head),
            tree,
            seq: self.seq + 1,
            task: s.task.clone(),
            idempotency_key: s.idempotency_key.clone(),
            message: s.message.clone(),
        };
        let id = self.put(Kind::Commit, &commit.encode());
        self.head = id;
        self.seq += 1;
        self.commits.insert(id, self.seq);
        id
    }

    /// The file at `path` in the base commit. Recent changes of each path are kept in
    /// memory, so a base a few commits behind the head is answered without reading trees;
    /// an older one walks its trees.
    fn blob_at_base(&self, base: ObjectId, path: &str) -> Option<Option<File>> {
        if base == self.head {
            return Some(self.files.get(path).map(|f| (f.blob, f.executable)));
        }
        let seq = *self.commits.get(&base)?;
        match self.history.get(path) {
            Some(recent) if recent.front().is_some_and(|(first, _)| seq >= *first) => {
                return Some(
                    recent
                        .iter()
                        .rev()
                        .find(|(at, _)| *at <= seq)
                        .and_then(|(_, b)| *b),
                );
            }
            // Never changed since this process loaded the branch, and not in it then.
            None if seq >= self.loaded_at => return Some(None),
            _ => {}
        }
        self.blob_at(base, path)
    }

    /// The file at `path` in `commit`: `Some(None)` when absent, `None` when the store
    /// cannot be read. Trees read here are cached.
    fn blob_at(&self, commit: ObjectId, path: &str) -> Option<Option<File>> {
        let mut tree = crate::object::Commit::decode(&self.object(commit)?)?.tree;
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let entries = self.tree(tree)?;
            let Some((_, entry)) = entries.iter().find(|(n, _)| n == part) else {
                return Some(None);
            };
            match (entry.as_file(), entry.as_tree(), i + 1 == parts.len()) {
                (Some(file), _, true) => return Some(Some(file)),
                (_, Some(id), false) => tree = id,
                _ => return Some(None),
            }
        }
        Some(None)
    }

    /// A decoded tree, from a cache bounded by the entries it holds (cleared when full).
    pub(crate) fn tree(&self, id: ObjectId) -> Option<Arc<TreeEntries>> {
        if let Some(t) = self.tree_cache.borrow().0.get(&id) {
            return Some(t.clone());
        }
        let t = Arc::new(crate::object::decode_tree(&self.object(id)?)?);
        let mut cache = self.tree_cache.borrow_mut();
        if cache.1 + t.len() > TREE_CACHE_ENTRIES {
            *cache = Default::default();
        }
        cache.1 += t.len();
        cache.0.insert(id, t.clone());
        Some(t)
    }

    /// Paths must be relative, normalised and printable, and must not turn a file into a
    /// directory or back (that would lose one of them).
    fn check_paths(&self, s: &Submission) -> Option<Refusal> {
        for c in &s.changes {
            let p = c.path.as_str();
            let bad_component = |comp: &str| {
                comp.is_empty() || comp == "." || comp == ".." || comp == ".git" || comp.len() > 255
            };
            if p.is_empty()
                || p.len() > 4096
                || p.split('/').any(bad_component)
                || p.chars()
                    .any(|ch| ch.is_control() || ch == '"' || ch == '\\')
            {
                return Some(Refusal::InvalidPath {
                    path: c.path.clone(),
                });
            }
            if c.new
                .as_ref()
                .is_some_and(|b| b.len() > u32::MAX as usize / 2)
            {
                return Some(Refusal::InvalidPath {
                    path: c.path.clone(),
                });
            }
            if c.new.is_some() {
                let is_dir = self.dirs.get(p).is_some_and(|d| !d.is_empty());
                let mut ancestor_is_file = false;
                let mut at = p;
                while let Some(i) = at.rfind('/') {
                    at = &at[..i];
                    ancestor_is_file |= self.files.contains_key(at);
                }
                if is_dir || ancestor_is_file {
                    return Some(Refusal::PathCollision {
                        path: c.path.clone(),
                    });
                }
            }
        }
        None
    }

    /// The content and mode a change leaves at its path, and whether it took a merge.
    /// `base` is the file at the writer's base (its blob is `c.expected`); `head` the file at
    /// the head, with its bytes when they differ from the base's. The mode: the writer's
    /// when it differs from the base's, else the head's.
    fn decide(
        &self,
        c: &Change,
        base: Option<File>,
        head: Option<(Head, Option<Arc<Vec<u8>>>)>,
    ) -> Result<(Content, bool), Box<Conflict>> {
        let head_bytes = head.as_ref().and_then(|(_, b)| b.clone());
        let head = head.map(|(h, _)| h);
        let mode_change = match base {
            Some((_, was)) if was == c.executable => None,
            _ => c.new.as_ref().map(|_| c.executable),
        };
        let mode = mode_change
            .or(head.map(|h| h.executable))
            .unwrap_or(c.executable);
        if head.map(|h| h.blob) == c.expected {
            // Untouched since the writer's base: rebase.
            return Ok((c.new.clone().map(|b| (b, mode)), false));
        }
        let conflict = |base: Option<Vec<u8>>| {
            Box::new(Conflict {
                path: c.path.clone(),
                base,
                head: head_bytes.as_ref().map(|b| b.to_vec()),
                submitted: c.new.clone(),
                head_intent: self.last_intent.get(&c.path).map(|(m, _)| m.clone()),
                head_task: self.last_intent.get(&c.path).map(|(_, t)| t.clone()),
                executable_change: mode_change,
            })
        };
        let base = c.expected.and_then(|id| self.object(id));
        let (Some(base), Some(ours), Some(theirs)) = (&base, &head_bytes, &c.new) else {
            return Err(conflict(base));
        };
        if theirs == base {
            // The writer changed only the mode: the head's content stands.
            return Ok((Some((ours.to_vec(), mode)), true));
        }
        match (
            std::str::from_utf8(base),
            std::str::from_utf8(ours),
            std::str::from_utf8(theirs),
        ) {
            (Ok(b), Ok(o), Ok(t)) => match merge3(b, o, t) {
                Some(m) => Ok((Some((m.into_bytes(), mode)), true)),
                None => Err(conflict(Some(base.clone()))),
            },
            _ => Err(conflict(Some(base.clone()))),
        }
    }
}
