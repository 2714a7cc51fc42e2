//! Fingerprints: blake3 over a node's normalised content and its children's fingerprints.
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

use specc_ir::{Fingerprint, IntentNode};

/// The fingerprint of `node`, given that its children's fingerprints are already set.
pub fn fingerprint_node(node: &IntentNode) -> Fingerprint {
    fingerprint_with(node, &mut Vec::with_capacity(node.prose.len() + 256))
}

/// [`fingerprint_node`] with a scratch buffer the caller reuses across nodes. The small
/// fields are laid out in the buffer so that blake3 sees three `update` calls per node: the
/// fields before the prose, the prose itself (not copied), and the fields after it.
/// (Measured: one `update` per field is much slower; copying everything into one buffer
/// first is a little slower.)
pub(crate) fn fingerprint_with(node: &IntentNode, scratch: &mut Vec<u8>) -> Fingerprint {
    scratch.clear();
    let mut hasher = blake3::Hasher::new();
    let mut h = Fields(scratch);
    h.0.push(3); // format version: bump when the layout below changes
    h.str(node.id.as_str());
    h.str(&node.title);
    h.count(node.prose.len());
    hasher.update(h.0);
    hasher.update(node.prose.as_bytes());
    h.0.clear();
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
    h.count(node.children.len());
    for c in &node.children {
        h.0.extend_from_slice(&c.fingerprint.0);
    }
    hasher.update(h.0);
    Fingerprint(*hasher.finalize().as_bytes())
}

struct Fields<'a>(&'a mut Vec<u8>);

impl Fields<'_> {
    fn count(&mut self, n: usize) {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        self.0.extend_from_slice(&n.to_le_bytes());
    }

    fn str(&mut self, s: &str) {
        self.count(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}
