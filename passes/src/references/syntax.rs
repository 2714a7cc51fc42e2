//! Reference extraction with tree-sitter: a `design:` counts only inside a comment node of
//! the file's real syntax tree, so a string literal, a raw string, a template literal or a
//! Python docstring never yields a reference.
//!
//! Parsing is the expensive step, and most files mention no decision: a file whose text has
//! no `design:` at all is not parsed (it cannot hold a reference), which keeps a full check
//! close to the cost of reading the files. For each occurrence the smallest node covering it
//! is looked up in the tree (cost: the tree's depth), and the comment's text is read once.
//! design: design-docs.tree-sitter

use std::cell::RefCell;

use specc_ir::FileId;
use tree_sitter::{Node, Parser};

use super::comments::{
    Reference, in_comment, in_line_comments, keyword_len, keyword_positions, line_comment_markers,
    may_hold_references,
};
use super::language::Syntax;
use super::window;

/// How a file is searched for references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A tree-sitter grammar.
    Syntax(Syntax),
    /// The line-comment fallback with these markers.
    LineComments(&'static [&'static str]),
}

impl Method {
    /// The method for a file extension; `None` when specc knows no comment syntax for it, in
    /// which case the file is not a source file as far as `specc check` is concerned.
    pub fn for_extension(extension: &str) -> Option<Method> {
        Syntax::for_extension(extension)
            .map(Method::Syntax)
            .or_else(|| line_comment_markers(extension).map(Method::LineComments))
    }
}

impl Method {
    /// The method for a file by its name (no directories): build files without an
    /// extension by their name (`Dockerfile`, `Makefile`, `Justfile`, `CMakeLists.txt`,
    /// `Jenkinsfile`, …), every other file by its extension, case aside.
    pub fn for_file_name(name: &str) -> Option<Method> {
        const HASH: &[&str] = &["#"];
        const SLASHES: &[&str] = &["//"];
        let by_name = match name {
            "Dockerfile" | "Containerfile" | "Makefile" | "makefile" | "GNUmakefile"
            | "Justfile" | "justfile" | ".justfile" | "Rakefile" | "Gemfile" | "Vagrantfile"
            | "Brewfile" | "Podfile" | "Procfile" | "Tiltfile" | "Earthfile" | "Caddyfile"
            | "BUILD" | "WORKSPACE" | "CMakeLists.txt" | "requirements.txt" => Some(HASH),
            "Jenkinsfile" => Some(SLASHES),
            _ if name.starts_with("Dockerfile.") || name.starts_with("Containerfile.") => {
                Some(HASH)
            }
            _ => None,
        };
        if let Some(markers) = by_name {
            return Some(Method::LineComments(markers));
        }
        let (_, ext) = name.rsplit_once('.')?;
        Method::for_extension(&ext.to_ascii_lowercase())
    }
}

/// Every reference in `text`, found with `method`.
pub fn extract(file: FileId, method: Method, text: &str) -> Vec<Reference> {
    if !may_hold_references(text.as_bytes()) {
        return Vec::new();
    }
    match method {
        Method::Syntax(syntax) => in_syntax_tree(file, syntax, text),
        Method::LineComments(markers) => in_line_comments(file, text, markers),
    }
}

thread_local! {
    /// One parser per thread, reused across files (it keeps its allocations).
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

fn in_syntax_tree(file: FileId, syntax: Syntax, text: &str) -> Vec<Reference> {
    extract_windowed(file, syntax, text).unwrap_or_else(|| extract_full_parse(file, syntax, text))
}

/// The references of `text` found by parsing only the lines holding `design:`, or `None`
/// when that is not provably the same as parsing the whole file. Public for the
/// differential test, which compares it with [`extract_full_parse`].
#[doc(hidden)]
pub fn extract_windowed(file: FileId, syntax: Syntax, text: &str) -> Option<Vec<Reference>> {
    let bytes = text.as_bytes();
    let mut lines: Vec<(usize, usize)> = Vec::new();
    for at in keyword_positions(bytes) {
        if lines.last().is_some_and(|&(_, end)| at < end) {
            continue;
        }
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |p| p + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |p| at + p);
        lines.push((start, end));
    }
    let starts: Vec<usize> = lines.iter().map(|&(start, _)| start).collect();
    if !window::starts_in_code(syntax, bytes, &starts) {
        return None;
    }
    in_lines(file, syntax, text, &lines)
}

