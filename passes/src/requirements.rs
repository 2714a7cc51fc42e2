//! `req: <id>` references against the spec: a reference names a requirement by the id the
//! spec gives it (its tag, `R-3`, or its full id, `storage/pages#2`). One that names no
//! requirement of the spec (misspelt, or removed from the spec since) is E0215, with the
//! nearest id as a did-you-mean.
//! design: passes.requirement-references

use specc_ir::{Diagnostic, IntentTree, codes};

use crate::references::Reference;

/// How a requirement reference resolves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReqResolution {
    /// The spec has it.
    Known,
    /// The spec has no such requirement; the closest id, when one is close.
    Unknown { closest: Option<String> },
}

/// Every requirement id of `tree`, in document order.
pub fn requirement_ids(tree: &IntentTree) -> Vec<String> {
    tree.nodes()
        .flat_map(|n| n.requirements.iter().map(|r| r.id.as_str().to_owned()))
        .collect()
}

/// How a reference to `id` resolves against `ids` (sorted).
pub fn resolve(id: &str, ids: &[String]) -> ReqResolution {
    if ids.binary_search_by(|k| k.as_str().cmp(id)).is_ok() {
        return ReqResolution::Known;
    }
    ReqResolution::Unknown {
        closest: crate::spelling::closest(id, ids.iter().map(String::as_str)).map(str::to_owned),
    }
}

/// E0215 for a reference to a requirement the spec does not have.
#[cold]
pub fn unknown(r: &Reference, closest: Option<&str>) -> Diagnostic {
    let d = Diagnostic::new(
        codes::UNKNOWN_REQUIREMENT,
        format!("the spec has no requirement `{}`", r.id),
    )
    .with_primary(r.span, "this reference");
    match closest {
        Some(near) => d.with_help(format!("did you mean `{near}`?")),
        None => d.with_help(
            "reference a requirement by the id the spec gives it (`specc plan SPEC --format json` lists them), or remove the reference if the requirement left the spec",
        ),
    }
}

/// Whether a reference at byte `offset` of the file at `path` (relative, `/`-separated) is
/// in a test rather than in the code: the file is a test by the conventions of its language
/// (`tests/`, `test/`, `__tests__/`, `spec/` directories; `test_*.py`, `*_test.py`,
/// `*_test.go`, `*.test.ts`, `*.spec.js`, `*_spec.rb`, `*Test.java`, …), or, in Rust, the
/// reference stands after the file's `#[cfg(test)]`.
pub fn is_test_site(path: &str, text: &str, offset: usize) -> bool {
    let mut parts = path.split('/');
    let name = parts.next_back().unwrap_or(path);
    let dir_says = parts.any(|d| {
        matches!(
            d,
            "tests" | "test" | "__tests__" | "spec" | "specs" | "testing" | "e2e"
        )
    });
    let stem = name.split('.').next().unwrap_or(name);
    let name_says = stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("_tests")
        || stem.ends_with("_spec")
        || stem.ends_with("Test")
        || stem.ends_with("Tests")
        || stem == "tests"
        || stem == "test"
        || name.contains(".test.")
        || name.contains(".spec.");
    if dir_says || name_says {
        return true;
    }
    path.ends_with(".rs") && in_rust_test_module(&text[..floor_char(text, offset)])
}

/// Whether `before`, a Rust file's text up to a place, opens an inline `#[cfg(test)] mod
/// name {` (a `#[cfg(test)] mod tests;` declaration opens no module here).
fn in_rust_test_module(before: &str) -> bool {
    memchr::memmem::find_iter(before.as_bytes(), b"#[cfg(test)]").any(|at| {
        let rest = before[at + "#[cfg(test)]".len()..].trim_start();
        let Some(rest) = rest.strip_prefix("mod") else {
            return false;
        };
        let rest = rest.trim_start();
        let name_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        rest[name_end..].trim_start().starts_with('{')
    })
}

/// The largest char boundary of `text` at or before `at`.
fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::is_test_site;

    #[test]
    fn tests_are_told_by_their_path_or_a_rust_test_module() {
        for path in [
            "tests/cli.rs",
            "pkg/test/a.py",
            "test_parse.py",
            "src/parse_test.go",
            "web/app.test.ts",
            "web/__tests__/x.js",
            "lib/a_spec.rb",
            "src/main/java/FooTest.java",
        ] {
            assert!(is_test_site(path, "", 0), "{path}");
        }
        for path in ["src/lib.rs", "attest.py", "src/contest/a.go", "latest.ts"] {
            assert!(!is_test_site(path, "", 0), "{path}");
        }
        let rust = "// req: R-1\nfn f() {}\n#[cfg(test)]\nmod tests {\n    // req: R-1\n}\n";
        assert!(!is_test_site("src/lib.rs", rust, 3));
        assert!(is_test_site(
            "src/lib.rs",
            rust,
            rust.rfind("req").unwrap_or(0)
        ));
        let declared = "#[cfg(test)]\nmod tests;\n\n// req: R-1\nfn f() {}\n";
        assert!(!is_test_site(
            "src/lib.rs",
            declared,
            declared.rfind("req").unwrap_or(0)
        ));
    }
}
