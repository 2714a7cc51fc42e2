//! What the builder makes of a paragraph, a list item, a quote and a fenced block: prose,
//! requirements with their ids (tags, positions, an ordered list's numbers), decisions,
//! examples and checks.
//! design: spec.requirements

use specc_ir::{NonGoal, Requirement, RequirementId};

use super::super::blocks::{self, Block};
use super::super::diagnostics::{duplicate_tag, empty_decision, tag_without_keyword};
use super::super::text::{TextBuf, normalize_ws};
use super::super::{decision, requirements, sentences};
use super::state::{Builder, Code};

type Range = std::ops::Range<usize>;

impl<'s> Builder<'s, '_> {
    pub(super) fn paragraph(&mut self, buf: &TextBuf) {
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
            self.requirement(buf, r, None, None);
        }
        self.sentences = found;
    }

    /// A list item: one requirement if it holds a keyword. An ordered list's item is named
    /// by its number (`<node>#11`), and one holding several keyword sentences gives each
    /// its own (`#11.1`, `#11.2`): the spec's own numbering (design: spec.requirements).
    pub(super) fn item(&mut self, buf: &TextBuf, number: Option<u64>) {
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
        let Some(n) = number else {
            self.requirement(buf, 0..buf.text.len(), Some(text), None);
            return;
        };
        let mut found = std::mem::take(&mut self.sentences);
        sentences::split(&buf.text, buf.line_starts(), &mut found);
        let keyed: Vec<Range> = found
            .drain(..)
            .filter(|r| buf.find_keyword(r.clone()).is_some())
            .collect();
        self.sentences = found;
        if keyed.len() < 2 {
            self.requirement(buf, 0..buf.text.len(), Some(text), Some(n.to_string()));
            return;
        }
        for (k, r) in keyed.into_iter().enumerate() {
            self.requirement(buf, r, None, Some(format!("{n}.{}", k + 1)));
        }
    }

    pub(super) fn quote(&mut self, buf: &TextBuf) {
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
    /// `number` names an ordered list's item (`11`, `11.2`): its positional id's suffix,
    /// unless the node gave that suffix out already.
    pub(super) fn requirement(
        &mut self,
        buf: &TextBuf,
        r: Range,
        normalized: Option<String>,
        number: Option<String>,
    ) {
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
        // The suffix of its positional id: its list number, else the next count not given
        // out (a list item may have taken it).
        let suffix = match number.filter(|n| !node.taken.contains(n)) {
            Some(n) => n,
            None => loop {
                let s = itoa(node.counter).as_str().to_owned();
                if !node.taken.contains(&s) {
                    break s;
                }
                node.counter += 1;
            },
        };
        let node_id = node.node.id.as_str().to_owned();
        let positional = || {
            let mut id = String::with_capacity(node_id.len() + 1 + suffix.len());
            id.push_str(&node_id);
            id.push('#');
            id.push_str(&suffix);
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
        let node = self.open.last_mut().expect("the root is never popped");
        if !tagged {
            node.taken.insert(suffix.clone());
        }
        node.node.requirements.push(Requirement {
            id,
            tagged,
            level,
            form,
            text,
            span,
        });
    }

    pub(super) fn code_block(&mut self, code: Code<'s>, range: Range) {
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
