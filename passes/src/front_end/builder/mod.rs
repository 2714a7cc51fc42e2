//! The event walker: pulldown-cmark events → a tree of intent nodes.
//!
//! Two explicit stacks replace recursion: `open` holds the nodes whose sections have not
//! ended (the root at the bottom), `sinks` the blocks whose inline text is being gathered
//! (heading, paragraph, list item, blockquote, table cell).
//! design: spec.node-ids
//! design: spec.requirements

use std::collections::HashMap;

use pulldown_cmark::{CodeBlockKind, Event, Options, Tag, TagEnd};
use specc_ir::{Diagnostic, FileId, IntentNode, NodeId, Span};

use super::diagnostics::{duplicate_node, empty_heading, invalid_id};
use super::fx::Fx;
use super::text::{TextBuf, normalize_ws};
use super::{events, fingerprint, slug};

mod content;
mod state;

use state::{Builder, Code, OpenNode, Sink, SinkKind};

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
            lists: Vec::new(),
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
            Tag::List(first) => {
                self.lists.push(first);
                return;
            }
            Tag::Item => match self.sinks.last() {
                Some(s) if matches!(s.kind, SinkKind::Quote) => {
                    self.next_item_number();
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
        let number = match kind {
            SinkKind::Item => self
                .next_item_number()
                .map(|n| self.written_number(&range, n)),
            _ => None,
        };
        self.sinks.push(Sink {
            kind,
            range,
            number,
        });
    }

    /// The text buffer of the innermost open sink.
    fn top_buf(&mut self) -> Option<&mut TextBuf> {
        let depth = self.sinks.len().checked_sub(1)?;
        self.bufs.get_mut(depth)
    }

    /// The number of the item an ordered list starts now, and the list's next one.
    fn next_item_number(&mut self) -> Option<u64> {
        let next = self.lists.last_mut()?.as_mut()?;
        let n = *next;
        *next += 1;
        Some(n)
    }

    /// An ordered item's number as its author wrote it (`11.` after `3.` is 11, where
    /// CommonMark counts on), or `counted` when it cannot be read.
    fn written_number(&self, item: &std::ops::Range<usize>, counted: u64) -> u64 {
        let text = self.src.get(item.clone()).unwrap_or_default().trim_start();
        let digits: &str = &text[..text.bytes().take_while(u8::is_ascii_digit).count()];
        digits.parse().unwrap_or(counted)
    }

    fn end(&mut self, tag: TagEnd) {
        if let TagEnd::List(_) = tag {
            self.lists.pop();
            return;
        }
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
            SinkKind::Item => self.item(buf, sink.number),
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
}

type Range = std::ops::Range<usize>;

fn is_non_goals_title(title: &str) -> bool {
    let t = title.trim_end_matches(':').trim();
    ["non-goals", "non goals", "nongoals", "out of scope"]
        .iter()
        .any(|n| t.eq_ignore_ascii_case(n))
}
