//! The parsers on real outputs (fixtures/eval: cargo test with failures and a panic,
//! pytest plain and `-v`, pytest's and node's JUnit XML, node's TAP), on the same outputs
//! cut short, and on garbage.

use super::*;

// Tests read their fixtures from disk; the crate's own code does not.
#[allow(clippy::disallowed_methods)]
fn fixture(name: &str) -> String {
    let path = format!("{}/../fixtures/eval/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn counts(s: &Score) -> (usize, usize, usize) {
    (s.passed, s.failed, s.skipped)
}

fn named(s: &Score, name: &str) -> Option<Outcome> {
    s.tests.iter().find(|t| t.name == name).map(|t| t.outcome)
}

#[test]
fn cargo_test_with_failures_and_a_panic() {
    let out = fixture("cargo.out");
    let s = score(Format::Cargo, &out).expect("scored");
    // Unit tests 2 passed, 2 failed (one an assertion, one a panic); the integration test
    // 1 and 1; the doc-tests none.
    assert_eq!(counts(&s), (3, 3, 0));
    assert_eq!(named(&s, "tests::panics"), Some(Outcome::Failed));
    assert_eq!(named(&s, "integration_passes"), Some(Outcome::Passed));
    assert_eq!(s.ratio(), Some(0.5));
    assert_eq!(detect(&out), Some(Format::Cargo));
}

#[test]
fn cargo_test_with_an_ignored_test() {
    // libtest's lines for an ignored test (the fixture suites hold none: this project keeps
    // no ignored test, even in a fixture).
    let out = "running 2 tests\ntest tests::slow ... ignored\ntest tests::fast ... ok\n\n\
               test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; \
               finished in 0.00s\n";
    let s = score(Format::Cargo, out).expect("scored");
    assert_eq!(counts(&s), (1, 0, 1));
    assert_eq!(named(&s, "tests::slow"), Some(Outcome::Skipped));
}

#[test]
fn pytest_plain_and_verbose() {
    for name in ["pytest.out", "pytest-v.out"] {
        let out = fixture(name);
        let s = score(Format::Pytest, &out).expect("scored");
        assert_eq!(counts(&s), (3, 3, 1), "{name}");
        assert_eq!(
            named(&s, "test_calc.py::test_param[3]"),
            Some(Outcome::Failed),
            "{name}"
        );
        assert_eq!(detect(&out), Some(Format::Pytest), "{name}");
    }
    let verbose = score(Format::Pytest, &fixture("pytest-v.out")).expect("scored");
    assert_eq!(verbose.tests.len(), 7, "-v names every test");
}

#[test]
fn pytest_quiet_summary_without_its_rules() {
    let out = "........F....\n\
               FAILED hidden_tests/test_rr.py::RRCacheTest::test_popitem - KeyError\n\
               1 failed, 214 passed, 15 warnings in 0.20s\n";
    let s = score(Format::Pytest, out).expect("scored");
    assert_eq!(counts(&s), (214, 1, 0));
    assert_eq!(
        named(&s, "hidden_tests/test_rr.py::RRCacheTest::test_popitem"),
        Some(Outcome::Failed)
    );
    let long = score(Format::Pytest, "2 failed, 300 passed in 75.12s (0:01:15)\n").expect("scored");
    assert_eq!(counts(&long), (300, 2, 0));
    let none = score(Format::Pytest, "no tests ran in 0.01s\n").expect("scored");
    assert_eq!(counts(&none), (0, 0, 0));
    // Not a summary: words after the counts, or no time.
    assert!(score(Format::Pytest, "3 passed tests in total\n").is_none());
    assert!(score(Format::Pytest, "we passed 3 in a row\n").is_none());
}

#[test]
fn junit_from_pytest_and_from_node() {
    let py = score(Format::Junit, &fixture("pytest-junit.xml")).expect("pytest's");
    assert_eq!(counts(&py), (3, 3, 1));
    assert_eq!(named(&py, "test_calc::test_raises"), Some(Outcome::Failed));
    let node = score(Format::Junit, &fixture("node-junit.xml")).expect("node's");
    // adds, inner ok pass; adds wrongly, throws, inner bad fail; skipped is skipped.
    assert_eq!(counts(&node), (2, 3, 1));
    assert_eq!(named(&node, "test::inner bad"), Some(Outcome::Failed));
    assert_eq!(detect(&fixture("node-junit.xml")), Some(Format::Junit));
}

#[test]
fn tap_from_node_with_subtests() {
    let out = fixture("node.tap");
    let s = score(Format::Tap, &out).expect("scored");
    // Every test point at any depth: adds and inner ok pass; adds wrongly, throws, inner bad
    // and the nested parent fail; skipped is skipped.
    assert_eq!(counts(&s), (2, 4, 1));
    assert_eq!(named(&s, "skipped"), Some(Outcome::Skipped));
    assert_eq!(detect(&out), Some(Format::Tap));
    let todo = "TAP version 13\nok 1 - a\nnot ok 2 - b # TODO later\nok 3 - c # skip no db\n1..3\n";
    assert_eq!(counts(&score(Format::Tap, todo).expect("tap")), (1, 0, 2));
}

#[test]
fn output_cut_short_is_unknown_not_zero() {
    // Cut at a third, and just before what closes the run: the last binary's result, the
    // summary line, the closing tag, the top-level plan.
    for (name, format, closing) in [
        ("cargo.out", Format::Cargo, "test result:"),
        ("pytest.out", Format::Pytest, "\n="),
        ("pytest-junit.xml", Format::Junit, "</testsuites>"),
        ("node-junit.xml", Format::Junit, "</testsuites>"),
        ("node.tap", Format::Tap, "\n1..5"),
    ] {
        let out = fixture(name);
        let closes = out.rfind(closing).expect("the closing line");
        for cut in [out.len() / 3, closes] {
            let mut at = cut;
            while !out.is_char_boundary(at) {
                at -= 1;
            }
            assert_eq!(score(format, &out[..at]), None, "{name} cut at {at}");
        }
    }
}

#[test]
fn garbage_is_unknown_and_never_a_crash() {
    let garbage = [
        "",
        "segmentation fault (core dumped)\n",
        "<<<<<<<\0\u{fffd}>>>",
        "<testsuites><testcase name=\"a\"><failure>",
        "test result: ok. many passed; 0 failed; 0 ignored",
        "running 3 tests\ntest a ... ok\n",
        "=== ===",
        "1..3\nok 1\n",
        "not ok\n",
    ];
    for g in garbage {
        for f in [
            Format::Cargo,
            Format::Pytest,
            Format::Tap,
            Format::Junit,
            Format::Auto,
        ] {
            assert_eq!(score(f, g), None, "{f:?} on {g:?}");
        }
    }
}
