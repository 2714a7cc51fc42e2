//! Files the ecosystems' tools write as they build and test, and what becomes of them when
//! a task's commands write one (design: runtime.generated-files). A lock file outside the
//! task's write scope stays in its checkout, so the checks run with it, and does not land
//! (a task that names it in its scope lands it like any file); a cache never lands and is
//! never compared. Either way nothing is undone by surprise, and the worker is told so.
//! design: runtime.generated-files

/// What a generated file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Generated {
    /// A lock file: the dependency resolution a package manager wrote.
    Lockfile,
    /// A cache or build product (bytecode, a test runner's cache, installed packages).
    Cache,
}

/// Lock files, by name.
pub(crate) const LOCKFILES: &[&str] = &[
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "pdm.lock",
    "Gemfile.lock",
    "composer.lock",
    "go.sum",
    "mix.lock",
    "pubspec.lock",
    "flake.lock",
];

/// Directories of caches and build products, by name, anywhere in the tree.
pub(crate) const CACHE_DIRS: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".venv",
    "node_modules",
    ".gradle",
    ".next",
    ".cache",
    "zig-cache",
    ".zig-cache",
];

/// File endings of caches, anywhere in the tree.
const CACHE_ENDINGS: &[&str] = &[".pyc", ".pyo", ".class", ".o", ".egg-info"];

/// What `path` (relative to the checkout's root) is, if the tools generate it.
pub(crate) fn generated(path: &str) -> Option<Generated> {
    let mut parts = path.split('/');
    let name = parts.next_back()?;
    if parts
        .clone()
        .any(|d| CACHE_DIRS.contains(&d) || d.ends_with(".egg-info"))
    {
        return Some(Generated::Cache);
    }
    if CACHE_ENDINGS.iter().any(|e| name.ends_with(e)) || name == ".coverage" {
        return Some(Generated::Cache);
    }
    LOCKFILES.contains(&name).then_some(Generated::Lockfile)
}

/// What a worker is told of them: short, since every task reads it.
pub(crate) fn briefing() -> String {
    "Lock files your commands write (`Cargo.lock`, `package-lock.json`, `poetry.lock`, …) stay \
     in your checkout for the checks but land only if your write scope names them; caches \
     (`__pycache__`, `node_modules`, `*.pyc`, …) never land. Neither is undone."
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_files_and_caches_by_ecosystem() {
        assert_eq!(generated("Cargo.lock"), Some(Generated::Lockfile));
        assert_eq!(
            generated("web/package-lock.json"),
            Some(Generated::Lockfile)
        );
        assert_eq!(
            generated("src/__pycache__/m.cpython-311.pyc"),
            Some(Generated::Cache)
        );
        assert_eq!(generated("pkg/mod.pyc"), Some(Generated::Cache));
        assert_eq!(
            generated("web/node_modules/a/index.js"),
            Some(Generated::Cache)
        );
        assert_eq!(
            generated("semver.egg-info/PKG-INFO"),
            Some(Generated::Cache)
        );
        assert_eq!(generated("src/lib.rs"), None);
        assert_eq!(generated("docs/Cargo.lock.md"), None);
        assert!(briefing().contains("Cargo.lock"));
    }
}
