//! The commands a sandboxed command can run by name: the executables of the `PATH` it
//! inherits, in the directories the sandbox lets it read (the system's, the toolchains',
//! and what specc.toml's `[sandbox] read` adds). A plan's acceptance entries are checked
//! against them before any worker runs (design: passes.plan-acceptance).
//! design: runtime.sandbox

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::confine::{SYSTEM_READABLE, toolchain_dirs};

/// The names of the commands on this process's `PATH` that a sandboxed command may run:
/// regular files (or links to them) with an execute bit, in a `PATH` directory inside one
/// the sandbox lets it read, `readable` included. Sorted, each once.
pub fn commands_on_path(readable: &[PathBuf]) -> Vec<String> {
    let mut names = Vec::new();
    for dir in sandbox_path_dirs(readable) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let executable = std::fs::metadata(e.path())
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
            if executable && let Some(name) = e.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

/// The directories of this process's `PATH` that lie inside one the sandbox lets a command
/// read (the system's, the toolchains', `readable`), in order: the `PATH` a sandboxed
/// command gets. A directory outside them could only fail (`Permission denied`), and worse,
/// mislead: Python's `sys.executable` names the first `python3` on `PATH`, a pyenv shim
/// the sandbox cannot run, although `/usr/bin/python3` runs.
pub(crate) fn sandbox_path_dirs(readable: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = SYSTEM_READABLE.iter().map(PathBuf::from).collect();
    roots.extend(toolchain_dirs());
    roots.extend(readable.iter().cloned());
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| {
            let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            roots.iter().any(|r| inside(&real, r))
        })
        .collect()
}

/// Whether `dir` is `root` or below it (`root` resolved as the sandbox resolves it).
fn inside(dir: &Path, root: &Path) -> bool {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    dir.starts_with(root)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shell_is_among_them_and_nothing_outside_the_readable_directories() {
        let names = super::commands_on_path(&[]);
        assert!(names.iter().any(|n| n == "sh"), "{names:?}");
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
    }
}
