//! The textstats example's hidden test suite: `[eval]` in specc.toml copies this directory
//! into the evaluation's checkout as `tests/`, never into a worker's. The workers are never
//! shown these tests; `specc eval` and the build's evaluations score the code against them.
//! They use only the interfaces the spec and the plan's decisions fix, so they compile
//! against the scaffold and pass as each module's task lands.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use textstats::count::{count, Counts};
use textstats::freq::top_words;
use textstats::render::render;
use textstats::words::words;

#[test]
fn words_split_on_anything_but_alphanumerics_and_apostrophes() {
    let w: Vec<&str> = words("it's 4 o'clock -- tea, then: bed").collect();
    assert_eq!(w, ["it's", "4", "o'clock", "tea", "then", "bed"]);
}

#[test]
fn words_of_blank_text_are_none() {
    assert_eq!(words(" \n\t ,. ").count(), 0);
}

#[test]
fn count_a_last_line_without_a_newline() {
    assert_eq!(count("a\nb").lines, 2);
}

#[test]
fn count_bytes_not_characters() {
    assert_eq!(count("né\n").bytes, 4);
}

#[test]
fn count_an_empty_text() {
    assert_eq!(count(""), Counts { lines: 0, words: 0, bytes: 0 });
}

#[test]
fn freq_lowercases_and_breaks_ties_alphabetically() {
    let top = top_words("b A a B c", 2);
    assert_eq!(top, vec![("a".to_string(), 2), ("b".to_string(), 2)]);
}

#[test]
fn freq_of_zero_words_is_empty() {
    assert!(top_words("some words here", 0).is_empty());
}

#[test]
fn render_the_counts_then_one_line_per_word() {
    let c = Counts { lines: 1, words: 3, bytes: 12 };
    let top = vec![("two".to_string(), 2), ("one".to_string(), 1)];
    assert_eq!(render(&c, &top), "lines 1\nwords 3\nbytes 12\ntwo 2\none 1\n");
}

#[test]
fn render_without_words() {
    let c = Counts { lines: 0, words: 0, bytes: 0 };
    assert_eq!(render(&c, &[]), "lines 0\nwords 0\nbytes 0\n");
}

/// The built binary, beside this test's own (`target/debug/textstats`): found at run time, so
/// the suite compiles before the command exists and its tests fail until it lands.
fn binary() -> PathBuf {
    let me = std::env::current_exe().expect("the test binary");
    me.parent()
        .and_then(|deps| deps.parent())
        .expect("target/debug")
        .join("textstats")
}

fn run(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the textstats binary runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("input");
    drop(stdin);
    let out = child.wait_with_output().expect("it ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_reads_standard_input_with_the_default_top() {
    let (code, out, _) = run(&[], "x y z x\n");
    assert_eq!(code, 0);
    assert_eq!(out, "lines 1\nwords 4\nbytes 8\nx 2\ny 1\nz 1\n");
}

#[test]
fn cli_concatenates_the_files_named() {
    let dir = std::env::temp_dir().join(format!("textstats-hidden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::write(&a, "one\n").expect("a");
    std::fs::write(&b, "one two\n").expect("b");
    let (code, out, _) = run(&["--top", "1", a.to_str().expect("utf-8"), b.to_str().expect("utf-8")], "");
    assert_eq!(code, 0);
    assert_eq!(out, "lines 2\nwords 3\nbytes 12\none 2\n");
}

#[test]
fn cli_names_a_file_it_cannot_read_and_exits_1() {
    let (code, _, err) = run(&["/nonexistent/textstats-input"], "");
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent/textstats-input"), "{err}");
}
