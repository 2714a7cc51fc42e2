//! `edit` (one exact, unique occurrence) and `write` (a whole file), inside the write scope.

use std::os::unix::fs::PermissionsExt;

use serde::Deserialize;

use specc_plan::field_guide::PATH as GUIDE;

use super::outcome::ToolOutcome;
use super::toolbox::Toolbox;
use crate::checkouts::{fill, mode_of, open_regular};

#[derive(Deserialize)]
pub(super) struct Edit {
    path: String,
    old: String,
    new: String,
}

pub(super) fn edit(t: &Toolbox, a: Edit) -> ToolOutcome {
    let (rel, path) = match t.writable_file(&a.path) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolOutcome::error(format!("`{rel}` does not exist; create it with `write`"));
        }
        Err(e) => return ToolOutcome::error(format!("`{rel}`: {e}")),
    };
    if a.old.is_empty() {
        return ToolOutcome::error("`old` is empty; give the exact text to replace");
    }
    let n = text.matches(&a.old).count();
    match n {
        0 => ToolOutcome::error(format!(
            "`old` was found 0 times in {rel}; `read` the file and copy the text exactly, whitespace included"
        )),
        1 => {
            let updated = text.replacen(&a.old, &a.new, 1);
            if let Some(e) = guide_budget(t, &rel, &updated) {
                return e;
            }
            match std::fs::write(&path, updated) {
                Ok(()) => ToolOutcome::ok(format!("edited {rel}")),
                Err(e) => ToolOutcome::error(format!("`{rel}`: {e}")),
            }
        }
        n => ToolOutcome::error(format!(
            "`old` was found {n} times in {rel}; include more of the surrounding lines so it is unique"
        )),
    }
}

#[derive(Deserialize)]
pub(super) struct Write {
    path: String,
    content: String,
    /// Absent: the file keeps its mode (a new file is not executable).
    #[serde(default)]
    executable: Option<bool>,
}

pub(super) fn write(t: &Toolbox, a: Write) -> ToolOutcome {
    let (rel, path, meta) = match t.writable_file_as_is(&a.path) {
        Ok(p) => p,
        Err(e) => return e,
    };
    if let Some(e) = guide_budget(t, &rel, &a.content) {
        return e;
    }
    let done = || ToolOutcome::ok(format!("wrote {rel} ({} lines)", a.content.lines().count()));
    // Where the directory holds the base and would take the file, the write is kept in
    // memory and owed to the directory (design: runtime.lazy-checkouts).
    if t.as_leased(&rel)
        && let Some(was_executable) = would_take(&t.root, &path, &meta)
    {
        // A path the tools wrote into memory is owed: the directory was brought up to date
        // before this call (`needs_base`), so its mode is the last write's.
        let executable = a.executable.unwrap_or(was_executable);
        if t.tracked
            .write_later(&rel, a.content.as_bytes(), executable)
        {
            return done();
        }
    }
    // One open (design: perf.orchestration); a missing directory is made, and a file
    // without `executable` keeps its mode (a new one is not executable).
    let open = || open_regular(&path, a.executable.map_or(0o644, mode_of));
    let opened = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| open()),
        other => other,
    };
    let written = match opened {
        Ok(Some((f, meta))) => {
            let executable = a
                .executable
                .unwrap_or(meta.permissions().mode() & 0o111 != 0);
            let filled = fill(f, &meta, a.content.as_bytes(), mode_of(executable));
            if filled.is_ok() {
                t.tracked
                    .wrote_whole(&rel, a.content.as_bytes(), executable);
            }
            filled
        }
        Ok(None) => return ToolOutcome::error(format!("`{rel}` is not a regular file")),
        Err(e) => Err(e),
    };
    match written {
        Ok(()) => done(),
        Err(e) => ToolOutcome::error(format!("`{rel}`: {e}")),
    }
}

/// Whether writing the whole file `full` (under `root`; `meta` what is there now) would
/// succeed as the directory is: it is a regular file or missing, and its nearest existing
/// parent is a directory. Returns whether the file there is executable (a new one is not);
/// `None` for anything else, which the write itself then meets and reports.
fn would_take(
    root: &std::path::Path,
    full: &std::path::Path,
    meta: &std::io::Result<std::fs::Metadata>,
) -> Option<bool> {
    use std::io::ErrorKind::NotFound;
    match meta {
        Ok(m) if m.is_file() => return Some(m.permissions().mode() & 0o111 != 0),
        Err(e) if e.kind() == NotFound => {}
        _ => return None,
    }
    let mut at = full.parent();
    while let Some(dir) = at {
        match std::fs::symlink_metadata(dir) {
            Ok(m) => return m.is_dir().then_some(false),
            Err(e) if e.kind() == NotFound && dir != root => at = dir.parent(),
            Err(_) => return None,
        }
    }
    None
}

/// The field guide may not grow past its budget, however it is written.
fn guide_budget(t: &Toolbox, rel: &str, content: &str) -> Option<ToolOutcome> {
    let lines = content.lines().count();
    (rel == GUIDE && lines > t.guide_lines).then(|| {
        ToolOutcome::error(format!(
            "the field guide would have {lines} lines, over its budget of {}: condense it first",
            t.guide_lines
        ))
    })
}
