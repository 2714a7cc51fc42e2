//! Fingerprints: blake3 over a node's normalised content and its children's fingerprints.
//!
//! Two levels: a node's *content digest* is blake3 over everything the node holds but its
//! children (id, title, prose, requirements, examples, checks, decisions, non-goals); its
//! fingerprint is blake3 over that digest and its children's fingerprints. The digests do
//! not depend on one another, so a large spec computes them on a second thread while the
//! builder goes on (`Hashing`); the combining step is one small hash per node.
//!
//! Spans are left out, so inserting text above a section does not change its fingerprint;
//! every field is length-prefixed, so no two different contents hash the same input.
//!
//! The prose holds every sentence and list item of the node, requirements included, so a
//! requirement's text is not hashed a second time: its length, level, form and whether its
//! tag was honoured are (the last depends on the rest of the spec: a tag taken elsewhere
//! makes this requirement's id positional). Hashing each byte of text once matters: blake3
//! over the prose is most of the front end's cost after pulldown-cmark itself.
//! design: spec.fingerprints
//! design: spec.front-end-pipeline

use std::sync::mpsc::{Receiver, Sender};

use specc_ir::{Fingerprint, IntentNode};

/// The layout's version: bump when the bytes below change.
const VERSION: u8 = 4;

/// The fingerprint of `node`, given that its children's fingerprints are already set.
pub fn fingerprint_node(node: &IntentNode) -> Fingerprint {
    combine(&content_digest(node, &mut Vec::new()), &node.children)
}

/// blake3 over everything `node` holds but its children. The small fields are laid out in
/// `scratch` so that blake3 sees three `update` calls: the fields before the prose, the prose
/// itself (not copied), and the fields after it.
pub(crate) fn content_digest(node: &IntentNode, scratch: &mut Vec<u8>) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    scratch.clear();
    head(node, scratch);
    hasher.update(scratch);
    hasher.update(node.prose.as_bytes());
    scratch.clear();
    tail(node, scratch);
    hasher.update(scratch);
    *hasher.finalize().as_bytes()
}

/// The fingerprint from a content digest and the children's fingerprints.
pub(crate) fn combine(content: &[u8; 32], children: &[IntentNode]) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    hasher.update(&[VERSION]);
    hasher.update(content);
    hasher.update(&count(children.len()));
    for c in children {
        hasher.update(&c.fingerprint.0);
    }
    Fingerprint(*hasher.finalize().as_bytes())
}

fn head(node: &IntentNode, buf: &mut Vec<u8>) {
    let mut h = Fields(buf);
    h.0.push(VERSION);
    h.str(node.id.as_str());
    h.str(&node.title);
    h.count(node.prose.len());
}

fn tail(node: &IntentNode, buf: &mut Vec<u8>) {
    let mut h = Fields(buf);
    h.count(node.requirements.len());
    for r in &node.requirements {
        h.count(r.text.len());
        h.0.extend_from_slice(&[r.level as u8, r.form as u8, u8::from(r.tagged)]);
    }
    h.count(node.examples.len());
    for e in &node.examples {
        h.str(e.lang.as_deref().unwrap_or(""));
        h.str(&e.code);
    }
    h.count(node.checks.len());
    for c in &node.checks {
        h.str(&c.runner);
        h.str(&c.code);
    }
    h.count(node.decisions.len());
    for d in &node.decisions {
        h.str(d.id.as_deref().unwrap_or(""));
        h.str(&d.text);
        h.str(d.rationale.as_deref().unwrap_or(""));
    }
    h.count(node.non_goals.len());
    for n in &node.non_goals {
        h.str(&n.text);
    }
}

fn count(n: usize) -> [u8; 4] {
    u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes()
}

struct Fields<'a>(&'a mut Vec<u8>);

