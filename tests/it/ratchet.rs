//! Checks a worker cannot weaken (design: runtime.ratchet): task `a` lands a small Python
//! project, its tests and the runner its check runs; task `b`, scripted, tries one trick
//! each time — delete a test, mark one skipped, wrap the check in `|| true`, hollow out
//! another task's assertions, edit the file the check runs — and each is refused back to it
//! with the evidence, after which it puts things back and lands. A task told that a test
//! goes may remove it. The answers are hand-written: they show the guard, not a model.

use serde_json::{Value, json};

use crate::build::{TOML, build_with, done, write};
use crate::build_guards::tool_texts;

const RUNNER: &str = r#"import glob, importlib.util, sys
tests = []
for f in sorted(glob.glob("tests/test_*.py")):
    spec = importlib.util.spec_from_file_location(f[:-3].replace("/", "_"), f)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    tests += [(n, getattr(m, n)) for n in sorted(dir(m)) if n.startswith("test_")]
print(f"1..{len(tests)}")
bad = 0
for i, (n, fn) in enumerate(tests, 1):
    if getattr(fn, "__unittest_skip__", False):
        print(f"ok {i} - {n} # SKIP")
        continue
    try:
        fn()
        print(f"ok {i} - {n}")
    except Exception:
        bad += 1
        print(f"not ok {i} - {n}")
sys.exit(1 if bad else 0)
"#;

const ALPHA_TESTS: &str = "# req: R-1\nimport pathlib\n\n\ndef test_exists():\n    assert pathlib.Path(\"a.txt\").exists()\n\n\ndef test_says_alpha():\n    assert \"alpha\" in pathlib.Path(\"a.txt\").read_text()\n";

fn child(key: &str, req: &str, scope: &[&str], instructions: &str, deps: &[&str]) -> Value {
    json!({"key": key, "kind": "work", "title": format!("make {key}"), "covers_requirements": [req],
           "instructions": instructions, "write_scope": scope,
           "acceptance": ["sh check.sh"], "depends_on": deps})
}

/// `a` lands the project; `b` runs `trick` in its first round, then `mend` and `done`.
fn build(trick: Vec<Value>, mend: Vec<Value>, b_instructions: &str) -> crate::build::Built {
    let planner = json!({"": {"decisions": [], "children": [
        child("a", "R-1", &["a.txt", "run_tests.py", "check.sh", "tests/test_alpha.py"], "write the project", &[]),
        child("b", "R-2", &["b.py", "run_tests.py", "check.sh", "tests/**"], b_instructions, &["a"]),
    ]}});
    let a = json!([[
        [
            write("a.txt", "alpha\n"),
            write("run_tests.py", RUNNER),
            write("check.sh", "python3 run_tests.py\n"),
            write("tests/test_alpha.py", ALPHA_TESTS)
        ],
        [done()],
    ]]);
    let mut first = trick;
    first.push(write("b.py", "# req: R-2\nBETA = 1\n"));
    let mut second = mend;
    second.push(write("b.py", "# req: R-2\nBETA = 1\n"));
    let b = json!([[first, [done()], second, [done()]]]);
    build_with(TOML, planner, json!({"a": a, "b": b}))
}

/// The first `done` of `b` was refused with `evidence`; the second landed.
fn refused_then_landed(b: &crate::build::Built, evidence: &[&str]) {
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("2 landed"), "{}", b.out);
    let texts = tool_texts(b, "b");
    let refusal = texts
        .iter()
        .find(|t| t.contains("checks weakened"))
        .unwrap_or_else(|| panic!("no refusal: {texts:?}"));
    for e in evidence {
        assert!(refusal.contains(e), "{e}\n{refusal}");
    }
}

fn run(command: &str) -> Value {
    json!({"name": "run", "arguments": {"command": command}})
}

