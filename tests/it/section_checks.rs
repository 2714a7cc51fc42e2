//! A spec section's test blocks gate the section, not its first task (design:
//! runtime.section-checks): a leaf that leaves other leaves of its section to land runs
//! them as information (told, not failed); the leaf that completes the section starts once
//! the others landed and is gated by them. Scripted workers; the checks run in the sandbox.

use serde_json::json;

use crate::build::{TOML, build_in, child, done, write};

/// One section, two requirements, a check block that needs both tasks' files.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = "# Pair\n\n## Both\n\n- [R-1] Alpha MUST exist.\n- [R-2] Beta MUST exist.\n\n\
                ```sh test\ngrep -qx alpha a.txt\ngrep -qx beta b.txt\n```\n";
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    std::fs::write(dir.path().join("specc.toml"), TOML).expect("toml");
    dir
}

fn planner() -> serde_json::Value {
    // Independent children: either may start first.
    json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
        child("b", "R-2", "b.txt", &["test -f b.txt"], &[]),
    ]}})
}

#[test]
fn a_section_check_informs_the_first_landing_and_gates_the_one_that_completes_it() {
    let b = build_in(
        project(),
        planner(),
        json!({
            "a": [[[write("a.txt", "alpha\n")], [done()]]],
            // The completing landing is gated: its first `done` fails the section's check.
            "b": [[[write("b.txt", "bet\n")], [done()], [write("b.txt", "beta\n")], [done()]]],
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("2 work tasks: 2 landed"), "{}", b.out);
    // `a` ran first (critical path, then plan order) and landed though the check failed:
    // told, as information, why it does not gate its landing.
    let a = b.results_of("a", "done");
    assert_eq!(a.len(), 1, "{a:?}");
    assert!(
        a[0].contains("the work is landing")
            && a[0].contains("For information")
            && a[0].contains("spec both check 1")
            && a[0].contains("section `both` is not complete until `b` has landed"),
        "{a:?}"
    );
    // `b` started only after `a` landed, though both were ready: it completes the section.
    let (a_landed, b_started) = (
        b.err.find("landed      a").expect("a landed"),
        b.err.find("started     b").expect("b started"),
    );
    assert!(a_landed < b_started, "{}", b.err);
    let told = b.results_of("b", "done");
    assert!(
        told[0].contains("The acceptance checks failed") && told[0].contains("spec both check 1"),
        "{told:?}"
    );
    assert!(!told[0].contains("For information"), "{told:?}");
    assert!(told[1].contains("spec both check 1"), "{told:?}");
    assert_eq!(b.file("b.txt").as_deref(), Some("beta\n"));
}

/// The journaled acceptance report says which checks only informed.
#[test]
fn an_informing_check_is_journaled_as_such() {
    let b = build_in(
        project(),
        planner(),
        json!({
            "a": [[[write("a.txt", "alpha\n")], [done()]]],
            "b": [[[write("b.txt", "beta\n")], [done()]]],
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let steps = b.steps();
    let report = |task: &str| {
        steps
            .iter()
            .find(|(t, k, _)| t == task && k == "acceptance")
            .map(|(_, _, body)| body.clone())
            .expect("acceptance")
    };
    assert!(report("a").contains("\"informs\""), "{}", report("a"));
    assert!(!report("b").contains("\"informs\""), "{}", report("b"));
}
