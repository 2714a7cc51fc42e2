//! What a checkout's tree holds for specc: the top-level directories a new checkout keeps
//! and a diff ignores, the ones a walk does not enter, and the walk itself.
//! design: runtime.workspace

use std::path::Path;

/// Top-level entries of a checkout that a new checkout keeps and a diff ignores.
pub(crate) const KEPT: &[&str] = &[".git", "target"];

/// Top-level directories no listing, search or diff descends into.
pub(super) const SKIPPED: &[&str] = &[".git", ".specc", "target", "node_modules"];

/// Every file under `root` (relative paths), without build output or specc's state.
pub(crate) fn walk_files(root: &Path, out: &mut Vec<String>) {
    walk(root, root, out);
}

/// Every regular file under `dir`, as paths relative to `root`, without following links or
/// entering the top-level [`SKIPPED`] entries.
pub(crate) fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if d == root && SKIPPED.contains(&name.as_str()) {
                // A top-level `.git` is a directory or the file naming the checkout's git
                // view (design: vcs.checkout-view): never part of the tree.
                continue;
            }
            if ft.is_dir() {
                stack.push(path);
            } else if ft.is_file()
                && let Ok(rel) = path.strip_prefix(root)
            {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
}

/// Paths a walk of the checkout does not see: under a top-level skipped directory.
pub(crate) fn skipped(path: &str) -> bool {
    let top = path.split('/').next().unwrap_or_default();
    SKIPPED.contains(&top)
}
