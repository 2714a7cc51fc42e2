//! `specc pin FILE[:LINE] [--root DIR]`: rewrite stale pins once the code has been revisited.
//!
//! Without a line, every stale pin in the file is rewritten (unpinned references are left as
//! they are). With a line, the references on that line are pinned to the current decision
//! whether they had a pin or not: naming the line is the statement "I revisited this". The
//! file is replaced atomically (a sibling temporary file renamed over it), so an interrupted
//! pin leaves the old file or the new one, never half of each.
//! design: driver.pin

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_ir::{DesignDecision, Diagnostic, FileId, codes};
use specc_passes::design_docs::{self, Resolution};
use specc_passes::references::{self, Method};

use crate::check::walk;
use crate::cli::PinArgs;
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &PinArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter =
        Reporter::new(args.messages.message_format, env).with_limit(args.messages.error_limit());
    let mut files = Files::default();
    match pin(&args.target, args.root.as_deref(), &mut files, out) {
        Ok(diagnostics) => {
            for d in &diagnostics {
                reporter.report(&files, d, err);
            }
            reporter.finish(err)
        }
        Err(d) => {
            reporter.report(&files, &d, err);
            exit::USAGE
        }
    }
}

/// Pins what can be pinned at `target` (`FILE[:LINE]`) under `root` (found from the file
/// when `None`); returns diagnostics about what could not.
pub(crate) fn pin(
    target: &str,
    root: Option<&Path>,
    files: &mut Files,
    out: &mut dyn Write,
) -> Result<Vec<Diagnostic>, Box<Diagnostic>> {
    let Target {
        path,
        line,
        shown,
        method,
        root,
    } = locate(target, root)?;
    let decisions = load_decisions(&root, files);
    let text = walk::read(&path, &shown).map_err(|s| Box::new(s.1))?;
    let file = files.add(shown.clone(), text.clone());
    let index = design_docs::index(&decisions);
    let mut refs = references::extract(file, method, &text);
    // Only decisions have pins.
    refs.retain(|r| r.kind == references::RefKind::Decision);
    let mut diagnostics = Vec::new();
    let mut edits: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    let mut at_place = 0;
    for r in &refs {
        let r_line = files.line_col(file, r.span.start).line as usize;
        if line.is_some_and(|l| l != r_line) {
            continue;
        }
        at_place += 1;
        let resolution = design_docs::resolve(&r.id, &index, &decisions);
        let Resolution::Current { pin } = &resolution else {
            diagnostics.extend(design_docs::reference_diagnostic(r, &resolution, &index));
            continue;
        };
        let stale = r.pin.as_ref().is_some_and(|p| p != pin);
        if stale || (line.is_some() && r.pin.is_none()) {
            let _ = writeln!(
                out,
                "{shown}:{r_line}: `design: {}@{pin}` (was {})",
                r.id,
                r.pin
                    .as_deref()
                    .map_or("unpinned".to_owned(), |p| format!("@{p}"))
            );
            edits.push(pin_edit(&text, r.span.range(), r.pin.is_some(), pin));
        }
    }
    if at_place == 0 {
        let place = line.map_or(shown.clone(), |l| format!("{shown}:{l}"));
        diagnostics.push(
            Diagnostic::new(
                codes::NO_REFERENCE_TO_PIN,
                format!("no `design:` reference in a comment at {place}"),
            )
            .with_help(
                "`specc check` prints the place of every stale pin; give that file and line",
            ),
        );
    } else if edits.is_empty() && diagnostics.is_empty() {
        let _ = writeln!(out, "{shown}: every pin is current");
    }
    if !edits.is_empty() {
        write_edits(&path, &text, edits).map_err(|e| {
            usage(
                codes::IO_ERROR,
                format!("cannot rewrite `{shown}`: {e}"),
                "check the file's permissions; it was left unchanged",
            )
        })?;
    }
    Ok(diagnostics)
}

/// What `specc pin TARGET` points at: the file (as given, and as shown), the line if any,
/// its comment syntax, and the checked tree's root.
struct Target {
    path: std::path::PathBuf,
    line: Option<usize>,
    shown: String,
    method: Method,
    root: std::path::PathBuf,
}

