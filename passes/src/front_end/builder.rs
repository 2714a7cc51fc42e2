//! The event walker: pulldown-cmark events → a tree of intent nodes.
//!
//! Two explicit stacks replace recursion: `open` holds the nodes whose sections have not
//! ended (the root at the bottom), `sinks` the blocks whose inline text is being gathered
//! (heading, paragraph, list item, blockquote, table cell).
//! design: spec.node-ids
//! design: spec.requirements

use std::collections::HashMap;

use pulldown_cmark::{CodeBlockKind, Event, Options, Tag, TagEnd};
use specc_ir::{
    Diagnostic, FileId, Fingerprint, IntentNode, NodeId, NonGoal, Requirement, RequirementId, Span,
};

use super::blocks::{self, Block};
use super::diagnostics::{
    duplicate_node, duplicate_tag, empty_decision, empty_heading, invalid_id, tag_without_keyword,
};
use super::fx::Fx;
use super::text::{TextBuf, normalize_ws};
use super::{decision, events, fingerprint, requirements, sentences, slug};

pub(crate) fn build(
    file: FileId,
    src: &str,
    body_start: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> IntentNode {
    let body = &src[body_start..];
    let walk = |hashing: Option<fingerprint::Hashing>, diagnostics: &mut Vec<Diagnostic>| {
        let mut b = Builder {
            file,
            src,
            open: vec![OpenNode::new(NodeId::default(), String::new(), 0, 0)],
            sinks: Vec::new(),
            bufs: Vec::new(),
            scratch: Vec::new(),
            hashing,
            code: None,
            // Sized for a section or a tag every few hundred bytes, so the maps rarely regrow.
            ids: HashMap::with_capacity_and_hasher(src.len() / 512, Fx::default()),
            tags: HashMap::with_capacity_and_hasher(src.len() / 1024, Fx::default()),
            sentences: Vec::new(),
            non_goals: None,
            seen_heading: false,
            diagnostics,
        };
        let options = Options::ENABLE_TABLES | Options::ENABLE_HEADING_ATTRIBUTES;
        events::for_each(body, options, |event, range| {
            b.event(event, body_start + range.start..body_start + range.end);
        });
        b.finish()
    };
    if events::pipelined(body) {
        fingerprint::on_a_thread(|hashing| walk(hashing, diagnostics))
    } else {
        walk(None, diagnostics)
    }
}

struct Builder<'s, 'd> {
    file: FileId,
    src: &'s str,
    open: Vec<OpenNode>,
    sinks: Vec<Sink>,
    /// `bufs[d]` gathers the text of `sinks[d]`. Buffers outlive their sinks and are
    /// cleared for reuse, so a paragraph costs no allocation and a sink record stays small.
    bufs: Vec<TextBuf>,
    /// Reused by fingerprinting.
    scratch: Vec<u8>,
    /// Content digests on another thread, for a large spec; otherwise computed here.
    hashing: Option<fingerprint::Hashing>,
    code: Option<Code<'s>>,
    /// Every node id given out, with the span of the heading that took it first and the
    /// next suffix to try when it is taken again (so a thousand duplicates stay linear).
    ids: HashMap<String, (Span, u32), Fx>,
    /// Every requirement tag seen, with the span of its first use.
    tags: HashMap<String, Span, Fx>,
    /// Reused by sentence splitting.
    sentences: Vec<Range>,
    /// Inside a Non-goals / Out of scope section opened by a heading of this level.
    non_goals: Option<u8>,
    seen_heading: bool,
    diagnostics: &'d mut Vec<Diagnostic>,
}

struct OpenNode {
    node: IntentNode,
    /// Requirements counted so far, for positional ids.
    counter: usize,
}

impl OpenNode {
    fn new(id: NodeId, title: String, level: u8, start: usize) -> OpenNode {
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
        OpenNode { node, counter: 0 }
    }

    /// Appends `prefix` and `text` (already normalised) to the prose after `separator`.
    fn add_normal_prose(&mut self, separator: &str, prefix: &str, text: &str) {
        let prose = &mut self.node.prose;
        if !prose.is_empty() {
            prose.push_str(separator);
        }
        prose.push_str(prefix);
        prose.push_str(text);
    }

    /// Appends `prefix` and `text`, white space normalised, to the prose after `separator`.
    fn add_prose(&mut self, separator: &str, prefix: &str, text: &str) {
        let prose = &mut self.node.prose;
        let before = prose.len();
        if before > 0 {
            prose.push_str(separator);
        }
        prose.push_str(prefix);
        let after_sep = prose.len();
        super::text::push_normalized(prose, text);
        if prose.len() == after_sep {
            prose.truncate(before);
        }
    }
}

enum SinkKind {
    Heading {
        level: u8,
        explicit_id: Option<String>,
    },
    Paragraph,
    Item,
    Quote,
    Cell,
}

struct Sink {
    kind: SinkKind,
    range: std::ops::Range<usize>,
}

struct Code<'s> {
    info: Option<pulldown_cmark::CowStr<'s>>,
    text: String,
}

