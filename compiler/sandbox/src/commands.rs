//! The commands a sandboxed command can run by name: the executables of the `PATH` it
//! inherits, in the directories the sandbox lets it read (the system's, the toolchains',
//! and what specc.toml's `[sandbox] read` adds). A plan's acceptance entries are checked
//! against them before any worker runs (design: passes.plan-acceptance).
//! design: runtime.sandbox

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use crate::confine::sandbox_path_dirs;

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

#[cfg(test)]
mod tests {
    #[test]
    fn the_shell_is_among_them_and_nothing_outside_the_readable_directories() {
        let names = super::commands_on_path(&[]);
        assert!(names.iter().any(|n| n == "sh"), "{names:?}");
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted, each once");
    }
}