/// The target's file, which must be a source file specc reads the comments of, and the
/// root (`root`, else the nearest directory above it with `design-docs/`).
fn locate(target: &str, root: Option<&Path>) -> Result<Target, Box<Diagnostic>> {
    let (path, line) = split_target(target);
    let shown = path.display().to_string();
    let method = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(Method::for_file_name)
        .ok_or_else(|| {
            usage(
                codes::NOT_A_FILE,
                format!("`{shown}` is not a source file specc knows the comments of"),
                "specc pins references in the source files `specc check` searches",
            )
        })?;
    if !path.is_file() {
        return Err(usage(
            codes::FILE_NOT_FOUND,
            format!("`{shown}` does not exist or is not a file"),
            "give the file as `specc check` printed it, e.g. `src/store.rs:42`",
        ));
    }
    let root = match root {
        Some(root) => root.to_path_buf(),
        None => find_root(&path).ok_or_else(|| {
            usage(
                codes::FILE_NOT_FOUND,
                format!("no `design-docs/` directory above `{shown}`"),
                "run from the checked tree, or name it with --root",
            )
        })?,
    };
    Ok(Target {
        path,
        line,
        shown,
        method,
        root,
    })
}

/// `FILE:LINE` → (FILE, LINE); a target whose last `:` is not followed by a number is a path.
fn split_target(target: &str) -> (PathBuf, Option<usize>) {
    match target.rsplit_once(':') {
        Some((file, line)) if !file.is_empty() => match line.parse::<usize>() {
            Ok(line) => (PathBuf::from(file), Some(line)),
            Err(_) => (PathBuf::from(target), None),
        },
        _ => (PathBuf::from(target), None),
    }
}

/// The nearest ancestor of `path` with a `design-docs/` directory.
fn find_root(path: &Path) -> Option<PathBuf> {
    let start = std::fs::canonicalize(path).ok()?;
    start
        .ancestors()
        .skip(1)
        .find(|dir| dir.join(walk::DESIGN_DOCS).is_dir())
        .map(Path::to_path_buf)
}

/// Every decision under `root/design-docs/`, its documents added to `files`.
fn load_decisions(root: &Path, files: &mut Files) -> Vec<DesignDecision> {
    let mut decisions = Vec::new();
    let walked = walk::walk_from(root, &root.join(walk::DESIGN_DOCS), 1);
    for entry in walked.entries {
        if entry.kind == walk::Kind::Doc {
            let id: FileId = files.add(entry.shown, entry.text.clone());
            decisions.extend(design_docs::parse_design_doc(id, &entry.text).0);
        }
    }
    // The decisions the spec fixes itself (`spec.md` at the root), as `specc check` resolves
    // them: after the recorded ones, which win.
    let spec = root.join("spec.md");
    if let Ok(text) = std::fs::read_to_string(&spec) {
        let id: FileId = files.add(spec.display().to_string(), text.as_str().into());
        let tree = specc_passes::parse_spec(id, &text).tree;
        for d in design_docs::from_spec(&tree) {
            if !decisions.iter().any(|known| known.id == d.id) {
                decisions.push(d);
            }
        }
    }
    decisions
}

/// The edit that pins the reference at `span` to `pin`, touching nothing else of what was
/// written: an existing pin's 8 digits are replaced; otherwise `@pin` goes after the id, in
/// place of a malformed pin (`@123`, `@0123456789`) if one follows.
fn pin_edit(
    text: &str,
    span: std::ops::Range<usize>,
    pinned: bool,
    pin: &str,
) -> (std::ops::Range<usize>, String) {
    if pinned {
        return (span.end - 8..span.end, pin.to_owned());
    }
    let rest = &text[span.end..];
    let malformed = match rest.strip_prefix('@') {
        Some(tail) => {
            1 + tail.len()
                - tail
                    .trim_start_matches(|c: char| c.is_ascii_alphanumeric())
                    .len()
        }
        None => 0,
    };
    (span.end..span.end + malformed, format!("@{pin}"))
}

/// Applies `edits` (non-overlapping byte ranges) and replaces the file atomically.
fn write_edits(
    path: &Path,
    text: &Arc<str>,
    mut edits: Vec<(std::ops::Range<usize>, String)>,
) -> std::io::Result<()> {
    edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    let mut new = text.to_string();
    for (range, replacement) in edits {
        new.replace_range(range, &replacement);
    }
    // Write through a symbolic link to its target, as an editor would.
    let path = std::fs::canonicalize(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.{}.{nonce}.specc-pin", std::process::id()));
    let permissions = std::fs::metadata(&path)?.permissions();
    let written = (|| {
        // `create_new` never follows or reuses an existing path.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(new.as_bytes())?;
        f.sync_all()?;
        std::fs::set_permissions(&tmp, permissions)?;
        std::fs::rename(&tmp, &path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cold]
fn usage(code: &'static str, message: String, help: &str) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(code, message).with_help(help.to_owned()))
}
