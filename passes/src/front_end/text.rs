//! Inline text gathered from events, with a map back to source offsets.

/// Text collected from inline events, remembering where each piece came from so that a
/// sentence found in the text can be given a span in the source.
#[derive(Default, Debug)]
pub(crate) struct TextBuf {
    pub(crate) text: String,
    /// Pieces in text order: (offset in `text`, source range the piece came from).
    pieces: Vec<Piece>,
    /// Offsets in `text` where a new source line starts (after a soft or hard break, which
    /// the text holds as a space, or a paragraph break).
    line_starts: Vec<u32>,
    /// Ranges of `text` that came from inline code: a keyword there is quoted, not used.
    code: Vec<(u32, u32)>,
    /// A block inside this one (a code block, a nested list) ended: the next text starts a
    /// new paragraph, not the end of the last word.
    block_ended: bool,
}

#[derive(Debug, Clone, Copy)]
struct Piece {
    text_start: u32,
    src_start: u32,
    src_end: u32,
    /// The piece's text is the source slice verbatim, so offsets inside it map one to one.
    exact: bool,
}

impl TextBuf {
    pub(crate) fn clear(&mut self) {
        self.text.clear();
        self.pieces.clear();
        self.line_starts.clear();
        self.code.clear();
        self.block_ended = false;
    }

    /// A block nested in this one ended: text that follows is separated from what came before.
    pub(crate) fn end_of_nested_block(&mut self) {
        self.block_ended = true;
    }

    /// Appends inline code (`` `MUST` ``): text like any other, but never a keyword.
    pub(crate) fn push_code(&mut self, s: &str, src: std::ops::Range<usize>, source: &str) {
        let start = self.text.len() as u32;
        self.push(s, src, source);
        self.code.push((start, self.text.len() as u32));
    }

    /// The level of the strongest requirement keyword in `r` (a range of `text`) that does
    /// not start inside inline code: a binding one (MUST, SHALL, REQUIRED) over SHOULD and
    /// RECOMMENDED, those over MAY and OPTIONAL, the first of equals. "The OPTIONAL `tag`
    /// field MUST be ASCII" binds.
    pub(crate) fn find_keyword(&self, r: std::ops::Range<usize>) -> Option<specc_ir::Level> {
        let strength = |l: specc_ir::Level| {
            use specc_ir::Level::*;
            match l {
                Must | MustNot | Shall | ShallNot => 2,
                Should | ShouldNot => 1,
                May => 0,
            }
        };
        let mut best: Option<specc_ir::Level> = None;
        let mut from = r.start;
        while from < r.end {
            let Some((level, k)) = super::requirements::find_keyword(&self.text[from..r.end])
            else {
                break;
            };
            let start = (from + k.start) as u32;
            // Code ranges are in text order: the last one starting at or before the keyword
            // is the only one that can hold it.
            let i = self.code.partition_point(|&(a, _)| a <= start);
            let in_code = i > 0 && start < self.code[i - 1].1;
            if !in_code && best.is_none_or(|b| strength(level) > strength(b)) {
                best = Some(level);
                if strength(level) == 2 {
                    break;
                }
            }
            from += if in_code { k.start + 1 } else { k.end };
        }
        best
    }

    pub(crate) fn line_starts(&self) -> &[u32] {
        &self.line_starts
    }

    /// A soft or hard line break from `src`: a space in the text, a line start remembered.
    pub(crate) fn push_line_break(&mut self, src: std::ops::Range<usize>) {
        self.pieces.push(Piece {
            text_start: self.text.len() as u32,
            src_start: src.start as u32,
            src_end: src.end as u32,
            exact: false,
        });
        self.text.push(' ');
        self.line_starts.push(self.text.len() as u32);
    }

