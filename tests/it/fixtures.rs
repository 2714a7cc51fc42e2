//! The data-driven harness over fixtures/specs: every valid spec parses with no error and its
//! IR and tree are snapshotted; every invalid spec yields the diagnostics `expected.txt` lists,
//! at the places it lists, and a non-zero exit. Adding a case is adding a file.

use std::collections::BTreeMap;

use crate::support::{fixture, root, specc};

#[test]
fn valid_specs() {
    insta::glob!("../../fixtures/specs/valid", "*.md", |path| {
        let path = path.display().to_string();
        let text = specc(&["plan", &path]);
        assert_eq!(text.code, 0, "{path}: {}", text.stderr);
        assert_eq!(text.stderr, "", "{path} has diagnostics");
        let json = specc(&["plan", &path, "--format", "json"]);
        assert_eq!(json.code, 0);
        let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("valid JSON");
        assert_eq!(value["requirement_count"], keyword_lines(&path), "{path}");
        insta::assert_snapshot!("tree", text.stdout);
        insta::assert_snapshot!("ir", json.stdout);
    });
}

#[test]
fn invalid_specs() {
    let seen = diagnostic_fixtures("invalid", |name, code| {
        assert_ne!(code, 0, "{name} must fail");
        assert_ne!(
            code, 2,
            "{name}: a spec problem is exit 1, not a usage error"
        );
    });
    assert!(seen >= 12, "{seen} invalid fixtures");
}

#[test]
fn specs_with_warnings() {
    let seen = diagnostic_fixtures("warnings", |name, code| {
        assert_eq!(code, 0, "{name}: warnings alone exit 0");
    });
    assert!(seen >= 3, "{seen} warning fixtures");
}

/// Runs every spec in `fixtures/specs/<dir>/`: the exit status is checked by `check_exit`,
/// the diagnostics must be exactly those `<dir>/expected.txt` lists, and both renderings are
/// snapshotted. Returns the number of fixtures run.
fn diagnostic_fixtures(dir: &str, check_exit: impl Fn(&str, i32)) -> usize {
    let expected = expected_codes(dir);
    let mut seen = 0;
    let pattern = format!("{dir}/*.md");
    insta::glob!("../../fixtures/specs", &pattern, |path| {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let path = path.display().to_string();
        let human = specc(&["plan", &path]);
        check_exit(&name, human.code);
        let json = specc(&["plan", &path, "--message-format", "json"]);
        let diagnostics = crate::support::json_diagnostics(&json.stdout);
        let found: Vec<String> = diagnostics
            .iter()
            .map(|d| {
                format!(
                    "{}@{}:{}",
                    d["code"].as_str().unwrap_or("?"),
                    d["line"],
                    d["column"]
                )
            })
            .collect();
        let want = expected
            .get(&name)
            .unwrap_or_else(|| panic!("{name} is missing from expected.txt"));
        assert_eq!(&found, want, "{name}: diagnostics (code@line:column)");
        // Named by directory too, so `invalid/x.md` and `warnings/x.md` never share one.
        insta::assert_snapshot!(format!("{dir}-diagnostics"), human.stderr);
        let json_lines: String = diagnostics.iter().map(|d| format!("{d}\n")).collect();
        insta::assert_snapshot!(format!("{dir}-diagnostics-json"), json_lines);
        seen += 1;
    });
    assert_eq!(
        seen,
        expected.len(),
        "{dir}/expected.txt lists a fixture that does not exist"
    );
    seen
}

/// `fixtures/specs/<dir>/expected.txt`: `file.md CODE@LINE:COL …` per line.
fn expected_codes(dir: &str) -> BTreeMap<String, Vec<String>> {
    let path = root().join("fixtures/specs").join(dir).join("expected.txt");
    let text = std::fs::read_to_string(&path).expect("expected.txt exists");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut words = l.split_whitespace().map(str::to_owned);
            let name = words.next().unwrap_or_default();
            (name, words.collect())
        })
        .collect()
}

/// An independent count of requirements: the fixtures put one requirement on a line, so the
/// lines outside code fences holding a capital keyword as a whole word are the requirements.
fn keyword_lines(path: &str) -> usize {
    let text = std::fs::read_to_string(path).expect("fixture readable");
    let mut in_fence = false;
    let mut n = 0;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        let is_kw = |w: &str| matches!(w, "MUST" | "SHALL" | "SHOULD" | "MAY");
        if !in_fence
            && line
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .any(is_kw)
        {
            n += 1;
        }
    }
    n
}

#[test]
fn kvstore_is_large_and_realistic() {
    let out = specc(&[
        "plan",
        &fixture("specs/valid/kvstore.md"),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("valid JSON");
    assert!(v["node_count"].as_u64().unwrap_or(0) > 40, "40+ sections");
    assert!(
        v["requirement_count"].as_u64().unwrap_or(0) >= 100,
        "100+ requirements"
    );
}
