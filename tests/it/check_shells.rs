//! A spec's check block fails on its first failing line, as a CI system runs a step: `sh`
//! blocks run with `-e`, `bash` blocks with `-e -o pipefail`; an acceptance entry fails on a
//! failing pipe stage (design: runtime.acceptance). Scripted workers; the checks run for
//! real, in the sandbox. An attempt's `run` calls share one home and `$TMPDIR`, and its
//! checkout is a git repository at its base (design: vcs.checkout-view).

use serde_json::json;

use serde_json::Value;

use crate::build::{TOML, build_in, child, done, write};

/// A one-section spec whose check block is `block` in `runner`.
fn project(runner: &str, block: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = format!(
        "# Greeting\n\n## Alpha\n\n- [R-1] Alpha MUST say goodbye.\n\n```{runner} test\n{block}\n```\n"
    );
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    std::fs::write(dir.path().join("specc.toml"), TOML).expect("toml");
    dir
}

/// A spec block's first failing line fails it.
fn first_line_fails(runner: &str, block: &str) {
    let planner = json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &[], &[]),
    ]}});
    hello_fails_goodbye_lands(project(runner, block), planner, "check 1");
}

/// The first `done` of task `a` (a.txt says hello) must fail the check named `check`; the
/// second (a.txt says goodbye) passes and lands.
fn hello_fails_goodbye_lands(dir: tempfile::TempDir, planner: Value, check: &str) {
    let attempt = json!([
        [write("a.txt", "hello\n")],
        [done()],
        [write("a.txt", "goodbye\n")],
        [done()]
    ]);
    let b = build_in(dir, planner, json!({"a": [attempt]}));
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let told = b.results_of("a", "done");
    assert_eq!(told.len(), 2, "{told:?}");
    assert!(
        told[0].contains("The acceptance checks failed") && told[0].contains(check),
        "the first done fails: {}",
        told[0]
    );
    // The passing `done` is told what passed and that the work is landing.
    assert!(
        told[1].contains("The acceptance checks passed (")
            && told[1].contains(check)
            && told[1].contains("the work is landing"),
        "{}",
        told[1]
    );
    assert_eq!(b.file("a.txt").as_deref(), Some("goodbye\n"));
}

#[test]
fn an_sh_block_fails_on_its_first_failing_line() {
    first_line_fails("sh", "test \"$(cat a.txt)\" = \"goodbye\"\ntest -f a.txt");
}

#[test]
fn a_bash_block_fails_on_a_failing_pipe_stage() {
    // `grep` fails, `cat` at the end of the pipe succeeds: only pipefail sees it.
    first_line_fails("bash", "grep -q goodbye a.txt | cat\ntest -f a.txt");
}

#[test]
fn an_acceptance_entry_fails_on_a_failing_pipe_stage() {
    let planner = json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &["grep -q goodbye a.txt | cat"], &[]),
    ]}});
    hello_fails_goodbye_lands(project("sh", "test -f a.txt"), planner, "acceptance #1");
}

#[test]
fn a_file_in_tmpdir_survives_from_one_run_to_the_next() {
    let run = |command: &str| json!({"name": "run", "arguments": {"command": command}});
    let planner = json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &[], &[]),
    ]}});
    let attempt = json!([
        [run(
            "echo kept > \"$TMPDIR/note\" && echo home > \"$HOME/mark\""
        )],
        [run("cat \"$TMPDIR/note\" \"$HOME/mark\"")],
        [write("a.txt", "goodbye\n")],
        [done()]
    ]);
    let b = build_in(
        project("sh", "test -f a.txt"),
        planner,
        json!({"a": [attempt]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let runs = b.results_of("a", "run");
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(
        runs[1].contains("kept") && runs[1].contains("home") && !runs[1].contains("No such"),
        "the second run reads what the first wrote: {}",
        runs[1]
    );
}

/// The checkout is a git repository at the task's base: `git log` shows what landed before,
/// `git status` and `git diff` what the attempt changed; the repository itself is the
/// sandbox's to read, not to write, and the `.git` file naming it never lands.
#[test]
fn git_status_diff_and_log_answer_in_a_checkout() {
    let run = |command: &str| json!({"name": "run", "arguments": {"command": command}});
    let planner = json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &[], &[]),
        child("b", "R-1", "b.txt", &["git log --format=%s | grep -q 'make a'"], &["a"]),
    ]}});
    let b = build_in(
        project("sh", "test -f a.txt"),
        planner,
        json!({
            "a": [[[write("a.txt", "goodbye\n")], [done()]]],
            "b": [[
                [write("b.txt", "one\n")],
                [run("git status --short && git log --format='log: %s'")],
                [run("git add b.txt")],
                [done()]
            ]],
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let runs = b.results_of("b", "run");
    assert!(
        runs[0].contains("?? b.txt") && runs[0].contains("log: make a"),
        "{}",
        runs[0]
    );
    assert!(!runs[0].contains(".git"), "{}", runs[0]);
    // `git add` writes the repository's index: refused (the sandbox lets commands read it).
    assert!(runs[1].contains("\"failed\":true"), "{}", runs[1]);
    assert_eq!(b.file("b.txt").as_deref(), Some("one\n"));
    let landed = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(b.dir.path().join("out"))
        .output()
        .expect("git");
    let files = String::from_utf8_lossy(&landed.stdout).into_owned();
    assert_eq!(
        files.lines().collect::<Vec<_>>(),
        ["AGENTS.md", "a.txt", "b.txt"],
        "{files}"
    );
}
