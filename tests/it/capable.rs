//! The builds a capable model's answers were recorded for (`fixtures/capable/basen` and
//! `fixtures/capable/ferryfare`, see their READMEs: answers written by a model through the
//! bridge, not by hand), replayed offline: every task lands and every hidden test passes. The workers' commands and the checks run
//! for real, in the sandbox; only the answers are replayed.

use crate::support::copy_dir;

/// `specc build` of the capable fixture `name`, replayed: its summary and its log.
fn replayed(name: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().expect("tmp");
    copy_dir(
        &crate::support::root().join("fixtures/capable").join(name),
        dir.path(),
    );
    let env = specc::Env::plain().with_sandbox_helper(specc_tests::specc_binary());
    let spec = dir.path().join("spec.md").display().to_string();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(["specc", "build", spec.as_str()], &env, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

#[test]
fn the_capable_models_recorded_build_lands_every_task_and_passes_the_hidden_tests() {
    let (code, out, err) = replayed("basen");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("3 work tasks: 3 landed"), "{out}");
    assert!(
        err.contains("75 of 75 tests pass (100.0%) (final)"),
        "the hidden tests: {err}"
    );
    // Replayed: the same calls as recorded, and nothing asked that was not.
    assert!(out.contains("planner       1 calls"), "{out}");
    assert!(out.contains("worker       12 calls"), "{out}");
}

/// A spec whose rules live in prose, tables and a code block (issue 39): a capable model
/// built it from what specc showed it, and every hidden test passes.
#[test]
fn a_spec_read_from_its_prose_lands_and_passes_every_hidden_test() {
    let (code, out, err) = replayed("ferryfare");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("3 work tasks: 3 landed"), "{out}");
    assert!(
        err.contains("47 of 47 tests pass (100.0%) (final)"),
        "the hidden tests: {err}"
    );
    assert!(out.contains("planner       1 calls"), "{out}");
    assert!(out.contains("worker       14 calls"), "{out}");
}
