//! The evaluator's file handling: reading stdout back from a log whatever stderr holds, and
//! copying the hidden tests without writing through links.

use std::os::unix::fs::symlink;
use std::path::Path;

use specc_sandbox::{Captured, CommandResult, Exit};

use super::evaluator::{copy_tree, prepare, stdout_of};

fn result(log: &Path, stderr_total: u64) -> CommandResult {
    CommandResult {
        exit: Exit::Code(0),
        stdout: Captured::default(),
        stderr: Captured {
            head: String::new(),
            tail: String::new(),
            total: stderr_total,
        },
        log: log.to_path_buf(),
    }
}

#[test]
fn stdout_is_read_back_from_the_log_whatever_stderr_holds() {
    let dir = tempfile::tempdir().expect("tmp");
    let log = dir.path().join("eval.log");
    // Invalid UTF-8 on stderr, and stderr that repeats the runner's own marker.
    for stderr in [
        &b"\xff\xff\xff\xff\xff\xff\xff\xff\xff"[..],
        b"x\n--- stderr ---\ny",
    ] {
        let mut bytes = b"--- stdout ---\nok 1\n\xc3\xa9\n--- stderr ---\n".to_vec();
        bytes.extend_from_slice(stderr);
        std::fs::write(&log, &bytes).expect("log");
        assert_eq!(
            stdout_of(&result(&log, stderr.len() as u64)),
            "ok 1\n\u{e9}",
            "{stderr:?}"
        );
    }
    // A log whose stderr count does not fit: the first marker ends stdout.
    std::fs::write(&log, b"--- stdout ---\na\n--- stderr ---\nb").expect("log");
    assert_eq!(stdout_of(&result(&log, 999)), "a");
}

#[test]
fn the_tests_are_copied_without_links_and_over_whatever_is_in_the_way() {
    let dir = tempfile::tempdir().expect("tmp");
    let (tests, checkout) = (dir.path().join("hidden"), dir.path().join("checkout"));
    std::fs::create_dir_all(tests.join("sub")).expect("tests");
    std::fs::write(tests.join("a.rs"), "a").expect("a");
    std::fs::write(tests.join("sub/b.rs"), "b").expect("b");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "keep").expect("outside");
    symlink(&outside, tests.join("link.rs")).expect("link in the tests");
    // In the checkout: a link where a.rs goes, a file where sub/ goes.
    std::fs::create_dir_all(checkout.join("t")).expect("checkout");
    symlink(&outside, checkout.join("t/a.rs")).expect("link in the way");
    std::fs::write(checkout.join("t/sub"), "file in the way").expect("file");
    assert_eq!(copy_tree(&tests, &checkout.join("t")).expect("copied"), 2);
    assert_eq!(
        std::fs::read_to_string(checkout.join("t/a.rs")).expect("a"),
        "a"
    );
    assert_eq!(
        std::fs::read_to_string(checkout.join("t/sub/b.rs")).expect("b"),
        "b"
    );
    assert!(!checkout.join("t/link.rs").exists(), "links are not copied");
    assert_eq!(std::fs::read_to_string(&outside).expect("outside"), "keep");
}

#[test]
fn nothing_of_an_earlier_run_is_left_to_be_read_as_this_one() {
    let dir = tempfile::tempdir().expect("tmp");
    let (tests, checkout) = (dir.path().join("hidden"), dir.path().join("checkout"));
    std::fs::create_dir_all(&tests).expect("tests");
    std::fs::create_dir_all(checkout.join("target")).expect("checkout");
    std::fs::write(checkout.join("target/report.xml"), "<testsuite/>").expect("stale output");
    let log = dir.path().join("logs/eval.log");
    std::fs::create_dir_all(log.with_extension("home").join("cargo")).expect("home");
    std::fs::write(log.with_extension("home").join("cargo/config.toml"), "x").expect("config");
    std::fs::write(&log, "--- stdout ---\nold").expect("log");
    prepare(
        &tests,
        &checkout,
        Path::new("tests"),
        Some(Path::new("target/report.xml")),
        &log,
    )
    .expect("prepared");
    assert!(!log.exists() && !log.with_extension("home").exists());
    assert!(!checkout.join("target/report.xml").exists());
    assert!(checkout.join("target").is_dir(), "the build cache stays");
}

#[test]
fn a_step_that_cannot_write_says_which_step_and_path_as_a_typed_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let checkout = dir.path().join("checkout");
    std::fs::create_dir_all(&checkout).expect("checkout");
    // The hidden tests' directory is missing: the copy fails, and says what it was copying.
    let missing = dir.path().join("no-such-tests");
    let log = dir.path().join("logs/eval.log");
    let e = prepare(&missing, &checkout, Path::new("tests"), None, &log).expect_err("fails");
    match &e {
        super::EvalError::Io { what, error } => {
            assert!(what.contains("copying the eval tests"), "{what}");
            assert!(what.contains("no-such-tests"), "{what}");
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("not an I/O failure: {other:?}"),
    }
    assert!(e.to_string().starts_with("copying the eval tests"), "{e}");
}
