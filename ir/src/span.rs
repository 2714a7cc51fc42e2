//! Source positions: a file id plus a byte range, convertible to line:column.

use serde::{Deserialize, Serialize};

/// Identifies one source file within a compilation. The driver owns the mapping to paths.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct FileId(pub u32);

/// A half-open byte range `start..end` in one file.
///
/// Offsets are `u32`: a spec or source file larger than 4 GiB is refused by the driver
/// before it reaches a pass.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, range: std::ops::Range<usize>) -> Span {
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let start = clamp(range.start);
        let end = clamp(range.end).max(start);
        Span { file, start, end }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both; both must be in the same file.
    pub fn cover(self, other: Span) -> Span {
        debug_assert_eq!(self.file, other.file);
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A 1-based line and 1-based column counted in Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// Maps byte offsets of one text to line:column. Built once per file in O(n).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset of the start of each line; `line_starts[0] == 0`.
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
        LineIndex { line_starts }
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The 0-based line holding byte `offset` (an offset past the end is on the last line).
    pub fn line_of(&self, offset: u32) -> usize {
        self.line_starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// The byte offset where 0-based `line` starts, if the text has that many lines.
    pub fn line_start(&self, line: usize) -> Option<u32> {
        self.line_starts.get(line).copied()
    }

    /// The line and column of `offset` in `text` (the text this index was built from).
    /// An offset past the end, or inside a UTF-8 sequence, is clamped rather than panicking.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let offset = offset.min(u32::try_from(text.len()).unwrap_or(u32::MAX));
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let mut end = offset as usize;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let col = text.get(start..end).map_or(0, |s| s.chars().count());
        LineCol {
            line: line as u32 + 1,
            col: col as u32 + 1,
        }
    }
}

#[cfg(test)]
mod tests;
