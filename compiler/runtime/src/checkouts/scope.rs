//! Write scopes: the globs a task may write, matched for real (globset), and the paths no
//! task may ever write (`.specc/`, `.git/`, anything that leaves the checkout).
//! design: runtime.tools

use globset::{GlobSet, GlobSetBuilder};

/// A compiled write scope.
#[derive(Clone, Debug)]
pub struct Scope {
    patterns: Vec<String>,
    /// Patterns with no glob character, normalised: matched by comparison (most scopes are
    /// file lists, and compiling a glob set per attempt is most of a scope's cost).
    literals: Vec<String>,
    set: GlobSet,
    /// Each pattern's literal prefix, and that prefix normalised: what [`Scope::overlaps`]
    /// compares, made once (the scheduler compares every ready leaf's scope with every
    /// running leaf's).
    prefixes: Vec<(String, Option<String>)>,
}

/// Why a path may not be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denied {
    /// Not a relative path inside the checkout (absolute, `..`, empty, backslashes).
    NotRelative,
    /// Under `.specc/` or `.git/`: specc's state and the export's metadata.
    Reserved,
    /// Outside the task's write scope.
    OutsideScope,
}

impl Scope {
    /// Compiles `patterns`. A pattern with no glob characters also covers everything below
    /// it (`src/store` covers `src/store/page.rs`). Patterns that do not compile are left
    /// out (the planner's checks report them); an empty scope allows nothing.
    pub fn new(patterns: &[String]) -> Scope {
        let mut builder = GlobSetBuilder::new();
        let mut literals = Vec::new();
        let mut globs = 0;
        for p in patterns {
            let p = p.trim().trim_start_matches("./").trim_end_matches('/');
            if p.is_empty() {
                continue;
            }
            // A plain path already in normal form is compared; anything else (`a//b`,
            // `./x/../y`) goes to globset, which decides what it matches.
            if !p.contains(GLOB_CHARS) && normalise(p).as_deref() == Some(p) {
                literals.push(p.to_owned());
                continue;
            }
            globs += 1;
            for candidate in [p.to_owned(), format!("{p}/**")] {
                if let Ok(g) = globset::GlobBuilder::new(&candidate)
                    .literal_separator(true)
                    .build()
                {
                    builder.add(g);
                }
            }
        }
        let set = if globs == 0 {
            GlobSet::empty()
        } else {
            builder.build().unwrap_or_else(|_| GlobSet::empty())
        };
        let prefixes = patterns
            .iter()
            .map(|p| {
                let prefix = literal_prefix(p);
                let normal = normalise(&prefix);
                (prefix, normal)
            })
            .collect();
        Scope {
            patterns: patterns.to_vec(),
            literals,
            set,
            prefixes,
        }
    }

    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether the task may write `path` (relative to the checkout).
    pub fn check(&self, path: &str) -> Result<(), Denied> {
        let path = normalise(path).ok_or(Denied::NotRelative)?;
        if reserved(&path) {
            return Err(Denied::Reserved);
        }
        if self.matches(&path) {
            Ok(())
        } else {
            Err(Denied::OutsideScope)
        }
    }

    /// Whether a normalised path is in the scope.
    fn matches(&self, path: &str) -> bool {
        self.literals.iter().any(|l| {
            path == l
                || (path.len() > l.len()
                    && path.starts_with(l.as_str())
                    && path.as_bytes()[l.len()] == b'/')
        }) || (!self.set.is_empty() && self.set.is_match(path))
    }

    pub fn allows(&self, path: &str) -> bool {
        self.check(path).is_ok()
    }

    /// Whether a pattern names `path`'s file itself (not only a directory or glob it falls
    /// under): its last part appears in the pattern as written.
    pub fn names(&self, path: &str) -> bool {
        let name = path.rsplit('/').next().unwrap_or(path);
        self.patterns
            .iter()
            .any(|p| p.rsplit('/').next().is_some_and(|last| last == name))
    }

    /// Whether two scopes could name one file. Conservative: two patterns overlap when one
    /// matches the other's literal prefix or their literal prefixes are prefixes of each
    /// other, so disjoint directories never overlap and anything unclear does.
    pub fn overlaps(&self, other: &Scope) -> bool {
        self.prefixes.iter().any(|(pa, na)| {
            other.prefixes.iter().any(|(pb, nb)| {
                pa.starts_with(pb.as_str())
                    || pb.starts_with(pa.as_str())
                    || nb.as_deref().is_some_and(|p| self.matches(p))
                    || na.as_deref().is_some_and(|p| other.matches(p))
            })
        })
    }
}

/// A relative, normalised form of `path` (`./a//b` → `a/b`), or `None` if it is absolute,
/// empty, climbs with `..`, or holds a backslash or a NUL.
pub(crate) fn normalise(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') || path.contains('\0') {
        return None;
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

/// What makes a pattern a glob rather than a path (globset's syntax, its escape included).
const GLOB_CHARS: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];

/// `.specc/` and `.git/` at any depth are never written by a task, nor specc's own inputs at
/// the root — the spec, `specc.toml`, `specc-drift.json` — which an adopted repository holds
/// beside its code (design: driver.adopt): a task that rewrote the configuration could
/// loosen the sandbox or send the next build's keys elsewhere.
pub(crate) fn reserved(path: &str) -> bool {
    matches!(path, "specc.toml" | "specc-drift.json" | "spec.md")
        || path.split('/').any(|p| p == ".specc" || p == ".git")
}

/// The part of a glob before its first glob character, without a trailing partial name.
fn literal_prefix(pattern: &str) -> String {
    let p = pattern.trim().trim_start_matches("./");
    match p.find(['*', '?', '[', '{']) {
        Some(i) => p[..i].to_owned(),
        None => p.trim_end_matches('/').to_owned(),
    }
}

/// Where a split of `path` puts its modules: `dir/stem/` (`src/store.rs` → `src/store/`;
/// design: runtime.megafile).
pub(crate) fn module_dir(path: &str) -> String {
    let (dir, file) = path.rsplit_once('/').map_or(("", path), |(d, f)| (d, f));
    let stem = file.split_once('.').map_or(file, |(s, _)| s);
    if dir.is_empty() {
        stem.to_owned()
    } else {
        format!("{dir}/{stem}")
    }
}

#[cfg(test)]
mod tests;
