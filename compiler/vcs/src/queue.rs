//! The merge queue: conflicts wait here in order, one queue per writer, served round-robin so
//! that a writer with many conflicts cannot starve one with few. A [`Resolver`] (the runtime
//! plugs in a neutral merge agent; tests a scripted one) gets both intents and both sides, and
//! its resolution goes through the same commit protocol as any change.
//! design: vcs.protocol

use std::collections::{BTreeMap, VecDeque};

use crate::{Change, Conflict, Outcome, Repo, Submission};

/// A conflict waiting for a resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The writer (task) whose submission conflicted.
    pub writer: String,
    /// What the writer submitted, message (its intent) included.
    pub submission: Submission,
    /// Both sides of the conflicting path and their base.
    pub conflict: Conflict,
    /// The message of the commit that last changed the path on the branch (the other
    /// intent), when this process saw it.
    pub head_intent: Option<String>,
}

/// Turns a conflict into new content for its path, or gives up on it (`None`: dropped).
pub trait Resolver: Send + Sync {
    fn resolve(&self, queued: &Queued) -> Option<Vec<u8>>;
}

#[derive(Default)]
pub(crate) struct MergeQueue {
    by_writer: BTreeMap<String, VecDeque<Queued>>,
    /// The writer served last; the next one after it (in name order) goes next.
    last: Option<String>,
}

impl MergeQueue {
    pub(crate) fn push(&mut self, q: Queued) {
        self.by_writer
            .entry(q.writer.clone())
            .or_default()
            .push_back(q);
    }

    pub(crate) fn len(&self) -> usize {
        self.by_writer.values().map(VecDeque::len).sum()
    }

    /// `writer`'s oldest conflict.
    pub(crate) fn withdraw(&mut self, writer: &str) -> Option<Queued> {
        let q = self.by_writer.get_mut(writer)?;
        let out = q.pop_front();
        if q.is_empty() {
            self.by_writer.remove(writer);
        }
        out
    }

    /// The oldest conflict of the next writer in turn.
    pub(crate) fn pop(&mut self) -> Option<Queued> {
        let writer = {
            let after = self.last.as_deref();
            let mut names = self
                .by_writer
                .iter()
                .filter(|(_, q)| !q.is_empty())
                .map(|(w, _)| w);
            let next = match after {
                Some(a) => self
                    .by_writer
                    .iter()
                    .filter(|(w, q)| !q.is_empty() && w.as_str() > a)
                    .map(|(w, _)| w)
                    .next()
                    .or_else(|| names.next()),
                None => names.next(),
            };
            next?.clone()
        };
        let q = self.by_writer.get_mut(&writer)?.pop_front();
        self.last = Some(writer);
        q
    }
}

impl Repo {
    /// Takes the next conflict in turn (round-robin across writers), asks `resolver`, and
    /// submits its resolution through the same protocol. `None` when the queue is empty; the
    /// conflict and the outcome otherwise (a resolution that conflicts again is queued again).
    pub async fn resolve_next(&self, resolver: &dyn Resolver) -> Option<(Queued, Option<Outcome>)> {
        let mut q = self.queue.lock().ok()?.pop()?;
        // The branch may have moved since the conflict: the resolver sees today's head.
        // A stopped store answers nothing more: there is no branch to resolve onto.
        let (head, file) = self.read_head(&q.conflict.path).await.ok()?;
        q.conflict.head = file.as_ref().map(|f| f.bytes.to_vec());
        let Some(content) = resolver.resolve(&q) else {
            return Some((q, None));
        };
        // The writer's mode change wins; else today's head keeps its mode.
        let submitted = q
            .submission
            .changes
            .iter()
            .find(|c| c.path == q.conflict.path)
            .is_some_and(|c| c.executable);
        let executable = q
            .conflict
            .executable_change
            .or(file.as_ref().map(|f| f.executable))
            .unwrap_or(submitted);
        let s = Submission {
            base: head,
            changes: vec![Change {
                path: q.conflict.path.clone(),
                expected: file.map(|f| f.blob),
                new: Some(content),
                executable,
            }],
            message: format!("resolve: {}", q.submission.message),
            task: q.submission.task.clone(),
            idempotency_key: if q.submission.idempotency_key.is_empty() {
                String::new()
            } else {
                format!("{}#resolution", q.submission.idempotency_key)
            },
        };
        let outcome = self.submit(s).await;
        Some((q, Some(outcome)))
    }
}