impl<'s> Builder<'s, '_> {
    fn event(&mut self, event: Event<'s>, range: std::ops::Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag),
            Event::Text(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&t);
                } else {
                    let src = self.src;
                    if let Some(buf) = self.top_buf() {
                        buf.push(&t, range, src);
                    }
                }
            }
            Event::Code(t) => {
                let src = self.src;
                if let Some(buf) = self.top_buf() {
                    buf.push_code(&t, range, src);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(buf) = self.top_buf() {
                    buf.push_line_break(range);
                }
            }
            Event::Html(_)
            | Event::InlineHtml(_)
            | Event::FootnoteReference(_)
            | Event::Rule
            | Event::TaskListMarker(_) => {}
        }
    }

    fn start(&mut self, tag: Tag<'s>, range: std::ops::Range<usize>) {
        let kind = match tag {
            Tag::Heading { level, id, .. } => SinkKind::Heading {
                level: level as u8,
                explicit_id: id.map(|s| s.to_string()),
            },
            Tag::Paragraph => match self.sinks.last() {
                Some(s) if matches!(s.kind, SinkKind::Item | SinkKind::Quote | SinkKind::Cell) => {
                    if let Some(buf) = self.top_buf() {
                        buf.push_break("\n\n");
                    }
                    return;
                }
                _ => SinkKind::Paragraph,
            },
            // A list inside a blockquote is part of the quote's text: the quote may be a
            // `Decision:`, and that is known only when it ends.
            Tag::Item => match self.sinks.last() {
                Some(s) if matches!(s.kind, SinkKind::Quote) => {
                    if let Some(buf) = self.top_buf() {
                        buf.push_break("\n\n");
                    }
                    return;
                }
                _ => SinkKind::Item,
            },
            Tag::BlockQuote(_) => SinkKind::Quote,
            Tag::TableCell => SinkKind::Cell,
            Tag::CodeBlock(kind) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => Some(info),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(Code {
                    info,
                    text: String::with_capacity(range.len()),
                });
                SinkKind::Cell
            }
            _ => return,
        };
        let depth = self.sinks.len();
        match self.bufs.get_mut(depth) {
            Some(buf) => buf.clear(),
            None => self.bufs.push(TextBuf::default()),
        }
        self.sinks.push(Sink { kind, range });
    }

    /// The text buffer of the innermost open sink.
    fn top_buf(&mut self) -> Option<&mut TextBuf> {
        let depth = self.sinks.len().checked_sub(1)?;
        self.bufs.get_mut(depth)
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) | TagEnd::BlockQuote(_) | TagEnd::TableCell | TagEnd::CodeBlock => {}
            // Items inside a quote and paragraphs inside an item or quote opened no sink.
            TagEnd::Item | TagEnd::Paragraph => {
                let own = match self.sinks.last().map(|s| &s.kind) {
                    Some(SinkKind::Item) => tag == TagEnd::Item,
                    Some(SinkKind::Paragraph) => tag == TagEnd::Paragraph,
                    _ => false,
                };
                if !own {
                    return;
                }
            }
            _ => return,
        }
        let Some(sink) = self.sinks.pop() else {
            return;
        };
        let depth = self.sinks.len();
        // Text of the enclosing item or quote after this block is a paragraph of its own.
        if depth > 0 {
            self.bufs[depth - 1].end_of_nested_block();
        }
        let buf = std::mem::take(&mut self.bufs[depth]);
        self.finish_sink(sink, &buf, matches!(tag, TagEnd::CodeBlock));
        self.bufs[depth] = buf;
    }

    fn finish_sink(&mut self, sink: Sink, buf: &TextBuf, code_block: bool) {
        if code_block {
            if let Some(code) = self.code.take() {
                self.code_block(code, sink.range);
            }
            return;
        }
        match sink.kind {
            SinkKind::Heading { level, explicit_id } => {
                self.heading(level, explicit_id, buf, sink.range);
            }
            SinkKind::Paragraph => self.paragraph(buf),
            SinkKind::Item => self.item(buf),
            SinkKind::Quote => self.quote(buf),
            SinkKind::Cell => self.node().add_prose(" | ", "", &buf.text),
        }
    }

    fn node(&mut self) -> &mut OpenNode {
        self.open.last_mut().expect("the root is never popped")
    }

    fn span(&self, range: std::ops::Range<usize>) -> Span {
        Span::new(self.file, range)
    }

    fn heading(&mut self, level: u8, explicit: Option<String>, buf: &TextBuf, range: Range) {
        let title = normalize_ws(&buf.text);
        let first_heading = !self.seen_heading;
        self.seen_heading = true;
        if let Some(ng) = self.non_goals {
            if level > ng {
                return;
            }
            self.non_goals = None;
        }
        self.close_to(level, range.start);
        if first_heading && level == 1 {
            self.open[0].node.title = title;
            return;
        }
        if is_non_goals_title(&title) {
            self.non_goals = Some(level);
            return;
        }
        let line = &self.src[range.clone()];
        let span = self.span(range.start..range.start + line.trim_end().len());
        let id = self.node_id(explicit, &title, span);
        self.open.push(OpenNode::new(id, title, level, range.start));
    }

    /// Closes every open node (but the root) whose level is `level` or deeper.
    fn close_to(&mut self, level: u8, at: usize) {
        while self.open.len() > 1 && self.open.last().is_some_and(|n| n.node.level >= level) {
            self.close_one(at);
        }
    }

    fn close_one(&mut self, at: usize) {
        let Some(mut open) = self.open.pop() else {
            return;
        };
        open.node.span = Span::new(self.file, open.node.span.start as usize..at);
        self.own_text(&mut open.node);
        self.fingerprint(&mut open.node);
        self.node().node.children.push(open.node);
    }

    fn finish(mut self) -> IntentNode {
        let end = self.src.len();
        while self.open.len() > 1 {
            self.close_one(end);
        }
        let mut root = self.open.pop().expect("the root is never popped").node;
        root.span = Span::new(self.file, 0..end);
        self.own_text(&mut root);
        self.fingerprint(&mut root);
        // Dropping the sender tells the hashing thread that every job is in.
        self.hashing = None;
        root
    }

    /// Sets a closed node's own text: its source from its start to its first child's (or its
    /// end), trailing blank lines left out.
    fn own_text(&self, node: &mut IntentNode) {
        let start = node.span.start as usize;
        let end = node
            .children
            .first()
            .map_or(node.span.end as usize, |c| c.span.start as usize);
        let text = self.src.get(start..end.max(start)).unwrap_or_default();
        let text = text.trim_end();
        node.text_span = Span::new(self.file, start..start + text.len());
        node.text = text.to_owned();
    }

    /// Sets a closed node's fingerprint (its children's are set), or sends its content to
    /// the hashing thread.
    fn fingerprint(&mut self, node: &mut IntentNode) {
        match &mut self.hashing {
            Some(h) => h.submit(node),
            None => {
                let content = fingerprint::content_digest(node, &mut self.scratch);
                node.fingerprint = fingerprint::combine(&content, &node.children);
            }
        }
    }

    fn node_id(&mut self, explicit: Option<String>, title: &str, heading: Span) -> NodeId {
        let parent = &self.open.last().expect("the root is never popped").node;
        let explicit = explicit.filter(|id| {
            let ok = slug::is_valid_explicit_id(id);
            if !ok {
                self.diagnostics.push(invalid_id(id, heading));
            }
            ok
        });
        let id = explicit.unwrap_or_else(|| {
            let mut id = String::with_capacity(parent.id.as_str().len() + title.len() + 1);
            if !parent.id.is_root() {
                id.push_str(parent.id.as_str());
                id.push('/');
            }
            let seg_start = id.len();
            slug::slugify_into(title, &mut id);
            if id.len() == seg_start {
                let seg = format!("section-{}", parent.children.len() + 1);
                self.diagnostics.push(empty_heading(heading, &seg));
                id.push_str(&seg);
            }
            id
        });
        if let Some(&(first, next)) = self.ids.get(&id) {
            let mut n = next;
            let unique = loop {
                let candidate = format!("{id}-{n}");
                n += 1;
                if !self.ids.contains_key(&candidate) {
                    break candidate;
                }
            };
            if let Some(entry) = self.ids.get_mut(&id) {
                entry.1 = n;
            }
            self.diagnostics
                .push(duplicate_node(&id, heading, first, &unique));
            self.ids.insert(unique.clone(), (heading, 2));
            return NodeId(unique);
        }
        self.ids.insert(id.clone(), (heading, 2));
        NodeId(id)
    }

    fn paragraph(&mut self, buf: &TextBuf) {
        self.node().add_prose("\n\n", "", &buf.text);
        if self.non_goals.is_some() {
            return;
        }
        if buf.find_keyword(0..buf.text.len()).is_none() {
            if let Some((tag, r, true)) = requirements::own_tag(&buf.text) {
                let span = self.span(buf.src_range(r));
                self.diagnostics.push(tag_without_keyword(tag, span));
            }
            return;
        }
        let mut found = std::mem::take(&mut self.sentences);
        sentences::split(&buf.text, buf.line_starts(), &mut found);
        for r in found.drain(..) {
            self.requirement(buf, r, None);
        }
        self.sentences = found;
    }

    fn item(&mut self, buf: &TextBuf) {
        if buf.is_blank() {
            return;
        }
        let text = normalize_ws(&buf.text);
        if self.non_goals.is_some() {
            let span = self.span(buf.src_span());
            self.node().node.non_goals.push(NonGoal { text, span });
            return;
        }
        self.node().add_normal_prose("\n", "- ", &text);
        self.requirement(buf, 0..buf.text.len(), Some(text));
    }

    fn quote(&mut self, buf: &TextBuf) {
        match decision::parse(&buf.text, buf.line_starts()) {
            Some(d) => {
                let span = self.span(buf.src_span());
                if d.text.is_empty() {
                    self.diagnostics.push(empty_decision(span));
                }
                self.node().node.decisions.push(specc_ir::SpecDecision {
                    id: d.id,
                    text: d.text,
                    rationale: d.rationale,
                    span,
                });
            }
            None => self.paragraph(buf),
        }
    }

    /// Adds the text `r` of `buf` as a requirement if it holds a keyword; `normalized` is
    /// that text with white space normalised, when the caller already has it.
    fn requirement(&mut self, buf: &TextBuf, r: Range, normalized: Option<String>) {
        let sentence = &buf.text[r.clone()];
        let Some(level) = buf.find_keyword(r.clone()) else {
            // Only a tag that is surely a label is reported; "See the note in ." cites.
            if let Some((tag, t, true)) = requirements::own_tag(sentence) {
                let span = self.span(buf.src_range(r.start + t.start..r.start + t.end));
                self.diagnostics.push(tag_without_keyword(tag, span));
            }
            return;
        };
        let span = self.span(buf.src_range(r.clone()));
        let form = requirements::classify(sentence);
        let text = normalized.unwrap_or_else(|| normalize_ws(sentence));
        let tag = requirements::own_tag(sentence).map(|(tag, t, leading)| {
            let span = self.span(buf.src_range(r.start + t.start..r.start + t.end));
            (tag.to_owned(), span, leading)
        });
        let node = self.open.last_mut().expect("the root is never popped");
        node.counter += 1;
        let positional = || {
            let mut id = String::with_capacity(node.node.id.as_str().len() + 4);
            id.push_str(node.node.id.as_str());
            id.push('#');
            id.push_str(itoa(node.counter).as_str());
            RequirementId(id)
        };
        let (id, tagged) = match tag {
            // A tag that may be a citation ("behave as in .") and is already taken
            // cites that requirement rather than naming this one.
            Some((tag, _, false)) if self.tags.contains_key(&tag) => (positional(), false),
            Some((tag, tag_span, _)) => match self.tags.get(&tag) {
                Some(&first) => {
                    self.diagnostics
                        .push(duplicate_tag(&tag, tag_span, first, &positional().0));
                    (positional(), false)
                }
                None => {
                    self.tags.insert(tag.clone(), tag_span);
                    (RequirementId(tag), true)
                }
            },
            None => (positional(), false),
        };
        node.node.requirements.push(Requirement {
            id,
            tagged,
            level,
            form,
            text,
            span,
        });
    }

    fn code_block(&mut self, code: Code<'s>, range: Range) {
        let span = self.span(range.clone());
        let Some(info) = code.info else {
            let example = specc_ir::Example {
                lang: None,
                code: code.text,
                span,
            };
            self.node().node.examples.push(example);
            return;
        };
        let fence_end = self.src[range.clone()]
            .find('\n')
            .map_or(range.end, |p| range.start + p);
        let fence = self.span(range.start..fence_end);
        match blocks::classify(self.file, &info, code.text, span, fence, self.diagnostics) {
            Block::Check(c) => self.node().node.checks.push(c),
            Block::Example(e) => self.node().node.examples.push(e),
        }
    }
}

type Range = std::ops::Range<usize>;

/// `n` in decimal, without going through `fmt` (it runs once per requirement).
fn itoa(mut n: usize) -> ItoaBuf {
    let mut buf = ItoaBuf {
        bytes: [0; 20],
        start: 20,
    };
    loop {
        buf.start -= 1;
        buf.bytes[buf.start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return buf;
        }
    }
}

struct ItoaBuf {
    bytes: [u8; 20],
    start: usize,
}

impl ItoaBuf {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[self.start..]).unwrap_or("0")
    }
}

fn is_non_goals_title(title: &str) -> bool {
    let t = title.trim_end_matches(':').trim();
    ["non-goals", "non goals", "nongoals", "out of scope"]
        .iter()
        .any(|n| t.eq_ignore_ascii_case(n))
}
