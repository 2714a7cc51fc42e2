//! `design: <id>` and `design: <id>@<pin>` references to decisions, and `req: <id>`
//! references to requirements, in source comments.
//!
//! This module holds the language-independent part: the reference syntax inside a comment's
//! text, and the line-comment fallback for files no tree-sitter grammar covers (issue 3 adds
//! the grammars). The fallback tracks string literals on each line so that a `//` or `#`
//! inside a string starts no comment, and `design:` inside a string is never a reference.
//! design: design-docs.references

mod comments;
mod language;
mod syntax;
mod window;

pub use syntax::{Method, extract, extract_full_parse, extract_windowed, parses_cleanly};

pub use comments::{
    RefKind, Reference, in_comment, in_line_comments, line_comment_markers, may_hold_references,
    requirement_id_len,
};
pub use language::Syntax;

#[cfg(test)]
mod tests;
