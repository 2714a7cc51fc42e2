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

/// Issue 40's probe, with a runner that names its tests: one assertion hollowed
/// (`assert True`) and one test swapped for another keep the counts, and are refused with
/// evidence naming both; put back, the task lands.
#[test]
fn a_hollowed_assertion_and_a_swapped_test_are_refused_by_name() {
    let tricked = "# req: R-1\nimport pathlib\n\n\ndef test_exists():\n    assert True\n\n\ndef test_other():\n    assert \"alpha\" in pathlib.Path(\"a.txt\").read_text()\n";
    let b = build(
        vec![write("tests/test_alpha.py", tricked)],
        vec![write("tests/test_alpha.py", ALPHA_TESTS)],
        "write b.py",
    );
    refused_then_landed(
        &b,
        &[
            "adds an assertion that checks nothing (`assert True`)",
            "`test_says_alpha` passed at the base and no longer runs",
        ],
    );
}

/// The probe as issue 40 ran it, under `unittest`, whose output names no test: the files
/// decide. `calc.add`'s assertion becomes `assertTrue(True)` and `test_add_neg` becomes
/// `test_sub`: refused, naming both; with the tests put back beside the new one, it lands.
#[test]
fn the_probe_under_unittest_is_refused_and_lands_once_mended() {
    let tests = "# req: R-1\nimport unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n    def test_add_neg(self):\n        self.assertEqual(calc.add(-2, -3), -5)\n";
    let tricked = "# req: R-1\nimport unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertTrue(True)\n\n    def test_sub(self):\n        self.assertEqual(calc.sub(3, 2), 1)\n";
    let mended =
        format!("{tests}\n    def test_sub(self):\n        self.assertEqual(calc.sub(3, 2), 1)\n");
    let leaf = |key: &str, req: &str, scope: &[&str], deps: &[&str]| {
        json!({"key": key, "kind": "work", "title": key, "covers_requirements": [req],
               "instructions": format!("write {key}"), "write_scope": scope,
               "acceptance": ["cd tests && python3 -m unittest -q"], "depends_on": deps})
    };
    let planner = json!({"": {"decisions": [], "children": [
        leaf("a", "R-1", &["calc.py", "tests/**"], &[]),
        leaf("b", "R-2", &["calc.py", "tests/**"], &["a"]),
    ]}});
    let calc = "# req: R-2\nimport sys, os\ndef add(a, b):\n    return a + b\n";
    let calc2 = format!("{calc}\n\ndef sub(a, b):\n    return a - b\n");
    let path = json!({"name": "write", "arguments": {"path": "tests/calc.py", "content": calc}});
    let path2 = json!({"name": "write", "arguments": {"path": "tests/calc.py", "content": calc2}});
    let b = build_with(
        TOML,
        planner,
        json!({
            "a": [[[write("calc.py", calc), path, write("tests/test_calc.py", tests)], [done()]]],
            "b": [[[write("calc.py", &calc2), path2.clone(), write("tests/test_calc.py", tricked)],
                   [done()],
                   [write("tests/test_calc.py", &mended)], [done()]]],
        }),
    );
    refused_then_landed(
        &b,
        &[
            "adds an assertion that checks nothing (`assertTrue(True)`)",
            "the test `test_add_neg` of the base is gone",
        ],
    );
    assert_eq!(
        b.file("tests/test_calc.py").as_deref(),
        Some(mended.as_str())
    );
}
