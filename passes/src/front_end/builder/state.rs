//! The builder's state: the walker, the open nodes, and the blocks whose text is being
//! gathered. What `mod.rs` (the events and sections) and `content.rs` (what a block
//! becomes) share.
//! design: spec.requirements

use std::collections::HashMap;

use specc_ir::{Diagnostic, FileId, Fingerprint, IntentNode, NodeId, Span};

use super::super::fingerprint;
use super::super::fx::Fx;
use super::super::text::TextBuf;

type Range = std::ops::Range<usize>;

pub(super) struct Builder<'s, 'd> {
    pub(super) file: FileId,
    pub(super) src: &'s str,
    pub(super) open: Vec<OpenNode>,
    pub(super) sinks: Vec<Sink>,
    /// `bufs[d]` gathers the text of `sinks[d]`. Buffers outlive their sinks and are
    /// cleared for reuse, so a paragraph costs no allocation and a sink record stays small.
    pub(super) bufs: Vec<TextBuf>,
    /// Reused by fingerprinting.
    pub(super) scratch: Vec<u8>,
    /// Content digests on another thread, for a large spec; otherwise computed here.
    pub(super) hashing: Option<fingerprint::Hashing>,
    pub(super) code: Option<Code<'s>>,
    /// Every node id given out, with the span of the heading that took it first and the
    /// next suffix to try when it is taken again (so a thousand duplicates stay linear).
    pub(super) ids: HashMap<String, (Span, u32), Fx>,
    /// Every requirement tag seen, with the span of its first use.
    pub(super) tags: HashMap<String, Span, Fx>,
    /// Reused by sentence splitting.
    pub(super) sentences: Vec<Range>,
    /// Inside a Non-goals / Out of scope section opened by a heading of this level.
    pub(super) non_goals: Option<u8>,
    pub(super) seen_heading: bool,
    /// The lists open, innermost last: an ordered list's next item number, `None` for a
    /// bullet list.
    pub(super) lists: Vec<Option<u64>>,
    pub(super) diagnostics: &'d mut Vec<Diagnostic>,
}

pub(super) struct OpenNode {
    pub(super) node: IntentNode,
    /// Requirements counted so far, for positional ids.
    pub(super) counter: usize,
    /// The positional ids (`<n>`, `<n>.<k>`) given out in this node.
    pub(super) taken: std::collections::HashSet<String>,
}

impl OpenNode {
    pub(super) fn new(id: NodeId, title: String, level: u8, start: usize) -> OpenNode {
        let node = IntentNode {
            id,
            title,
            level,
            prose: String::new(),
            text: String::new(),
            text_span: Span::default(),
            requirements: Vec::new(),
            examples: Vec::new(),
            checks: Vec::new(),
            decisions: Vec::new(),
            non_goals: Vec::new(),
            children: Vec::new(),
            span: Span {
                file: FileId(0),
                start: start as u32,
                end: start as u32,
            },
            fingerprint: Fingerprint::default(),
        };
        OpenNode {
            node,
            counter: 0,
            taken: Default::default(),
        }
    }

    /// Appends `prefix` and `text` (already normalised) to the prose after `separator`.
    pub(super) fn add_normal_prose(&mut self, separator: &str, prefix: &str, text: &str) {
        let prose = &mut self.node.prose;
        if !prose.is_empty() {
            prose.push_str(separator);
        }
        prose.push_str(prefix);
        prose.push_str(text);
    }

    /// Appends `prefix` and `text`, white space normalised, to the prose after `separator`.
    pub(super) fn add_prose(&mut self, separator: &str, prefix: &str, text: &str) {
        let prose = &mut self.node.prose;
        let before = prose.len();
        if before > 0 {
            prose.push_str(separator);
        }
        prose.push_str(prefix);
        let after_sep = prose.len();
        super::super::text::push_normalized(prose, text);
        if prose.len() == after_sep {
            prose.truncate(before);
        }
    }
}

pub(super) enum SinkKind {
    Heading {
        level: u8,
        explicit_id: Option<String>,
    },
    Paragraph,
    Item,
    Quote,
    Cell,
}

pub(super) struct Sink {
    pub(super) kind: SinkKind,
    pub(super) range: std::ops::Range<usize>,
    /// An ordered list item's number.
    pub(super) number: Option<u64>,
}

pub(super) struct Code<'s> {
    pub(super) info: Option<pulldown_cmark::CowStr<'s>>,
    pub(super) text: String,
}
