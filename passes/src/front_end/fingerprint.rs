//! Fingerprints: blake3 over a node's normalised content and its children's fingerprints.
//!
//! Spans are left out, so inserting text above a section does not change its fingerprint;
//! every field is length-prefixed, so no two different contents hash the same input.
//! design: spec.fingerprints

use specc_ir::{Fingerprint, IntentNode};

/// The fingerprint of `node`, given that its children's fingerprints are already set.
pub fn fingerprint_node(node: &IntentNode) -> Fingerprint {
    let mut h = Hasher(blake3::Hasher::new());
    h.str("specc-intent-node-v1");
    h.str(node.id.as_str());
    h.str(&node.title);
    h.str(&node.prose);
    h.count(node.requirements.len());
    for r in &node.requirements {
        h.str(r.id.as_str());
        h.str(r.level.as_str());
        h.str(&format!("{:?}", r.form));
        h.str(&r.text);
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
    h.count(node.children.len());
    for c in &node.children {
        h.0.update(&c.fingerprint.0);
    }
    Fingerprint(*h.0.finalize().as_bytes())
}

struct Hasher(blake3::Hasher);

impl Hasher {
    fn count(&mut self, n: usize) {
        self.0.update(&(n as u64).to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.count(s.len());
        self.0.update(s.as_bytes());
    }
}