impl Fields<'_> {
    fn count(&mut self, n: usize) {
        self.0.extend_from_slice(&count(n));
    }

    fn str(&mut self, s: &str) {
        self.count(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}

/// Content digests computed on another thread. A closed node gets a job number in place of
/// its fingerprint; the hashing thread returns the digests by job number, and [`settle`]
/// replaces the numbers with the fingerprints. Jobs travel in batches of about 64 KiB: one
/// buffer holding several nodes' contents back to back, and where each ends.
pub(crate) struct Hashing {
    jobs: Sender<Batch>,
    batch: Batch,
    next: u32,
}

/// Contents back to back, and the end of each.
#[derive(Default)]
pub(crate) struct Batch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

const BATCH_BYTES: usize = 64 * 1024;

/// Runs `build` with content digests on a thread of their own, then settles the tree's
/// fingerprints. If no thread can be started, `build` computes them itself.
pub(crate) fn on_a_thread(build: impl FnOnce(Option<Hashing>) -> IntentNode) -> IntentNode {
    std::thread::scope(|scope| {
        let (jobs, queue) = std::sync::mpsc::channel();
        let hasher = std::thread::Builder::new()
            .name("specc-fingerprints".to_owned())
            .spawn_scoped(scope, move || hash_jobs(queue));
        let Ok(hasher) = hasher else {
            return build(None);
        };
        let mut root = build(Some(Hashing::new(jobs)));
        match hasher.join() {
            Ok(digests) => settle(&mut root, &digests),
            Err(panic) => std::panic::resume_unwind(panic),
        }
        root
    })
}

/// The hashing thread's side: digests of the jobs, in the order sent.
fn hash_jobs(jobs: Receiver<Batch>) -> Vec<[u8; 32]> {
    let mut out = Vec::new();
    for batch in jobs {
        let mut start = 0;
        for &end in &batch.ends {
            out.push(*blake3::hash(&batch.bytes[start..end]).as_bytes());
            start = end;
        }
    }
    out
}

impl Hashing {
    pub(crate) fn new(jobs: Sender<Batch>) -> Hashing {
        Hashing {
            jobs,
            batch: Batch::default(),
            next: 0,
        }
    }

    /// Queues `node`'s content to be hashed and marks it with the job's number. The bytes
    /// are exactly those [`content_digest`] hashes.
    pub(crate) fn submit(&mut self, node: &mut IntentNode) {
        let b = &mut self.batch;
        head(node, &mut b.bytes);
        b.bytes.extend_from_slice(node.prose.as_bytes());
        tail(node, &mut b.bytes);
        b.ends.push(b.bytes.len());
        let job = self.next;
        self.next += 1;
        let mut marker = [0u8; 32];
        marker[..4].copy_from_slice(&job.to_le_bytes());
        node.fingerprint = Fingerprint(marker);
        if b.bytes.len() >= BATCH_BYTES {
            self.flush();
            self.batch.bytes.reserve(BATCH_BYTES + BATCH_BYTES / 4);
        }
    }

    fn flush(&mut self) {
        let full = std::mem::take(&mut self.batch);
        // The receiver lives until the builder is done; a send cannot fail before then.
        let _ = self.jobs.send(full);
    }
}

impl Drop for Hashing {
    /// The last jobs go out when the builder lets go: then the hashing thread can finish.
    fn drop(&mut self) {
        if !self.batch.ends.is_empty() {
            self.flush();
        }
    }
}

/// Replaces the job numbers in `node` and its descendants with fingerprints, children first.
/// Section nesting follows heading levels, so the recursion is at most seven deep.
fn settle(node: &mut IntentNode, digests: &[[u8; 32]]) {
    for c in &mut node.children {
        settle(c, digests);
    }
    let mut job = [0u8; 4];
    job.copy_from_slice(&node.fingerprint.0[..4]);
    // Every node was submitted; were one not, its digest is computed here rather than
    // leaving a wrong fingerprint.
    let content = match digests.get(u32::from_le_bytes(job) as usize) {
        Some(d) => *d,
        None => {
            debug_assert!(false, "node `{}` has no digest", node.id.as_str());
            content_digest(node, &mut Vec::new())
        }
    };
    node.fingerprint = combine(&content, &node.children);
}
