//! The spec front end: Markdown (CommonMark + GFM tables) → Intent IR.
//!
//! It never fails: whatever the input, it returns the tree it could build and the diagnostics
//! it found. It walks pulldown-cmark's event stream once, iteratively — no recursion over the
//! document, so a 10,000-deep nested list costs a deeper `Vec`, not a deeper stack.
//!
//! design: spec.node-ids
//! design: spec.requirements
//! design: spec.fingerprints
//! design: spec.front-matter

mod blocks;
mod builder;
mod decision;
mod diagnostics;
mod events;
mod fingerprint;
mod front_matter;
mod fx;
mod requirements;
mod scan;
mod sentences;
mod slug;
pub(crate) mod text;

use specc_ir::{Diagnostic, FileId, IntentTree};

pub use fingerprint::fingerprint_node;

/// blake3 over `node`'s own content, without its children: what its fingerprint is made of.
pub fn content_digest_of(node: &specc_ir::IntentNode) -> [u8; 32] {
    fingerprint::content_digest(node, &mut Vec::new())
}
pub use requirements::{KNOWN_RUNNERS, find_keyword};
pub use slug::slugify;

/// What the front end produced: the tree and the diagnostics, in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub tree: IntentTree,
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parse `text`, the contents of the spec file `file`.
pub fn parse_spec(file: FileId, text: &str) -> Parsed {
    let mut diagnostics = Vec::new();
    let (front_matter, body_start) = front_matter::split(file, text, &mut diagnostics);
    let root = builder::build(file, text, body_start, &mut diagnostics);
    if text[body_start..].trim().is_empty() {
        diagnostics.push(empty_spec(file, text, front_matter.is_some()));
    }
    diagnostics.sort_by_key(|d| d.primary.as_ref().map(|l| (l.span.start, l.span.end)));
    Parsed {
        tree: IntentTree { front_matter, root },
        diagnostics,
    }
}

#[cold]
fn empty_spec(file: FileId, text: &str, had_front_matter: bool) -> Diagnostic {
    let message = if had_front_matter {
        "the spec has front matter but nothing after it"
    } else if text.is_empty() {
        "the spec is empty"
    } else {
        "the spec holds only white space"
    };
    Diagnostic::new(specc_ir::codes::EMPTY_SPEC, message)
        .with_primary(specc_ir::Span::new(file, 0..text.len()), "nothing to build from")
        .with_help("write at least a heading and one requirement (a sentence with MUST, SHALL, SHOULD or MAY)")
}

#[cfg(test)]
mod tests;
