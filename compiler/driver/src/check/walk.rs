//! Walking the checked tree: which files are design documents, which are sources, and what
//! could not be read. Files are read on the walker's threads, so a cold check reads the tree
//! about as fast as `grep -r` does.
//! design: driver.check-walk

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::{WalkBuilder, WalkState};
use specc_ir::{Diagnostic, codes};
use specc_passes::references::Method;

/// Source files larger than this are not searched (W0212).
pub(crate) const MAX_SOURCE_BYTES: u64 = 8 << 20;

/// The directory, directly under the checked root, that holds design documents.
pub(crate) const DESIGN_DOCS: &str = "design-docs";

/// What a file is to `specc check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Doc,
    Source(Method),
}

/// How a path under the root is classified, without reading it: `None` for files `specc
/// check` does not look at.
pub(crate) fn classify(rel: &Path) -> Option<Kind> {
    if rel.starts_with(DESIGN_DOCS) {
        let ext = rel.extension()?.to_str()?;
        return (ext == "md").then_some(Kind::Doc);
    }
    // Build files without an extension (Dockerfile, Makefile, …) by their name.
    Method::for_file_name(rel.file_name()?.to_str()?).map(Kind::Source)
}

/// One file read.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The path as shown to users: the root as given, joined with the relative path.
    pub(crate) shown: String,
    /// The path on disk.
    pub(crate) path: PathBuf,
    pub(crate) kind: Kind,
    pub(crate) text: Arc<str>,
}

/// The result of a walk, sorted by path so that output is stable.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) entries: Vec<Entry>,
    /// W0211–W0213, one per path skipped.
    pub(crate) skipped: Vec<(String, Diagnostic)>,
}

/// Walks `root` on `threads` threads, honouring `.gitignore` (in a git repository or not),
/// `.ignore` and `.speccignore`, skipping hidden files and following symbolic links (a loop is
/// reported, not followed).
pub(crate) fn walk(root: &Path, threads: usize) -> Walked {
    walk_from(root, root, threads)
}

/// [`walk`] restricted to `start`, a directory under `root`; paths stay relative to `root`.
pub(crate) fn walk_from(root: &Path, start: &Path, threads: usize) -> Walked {
    let found = Mutex::new(Walked::default());
    let mut builder = WalkBuilder::new(start);
    builder
        .follow_links(true)
        .require_git(false)
        .add_custom_ignore_filename(".speccignore")
        .threads(threads);
    builder.build_parallel().run(|| {
        let found = &found;
        Box::new(move |entry| {
            let outcome = match entry {
                Ok(entry) => visit(root, entry.path(), entry.file_type()),
                Err(e) => Some(Err(skipped_path(root, &e))),
            };
            if let Some(outcome) = outcome
                && let Ok(mut found) = found.lock()
            {
                match outcome {
                    Ok(e) => found.entries.push(e),
                    Err(s) => found.skipped.push(*s),
                }
            }
            WalkState::Continue
        })
    });
    let mut walked = found.into_inner().unwrap_or_default();
    walked.entries.sort_by(|a, b| a.path.cmp(&b.path));
    walked.skipped.sort_by(|a, b| a.0.cmp(&b.0));
    walked
}

type Skipped = Box<(String, Diagnostic)>;

fn visit(
    root: &Path,
    path: &Path,
    file_type: Option<std::fs::FileType>,
) -> Option<Result<Entry, Skipped>> {
    if !file_type.is_some_and(|t| t.is_file()) {
        return None;
    }
    let rel = path.strip_prefix(root).unwrap_or(path);
    let kind = classify(rel)?;
    let shown = shown(root, rel);
    Some(read(path, &shown).map(|text| Entry {
        shown,
        path: path.to_owned(),
        kind,
        text,
    }))
}

/// Reads one file that should be text. Errors are warnings: one unreadable file does not stop
/// a check of thousands.
pub(crate) fn read(path: &Path, shown: &str) -> Result<Arc<str>, Skipped> {
    let skip = |code, message: String, help: &str| {
        Err(Box::new((
            shown.to_owned(),
            Diagnostic::new(code, message).with_help(help.to_owned()),
        )))
    };
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if len > MAX_SOURCE_BYTES {
        return skip(
            codes::SOURCE_TOO_LARGE,
            format!(
                "`{shown}` is {} MiB; sources over 8 MiB are not searched",
                len >> 20
            ),
            "generated files belong in .speccignore; hand-written code this large should be split",
        );
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            return skip(
                codes::PATH_SKIPPED,
                format!("`{shown}` could not be read: {e}"),
                "check its permissions, or list it in .speccignore",
            );
        }
    };
    if let Some(at) = memchr::memchr(0, &bytes) {
        return skip(
            codes::SOURCE_NOT_TEXT,
            format!("`{shown}` looks binary (a NUL byte at offset {at}); not searched"),
            "list binary files in .speccignore",
        );
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text.into()),
        Err(e) => skip(
            codes::SOURCE_NOT_TEXT,
            format!(
                "`{shown}` is not UTF-8 (invalid byte at offset {}); not searched",
                e.utf8_error().valid_up_to()
            ),
            "convert the file to UTF-8, or list it in .speccignore",
        ),
    }
}

/// `root` joined with `rel` as a user would write it: no `./` in front, `/` between.
pub(crate) fn shown(root: &Path, rel: &Path) -> String {
    let rel = rel.to_string_lossy().replace('\\', "/");
    let root = root.to_string_lossy();
    let root = root.trim_end_matches('/');
    if root.is_empty() || root == "." {
        rel
    } else {
        format!("{root}/{rel}")
    }
}

#[cold]
fn skipped_path(root: &Path, e: &ignore::Error) -> Skipped {
    let (path, what) = describe(e);
    let shown = path.map_or_else(
        || root.display().to_string(),
        |p| shown(root, p.strip_prefix(root).unwrap_or(&p)),
    );
    Box::new((
        shown.clone(),
        Diagnostic::new(codes::PATH_SKIPPED, format!("`{shown}` skipped: {what}"))
            .with_help("fix the link or the permissions, or list the path in .speccignore"),
    ))
}

/// The path an error is about and what went wrong, in words.
fn describe(e: &ignore::Error) -> (Option<PathBuf>, String) {
    match e {
        ignore::Error::Loop { ancestor, child } => (
            Some(child.clone()),
            format!(
                "a symbolic link loops back to its ancestor `{}`",
                ancestor.display()
            ),
        ),
        ignore::Error::WithPath { path, err } => {
            let (inner, what) = describe(err);
            (inner.or_else(|| Some(path.clone())), what)
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            describe(err)
        }
        ignore::Error::Io(io) => (None, io.to_string()),
        other => (None, other.to_string()),
    }
}