    pub(crate) fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// Appends `s`, which came from `src` (a byte range of the source).
    pub(crate) fn push(&mut self, s: &str, src: std::ops::Range<usize>, source: &str) {
        if s.is_empty() {
            return;
        }
        if std::mem::take(&mut self.block_ended) {
            self.push_break("\n\n");
        }
        // Text that pulldown-cmark borrows from the source at `src` maps one to one; text it
        // had to rewrite (escapes, entities) maps to the start of its range.
        let exact = src.len() == s.len()
            && source
                .get(src.clone())
                .is_some_and(|orig| std::ptr::eq(orig.as_ptr(), s.as_ptr()) || orig == s);
        self.pieces.push(Piece {
            text_start: self.text.len() as u32,
            src_start: src.start as u32,
            src_end: src.end as u32,
            exact,
        });
        self.text.push_str(s);
    }

    /// Appends a separator that has no source of its own (a paragraph break inside an item).
    pub(crate) fn push_break(&mut self, s: &str) {
        if !self.text.is_empty() {
            let at = self.pieces.last().map_or(0, |p| p.src_end);
            self.pieces.push(Piece {
                text_start: self.text.len() as u32,
                src_start: at,
                src_end: at,
                exact: false,
            });
            self.text.push_str(s);
            self.line_starts.push(self.text.len() as u32);
        }
    }

    /// The source offset of text offset `t` (a byte offset into `self.text`).
    pub(crate) fn src_offset(&self, t: usize) -> usize {
        let t = t as u32;
        let i = self.pieces.partition_point(|p| p.text_start <= t);
        let Some(p) = i.checked_sub(1).map(|i| self.pieces[i]) else {
            return self.pieces.first().map_or(0, |p| p.src_start as usize);
        };
        let src = if p.exact {
            p.src_start + (t - p.text_start)
        } else {
            p.src_start
        };
        src.min(p.src_end) as usize
    }

    /// The source range covering text range `r` (end exclusive).
    pub(crate) fn src_range(&self, r: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let start = self.src_offset(r.start);
        let end = if r.end > r.start {
            let last = r.end - 1;
            let i = self
                .pieces
                .partition_point(|p| p.text_start as usize <= last);
            match i.checked_sub(1).map(|i| self.pieces[i]) {
                Some(p) if p.exact => self.src_offset(last) + 1,
                Some(p) => p.src_end as usize,
                None => start,
            }
        } else {
            start
        };
        start..end.max(start)
    }

    /// The source range of the whole buffer.
    pub(crate) fn src_span(&self) -> std::ops::Range<usize> {
        let start = self.pieces.first().map_or(0, |p| p.src_start as usize);
        let end = self
            .pieces
            .iter()
            .map(|p| p.src_end as usize)
            .max()
            .unwrap_or(start);
        start..end.max(start)
    }
}

/// Collapses every run of ASCII white space into one space and trims both ends.
/// (Other Unicode spaces are kept as they are: they are rare in specs and this runs over
/// every byte of prose, so it copies whole runs of non-space bytes at a time.)
pub(crate) fn normalize_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_normalized(&mut out, s);
    out
}

/// Appends `s` to `out` with white space normalised as [`normalize_ws`] does. Copies whole
/// runs that are already normal (words joined by single spaces) at once.
pub(crate) fn push_normalized(out: &mut String, s: &str) {
    let trimmed = s.trim_ascii();
    if super::scan::is_normal(trimmed) {
        out.push_str(trimmed);
        return;
    }
    let bytes = s.as_bytes();
    let ws = |b: u8| b.is_ascii_whitespace();
    let Some(first) = bytes.iter().position(|&b| !ws(b)) else {
        return;
    };
    let last = bytes.iter().rposition(|&b| !ws(b)).unwrap_or(first);
    let mut run = first;
    let mut i = first;
    while i <= last {
        if !ws(bytes[i]) {
            i += 1;
            continue;
        }
        // A single ' ' between two non-space bytes is already normal.
        if bytes[i] == b' ' && !ws(bytes[i + 1]) {
            i += 1;
            continue;
        }
        out.push_str(&s[run..i]);
        out.push(' ');
        while ws(bytes[i]) {
            i += 1;
        }
        run = i;
    }
    out.push_str(&s[run..=last]);
}