#[test]
fn a_deleted_test_is_refused() {
    let b = build(
        vec![run("rm tests/test_alpha.py")],
        vec![write("tests/test_alpha.py", ALPHA_TESTS)],
        "write b.py",
    );
    refused_then_landed(
        &b,
        &["check `acceptance #1`: 2 tests passed at the base, 0 now"],
    );
    assert_eq!(b.file("tests/test_alpha.py").as_deref(), Some(ALPHA_TESTS));
}

#[test]
fn a_test_marked_skipped_is_refused() {
    let skipped = ALPHA_TESTS
        .replace("import pathlib\n", "import pathlib\nimport unittest\n")
        .replace(
            "def test_says_alpha",
            "@unittest.skip(\"later\")\ndef test_says_alpha",
        );
    let b = build(
        vec![write("tests/test_alpha.py", &skipped)],
        vec![write("tests/test_alpha.py", ALPHA_TESTS)],
        "write b.py",
    );
    refused_then_landed(
        &b,
        &["`tests/test_alpha.py`: adds `@unittest.skip`, which turns a test off"],
    );
}

#[test]
fn a_check_wrapped_in_or_true_is_refused() {
    let failing = "# req: R-2\n\n\ndef test_b():\n    assert False\n";
    let passing = "# req: R-2\n\n\ndef test_b():\n    assert True\n";
    let b = build(
        vec![
            write("check.sh", "python3 run_tests.py || true\n"),
            write("tests/test_b.py", failing),
        ],
        vec![
            write("check.sh", "python3 run_tests.py\n"),
            write("tests/test_b.py", passing),
        ],
        "write b.py",
    );
    refused_then_landed(
        &b,
        &["`check.sh`: adds `|| true`, which makes a failing command pass"],
    );
    assert_eq!(b.file("tests/test_b.py").as_deref(), Some(passing));
}

#[test]
fn assertions_removed_from_another_tasks_test_are_refused() {
    let hollow = ALPHA_TESTS.replace("    assert pathlib.Path(\"a.txt\").exists()", "    pass");
    let b = build(
        vec![write("tests/test_alpha.py", &hollow)],
        vec![write("tests/test_alpha.py", ALPHA_TESTS)],
        "write b.py",
    );
    refused_then_landed(
        &b,
        &["`tests/test_alpha.py`: 2 assertions at the base, 1 now"],
    );
}

#[test]
fn an_edited_check_file_is_refused() {
    let only_mine = RUNNER.replace("tests/test_*.py", "tests/test_b*.py");
    let b = build(
        vec![write("run_tests.py", &only_mine)],
        vec![write("run_tests.py", RUNNER)],
        "write b.py",
    );
    refused_then_landed(
        &b,
        &["check `acceptance #1`: 2 tests passed at the base, 0 now"],
    );
    assert_eq!(b.file("run_tests.py").as_deref(), Some(RUNNER));
}

#[test]
fn a_task_told_that_a_test_goes_may_remove_it() {
    let b = build(
        vec![run("rm tests/test_alpha.py")],
        vec![],
        "write b.py, and remove tests/test_alpha.py: alpha's tests are retired",
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(
        !tool_texts(&b, "b")
            .iter()
            .any(|t| t.contains("checks weakened")),
        "{:?}",
        tool_texts(&b, "b")
    );
    assert!(b.file("tests/test_alpha.py").is_none());
}

#[test]
fn an_honest_new_test_lands_as_written() {
    let more = format!(
        "{ALPHA_TESTS}\n\ndef test_beta_file():\n    assert pathlib.Path(\"b.py\").exists()\n"
    );
    let planner_b_instructions = "write b.py and a test that it exists";
    let b = build(
        vec![write("tests/test_alpha.py", &more)],
        vec![],
        planner_b_instructions,
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let texts = tool_texts(&b, "b");
    assert!(
        !texts.iter().any(|t| t.contains("checks weakened")),
        "{texts:?}"
    );
    assert_eq!(
        b.file("tests/test_alpha.py").as_deref(),
        Some(more.as_str())
    );
}