/// References found by parsing each line alone; `None` if a line does not parse cleanly on
/// its own (a statement or comment that continues on the next line), in which case only the
/// whole file tells.
fn in_lines(
    file: FileId,
    syntax: Syntax,
    text: &str,
    lines: &[(usize, usize)],
) -> Option<Vec<Reference>> {
    let mut out = Vec::new();
    for &(start, end) in lines {
        // Leading white space changes nothing, and Python reads it as an indent.
        let start = start + (text[start..end].len() - text[start..end].trim_start().len());
        let line = &text[start..end];
        // In JavaScript a line starting with `/` may continue a division from the line
        // before (there is no semicolon insertion before `/`); alone it would be a regex.
        let js = matches!(syntax, Syntax::JavaScript | Syntax::TypeScript);
        if js && line.starts_with('/') && !line.starts_with("//") && !line.starts_with("/*") {
            return None;
        }
        // `<!--` and `-->` are comments or operators depending on what came before.
        if js && (line.contains("<!--") || line.contains("-->")) {
            return None;
        }
        let tree = parse(syntax, line)?;
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        in_comments_of(file, root, line, start, &mut out);
    }
    Some(out)
}

fn parse(syntax: Syntax, text: &str) -> Option<tree_sitter::Tree> {
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser.set_language(&syntax.language()).ok()?;
        parser.parse(text, None)
    })
}

/// Whether the whole file parses without a syntax error. Windowed extraction is promised
/// to equal the whole-file parse on such files; on files with errors, tree-sitter's error
/// recovery decides what is a comment, and no smaller parse can promise to guess the same.
#[doc(hidden)]
pub fn parses_cleanly(syntax: Syntax, text: &str) -> bool {
    parse(syntax, text).is_some_and(|t| !t.root_node().has_error())
}

/// The reference behaviour: every reference in `text`, found by parsing the whole file.
/// [`extract`] gives the same result, parsing less when it safely can; tests compare them.
pub fn extract_full_parse(file: FileId, syntax: Syntax, text: &str) -> Vec<Reference> {
    let Some(tree) = parse(syntax, text) else {
        // A grammar that fails to load or a parse that gives up: the fallback still finds
        // line comments, and says nothing about strings it cannot see.
        let markers = line_comment_markers_for(syntax);
        return in_line_comments(file, text, markers);
    };
    let mut out = Vec::new();
    in_comments_of(file, tree.root_node(), text, 0, &mut out);
    out
}

/// The references in the comments of `root`, a tree over `text`, which starts at byte
/// `base` of the file.
fn in_comments_of(file: FileId, root: Node<'_>, text: &str, base: usize, out: &mut Vec<Reference>) {
    let mut searched_to = 0;
    let bytes = text.as_bytes();
    for at in keyword_positions(bytes) {
        if at < searched_to {
            continue; // inside a comment already read
        }
        let Some(comment) = root
            .descendant_for_byte_range(at, at + keyword_len(bytes, at))
            .and_then(enclosing_comment)
        else {
            continue;
        };
        let range = comment.byte_range();
        in_comment(file, &text[range.clone()], base + range.start, out);
        searched_to = range.end;
    }
}

/// The comment node `node` lies in, if any. Comment kinds are `comment`, `line_comment` and
/// `block_comment`; Rust puts a `doc_comment` inside those, so the parent is looked at too
/// (`parent` walks down from the root, so it is asked once, not in a loop).
fn enclosing_comment(node: Node<'_>) -> Option<Node<'_>> {
    let parent = node.parent().filter(|p| is_comment(*p));
    match parent {
        Some(p) => Some(p),
        None => is_comment(node).then_some(node),
    }
}

fn is_comment(node: Node<'_>) -> bool {
    node.kind().ends_with("comment")
}

fn line_comment_markers_for(syntax: Syntax) -> &'static [&'static str] {
    match syntax {
        Syntax::Python => &["#"],
        _ => &["//"],
    }
}
