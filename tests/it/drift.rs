//! `specc drift`: a person's edit to pinned code and a deleted test of a requirement are
//! reported per decision and requirement; accepted into `specc-drift.json` they are not
//! reported again, until the file changes again (design: driver.drift).

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use specc_tests::answers::AnswerBook;

use crate::build::{TOML, child, done, git, project, rebuild, write};
use crate::support::{Output, specc};

const SPEC: &str = "# Pair\n\n> Decision: {#pair.words} Words are lower case.\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n## Beta\n\n- [R-2] Beta MUST exist.\n";

fn drift(dir: &Path, extra: &[&str]) -> Output {
    let spec = dir.join("spec.md").display().to_string();
    let mut args = vec!["drift", spec.as_str()];
    args.extend_from_slice(extra);
    specc(&args)
}

#[test]
fn a_persons_edit_to_pinned_code_is_reported_accepted_then_not_reported() {
    let dir = project(TOML);
    std::fs::write(dir.path().join("spec.md"), SPEC).expect("spec");
    let pin = specc_passes::design_docs::pin("Words are lower case.");
    let code = format!("# req: R-1\n# design: pair.words@{pin}\nWORDS = 'lower'\n");
    let test = "# req: R-2\ndef test_b():\n    assert True\n";
    let book = Arc::new(AnswerBook::new(json!({
        "planner": {"": {"decisions": [], "children": [
            child("a", "R-1", "a.py", &[], &[]),
            child("b", "R-2", "tests/test_b.py", &[], &[]),
        ]}},
        "workers": {"a": [[[write("a.py", &code)], [done()]]],
                    "b": [[[write("tests/test_b.py", test)], [done()]]]},
    })));
    let built = rebuild(dir.path(), &book, &[]);
    assert_eq!(built.code, 0, "{}\n{}", built.err, built.out);
    let clean = drift(dir.path(), &[]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    assert!(clean.stdout.starts_with("no drift in "), "{}", clean.stdout);

    // A person edits the pinned code (not committed) and deletes R-2's test (committed).
    let out = dir.path().join("out");
    std::fs::write(out.join("a.py"), code.replace("'lower'", "'Mixed'")).expect("edit");
    assert!(git(&out, &["rm", "-q", "tests/test_b.py"]).0);
    let (ok, _) = git(
        &out,
        &[
            "-c",
            "user.name=Pat",
            "-c",
            "user.email=p@example.com",
            "commit",
            "-q",
            "-m",
            "no test",
        ],
    );
    assert!(ok);
    let found = drift(dir.path(), &[]);
    assert_eq!(found.code, 1, "{}{}", found.stdout, found.stderr);
    let s = &found.stdout;
    assert!(s.contains("decision pair.words"), "{s}");
    assert!(s.contains("pinned code edited  a.py:2"), "{s}");
    assert!(s.contains("R-2 (MUST) Beta MUST exist."), "{s}");
    assert!(s.contains("test removed        tests/test_b.py:1"), "{s}");
    assert!(s.contains("file deleted        tests/test_b.py"), "{s}");

    // Accept the decision's drift: only R-2's is left.
    let accepted = drift(dir.path(), &["--accept=pair.words"]);
    assert_eq!(accepted.code, 0, "{}", accepted.stderr);
    assert!(
        accepted.stdout.starts_with("accepted 2 findings into"),
        "{}",
        accepted.stdout
    );
    let baseline = std::fs::read_to_string(dir.path().join("specc-drift.json")).expect("baseline");
    assert!(baseline.contains("\"pinned-code-edited\""), "{baseline}");
    let rest = drift(dir.path(), &[]);
    assert_eq!(rest.code, 1);
    assert!(!rest.stdout.contains("pair.words"), "{}", rest.stdout);
    assert!(
        rest.stdout.contains("(2 accepted in specc-drift.json)"),
        "{}",
        rest.stdout
    );
    // Accept the rest: no drift.
    assert_eq!(drift(dir.path(), &["--accept"]).code, 0);
    let none = drift(dir.path(), &["--format", "json"]);
    assert_eq!(none.code, 0, "{}", none.stdout);
    let v: serde_json::Value = serde_json::from_str(&none.stdout).expect("json");
    assert_eq!(v["findings"], json!([]));
    assert!(v["accepted"].as_u64().unwrap_or(0) >= 4, "{v}");

    // Editing the accepted code again is new drift.
    std::fs::write(out.join("a.py"), code.replace("'lower'", "'UPPER'")).expect("edit");
    let again = drift(dir.path(), &[]);
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(
        again.stdout.contains("pinned code edited  a.py:2"),
        "{}",
        again.stdout
    );
    assert!(!again.stdout.contains("test_b"), "{}", again.stdout);
}

#[test]
fn drift_without_a_build_says_so() {
    let dir = project(TOML);
    let d = drift(dir.path(), &[]);
    assert_eq!(d.code, 2, "{}", d.stderr);
    assert!(
        d.stderr.contains("is not in a git repository"),
        "{}",
        d.stderr
    );
}
