//! What a point of the series measures of the tree besides its score: lines of code, how
//! many packages it holds, and the most-conflicted file with its line count.
//! design: eval.series

use specc_vcs::FileList;

/// Manifests that make a directory a package of its own. A `Cargo.toml` counts only with a
/// `[package]` table (a workspace's root manifest is not a crate).
const MANIFESTS: &[&str] = &[
    "Cargo.toml",
    "package.json",
    "pyproject.toml",
    "setup.py",
    "go.mod",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "composer.json",
    "Gemfile",
    "mix.exs",
];

/// The tree's measures at one commit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Lines of the text files (a file with a NUL byte in its first 8 KiB is binary).
    pub lines: u64,
    pub files: u64,
    pub packages: u64,
    /// The file with the most conflicts so far, and its lines at this commit (0 if it is
    /// not in the tree).
    pub hottest: Option<(String, u64, u64)>,
}

impl Metrics {
    /// Measures `files`; `conflicts` is per path, hottest first.
    pub fn of(files: &FileList, conflicts: &[(String, u64)]) -> Metrics {
        let mut m = Metrics::default();
        for f in files {
            m.files += 1;
            m.lines += text_lines(&f.bytes).unwrap_or(0);
            let name = f.path.rsplit('/').next().unwrap_or(&f.path);
            if MANIFESTS.contains(&name) && (name != "Cargo.toml" || is_crate(&f.bytes)) {
                m.packages += 1;
            }
        }
        m.hottest = conflicts.iter().find(|(_, n)| *n > 0).map(|(path, n)| {
            let lines = files
                .binary_search_by(|f| f.path.as_str().cmp(path))
                .ok()
                .and_then(|i| text_lines(&files[i].bytes))
                .unwrap_or(0);
            (path.clone(), *n, lines)
        });
        m
    }
}

/// Lines of a text file (a last line without a newline counts); `None` for a binary one.
fn text_lines(bytes: &[u8]) -> Option<u64> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
    Some(newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n")))
}

fn is_crate(manifest: &[u8]) -> bool {
    String::from_utf8_lossy(manifest)
        .lines()
        .any(|l| l.trim() == "[package]")
}

#[cfg(test)]
mod tests {
    use specc_vcs::FileEntry;

    use super::*;

    fn file(path: &str, text: &[u8]) -> FileEntry {
        FileEntry {
            path: path.to_owned(),
            bytes: text.to_vec(),
            executable: false,
        }
    }

    #[test]
    fn lines_packages_and_the_hottest_file() {
        let files = vec![
            file("Cargo.toml", b"[workspace]\nmembers = [\"a\"]\n"),
            file("a/Cargo.toml", b"[package]\nname = \"a\"\n"),
            file("a/src/lib.rs", b"fn a() {}\nfn b() {}"),
            file("img.png", b"\x89PNG\0\0\n\n\n"),
            file("web/package.json", b"{}\n"),
        ];
        let m = Metrics::of(
            &files,
            &[("a/src/lib.rs".to_owned(), 3), ("x".to_owned(), 1)],
        );
        assert_eq!(m.files, 5);
        assert_eq!(m.lines, 2 + 2 + 2 + 1);
        assert_eq!(m.packages, 2);
        assert_eq!(m.hottest, Some(("a/src/lib.rs".to_owned(), 3, 2)));
        assert_eq!(Metrics::of(&files, &[]).hottest, None);
    }
}
