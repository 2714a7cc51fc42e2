"""Writes answers.json: the hand-written answers of the textstats example (the planner's plan
and each worker's tool calls). They are written as a model would answer; they show the
pipeline works, not that a model can do the task. After editing, run this, then re-record:
    python3 examples/textstats/make_answers.py
    cargo run -p specc-tests --example record-example -- examples/textstats
"""
import json
import os
W = lambda path, content: {"name": "write", "arguments": {"path": path, "content": content}}
E = lambda path, old, new: {"name": "edit", "arguments": {"path": path, "old": old, "new": new}}
R = lambda cmd: {"name": "run", "arguments": {"command": cmd}}
N = lambda section, text: {"name": "note", "arguments": {"section": section, "text": text}}
D = lambda s: {"name": "done", "arguments": {"summary": s}}
RD = lambda path: {"name": "read", "arguments": {"path": path}}

lib_rs = """//! textstats: statistics about text: lines, words, bytes and the most frequent words.
//! design: textstats.layout

pub mod count;
pub mod freq;
pub mod render;
pub mod words;
"""
words_rs = """//! What a word is: a maximal run of alphanumeric characters or apostrophes.
//! design: textstats.words
//! req: R-1

/// Whether `c` belongs to a word.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '\\''
}

/// The words of `text`, in order.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_word_char(c)).filter(|w| !w.is_empty())
}

#[cfg(test)]
mod tests {
    // req: R-1
    #[test]
    fn words_split_on_punctuation_and_keep_apostrophes() {
        let w: Vec<&str> = super::words("don't stop, now; ok?").collect();
        assert_eq!(w, ["don't", "stop", "now", "ok"]);
    }
}
"""
# The scaffold writes each module's interface, as the decisions fix it, with `todo!()` bodies:
# the crate builds at once, each module's own task replaces its file, and the hidden tests
# (hidden/hidden.rs, which no worker sees) compile from the first commit and pass as tasks land.
count_stub = """//! Counting lines, words and bytes (written by its own task).

/// What `count` found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub lines: usize,
    pub words: usize,
    pub bytes: usize,
}

/// Lines, words and bytes of `text`.
pub fn count(_text: &str) -> Counts {
    todo!("the count task writes this")
}
"""
freq_stub = """//! The most frequent words (written by its own task).

/// The `n` most frequent words of `text`.
pub fn top_words(_text: &str, _n: usize) -> Vec<(String, usize)> {
    todo!("the freq task writes this")
}
"""
render_stub = """//! The report (written by its own task).

use crate::count::Counts;

/// The report of `counts` and `top`.
pub fn render(_counts: &Counts, _top: &[(String, usize)]) -> String {
    todo!("the render task writes this")
}
"""
count_rs = """//! Counting lines, words and bytes.
//! design: textstats.words
//! req: R-2

use crate::words::words;

/// What `count` found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub lines: usize,
    pub words: usize,
    pub bytes: usize,
}

/// Lines (a last line without a newline counts), words and bytes of `text`.
pub fn count(text: &str) -> Counts {
    let newlines = text.bytes().filter(|b| *b == b'\\n').count();
    let lines = if text.is_empty() || text.ends_with('\\n') {
        newlines
    } else {
        newlines + 1
    };
    Counts {
        lines,
        words: words(text).count(),
        bytes: text.len(),
    }
}

#[cfg(test)]
mod tests {
    // req: R-2
    use super::{count, Counts};

    #[test]
    fn counts_lines_words_and_bytes() {
        let c = count("the cat\\nthe dog\\n");
        assert_eq!(c, Counts { lines: 2, words: 4, bytes: 16 });
        assert_eq!(count("no newline").lines, 1);
        assert_eq!(count(""), Counts::default());
    }
}
"""
freq_rs = """//! The most frequent words.
//! design: textstats.words
//! req: R-3

use std::collections::HashMap;

use crate::words::words;

/// The `n` most frequent words of `text`, lowercased, most frequent first; ties in
/// alphabetical order.
pub fn top_words(text: &str, n: usize) -> Vec<(String, usize)> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for w in words(text) {
        *seen.entry(w.to_lowercase()).or_insert(0) += 1;
    }
    let mut all: Vec<(String, usize)> = seen.into_iter().collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    all.truncate(n);
    all
}

#[cfg(test)]
mod tests {
    // req: R-3
    use super::top_words;

    fn pair(w: &str, n: usize) -> (String, usize) {
        (w.to_string(), n)
    }

    #[test]
    fn freq_most_frequent_first_ties_alphabetical() {
        let top = top_words("The cat and the dog. A cat!", 3);
        assert_eq!(top, vec![pair("cat", 2), pair("the", 2), pair("a", 1)]);
    }

    #[test]
    fn freq_fewer_words_than_asked() {
        assert_eq!(top_words("one", 5), vec![pair("one", 1)]);
        assert!(top_words("", 5).is_empty());
    }
}
"""
render_rs = """//! The report: the counts, then the most frequent words.
//! design: textstats.report-format
//! req: R-4

use crate::count::Counts;

/// `lines N`, `words N`, `bytes N`, then `word count` for each frequent word, a line each.
pub fn render(counts: &Counts, top: &[(String, usize)]) -> String {
    let mut out = format!(
        "lines {}\\nwords {}\\nbytes {}\\n",
        counts.lines, counts.words, counts.bytes
    );
    for (word, n) in top {
        out.push_str(&format!("{word} {n}\\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    // req: R-4
    use super::render;
    use crate::count::Counts;

    #[test]
    fn render_counts_then_words() {
        let c = Counts { lines: 2, words: 4, bytes: 16 };
        let top = vec![("the".to_string(), 2)];
        assert_eq!(render(&c, &top), "lines 2\\nwords 4\\nbytes 16\\nthe 2\\n");
    }
}
"""
main_rs = """//! The `textstats` command: statistics of the files named, or of standard input.
//! design: textstats.cli
//! req: R-5, R-7

use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut top = 5usize;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--top" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => top = n,
                None => {
                    eprintln!("textstats: --top needs a number");
                    return ExitCode::from(2);
                }
            }
        } else {
            files.push(a);
        }
    }
    let mut text = String::new();
    if files.is_empty() {
        if let Err(e) = std::io::stdin().read_to_string(&mut text) {
            eprintln!("textstats: standard input: {e}");
            return ExitCode::from(1);
        }
    }
    for f in &files {
        match std::fs::read_to_string(f) {
            Ok(t) => text.push_str(&t),
            Err(e) => {
                eprintln!("textstats: {f}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let counts = textstats::count::count(&text);
    let top = textstats::freq::top_words(&text, top);
    print!("{}", textstats::render::render(&counts, &top));
    ExitCode::SUCCESS
}
"""
cli_rs = """//! The command line, end to end.
// req: R-5, R-7

use std::io::Write;
use std::process::{Command, Stdio};

struct Run {
    code: i32,
    out: String,
    err: String,
}

fn textstats(args: &[&str], input: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_textstats"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("textstats runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).expect("input written");
    drop(stdin);
    let out = child.wait_with_output().expect("textstats ends");
    Run {
        code: out.status.code().unwrap_or(-1),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn reads_standard_input() {
    let r = textstats(&["--top", "2"], "the cat\\nthe dog\\n");
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "lines 2\\nwords 4\\nbytes 16\\nthe 2\\ncat 1\\n");
}

#[test]
fn reads_the_files_named() {
    let dir = std::env::temp_dir().join(format!("textstats-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let file = dir.join("a.txt");
    std::fs::write(&file, "one two two\\n").expect("file written");
    let r = textstats(&[file.to_str().expect("UTF-8 path")], "");
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "lines 1\\nwords 3\\nbytes 12\\ntwo 2\\none 1\\n");
}

#[test]
fn a_file_it_cannot_read_is_an_error() {
    let r = textstats(&["/no/such/file"], "");
    assert_eq!(r.code, 1);
    assert!(r.err.contains("/no/such/file"), "{}", r.err);
}
"""
readme = """# textstats

<!-- req: R-8 -->

Statistics about text: lines, words, bytes and the most frequent words.

```sh
cargo run -q -- --top 3 notes.txt          # a file
printf 'the cat\\nthe dog\\n' | cargo run -q  # standard input
```

Words are runs of letters, digits and apostrophes, counted lowercased.
"""
cargo_toml = """[package]
name = "textstats"
version = "0.1.0"
edition = "2021"

[dependencies]
"""
child = lambda key, title, nodes, reqs, instr, scope, acc, deps: {
    "key": key, "kind": "work", "title": title, "covers_nodes": nodes, "covers_requirements": reqs,
    "instructions": instr, "write_scope": scope, "read_scope": [], "acceptance": acc, "depends_on": deps}
plan = {
  "decisions": [
    {"id": "textstats.layout", "decision": "One library crate with the modules words, count, freq and render, and a binary in src/main.rs that only parses arguments and prints.",
     "rationale": "Each requirement has one module a task can own; the binary stays thin."},
    {"id": "textstats.words", "decision": "A word is a maximal run of alphanumeric characters or apostrophes; words::words is the one definition every module uses.",
     "rationale": "R-1 asks for one definition; counting and frequencies must agree."},
    {"id": "textstats.report-format", "decision": "The report is `lines N`, `words N`, `bytes N`, then `word count` for each frequent word, one item a line, no header.",
     "rationale": "Line-oriented output is easy to test and to pipe."},
    {"id": "textstats.cli", "decision": "textstats [--top N] [FILE...]: the files' text concatenated in order, standard input when none are named; errors go to stderr naming the file, with exit status 1.",
     "rationale": "Behaves like wc and sort; R-7 fixes the status."},
  ],
  "children": [
    child("scaffold", "Crate skeleton and the word definition", ["words"], ["R-1"],
          "Create Cargo.toml (package textstats, edition 2021, no dependencies), .gitignore (/target and Cargo.lock), src/lib.rs declaring the modules words, count, freq and render, src/words.rs with is_word_char and words (the definition of a word, with a unit test), and in src/count.rs, src/freq.rs and src/render.rs each module's public interface (Counts and count, top_words, render) with todo!() bodies, so the crate builds and each module's task fills in its own file.",
          ["Cargo.toml", ".gitignore", "src/lib.rs", "src/words.rs", "src/count.rs", "src/freq.rs", "src/render.rs"],
          ["cargo test --offline -q --lib words"], []),
    child("count", "Counting lines, words and bytes", ["counting"], ["R-2"],
          "Write src/count.rs: a Counts struct (lines, words, bytes; Copy, Default, PartialEq) and count(text) using crate::words::words. A last line without a newline counts. Unit tests for empty text, a trailing newline and none.",
          ["src/count.rs"], [], ["scaffold"]),
    child("freq", "The most frequent words", ["word-frequency"], ["R-3"],
          "Write src/freq.rs: top_words(text, n) -> Vec<(String, usize)> using crate::words::words, lowercasing each word, sorted by count descending then word ascending, truncated to n. Unit tests with names starting freq_.",
          ["src/freq.rs"], [], ["scaffold"]),
    child("render", "The report", ["report"], ["R-4"],
          "Write src/render.rs: render(&Counts, &[(String, usize)]) -> String in the report format of the decision, with a unit test.",
          ["src/render.rs"], ["cargo test --offline -q --lib render"], ["count"]),
    child("cli", "The textstats command", ["command-line"], ["R-5", "R-7"],
          "Write src/main.rs: parse --top N (default 5) and file names, read the files in order or standard input, print render(count, top_words). An unreadable file prints `textstats: FILE: error` to stderr and exits 1.",
          ["src/main.rs"], [], ["count", "freq", "render"]),
    child("cli-tests", "End-to-end tests of the command", ["command-line"], [],
          "Write tests/cli.rs: run the built binary (env!(\"CARGO_BIN_EXE_textstats\")) on standard input with --top 2, on a file, and on a missing file (exit 1, the name in stderr). Add a note to the field guide's Testing section on how the CLI is tested.",
          ["tests/cli.rs"], ["cargo test --offline -q --test cli"], ["cli"]),
    child("docs", "The README", ["documentation"], ["R-8"],
          "Write README.md: what the tool does and how to run it on a file and on standard input with cargo run. Add a note to the field guide's Testing section on the README's examples.",
          ["README.md"], [], ["cli"]),
  ],
}
workers = {
  "scaffold": [[
     [W("Cargo.toml", cargo_toml), W(".gitignore", "/target\nCargo.lock\n")],
     [W("src/lib.rs", lib_rs), W("src/words.rs", words_rs)],
     [W("src/count.rs", count_stub), W("src/freq.rs", freq_stub), W("src/render.rs", render_stub)],
     [R("cargo build --offline -q 2>&1 && echo build ok")],
     [D("crate skeleton with the word definition")],
  ]],
  "count": [[
     [RD("src/words.rs")],
     [W("src/count.rs", count_rs)],
     [D("count() with lines, words and bytes")],
  ]],
  "freq": [[
     [W("src/freq.rs", freq_rs)],
     [D("top_words() sorted by count, then word")],
  ]],
  "render": [[
     [W("src/render.rs", render_rs)],
     [D("render() in the decided report format")],
  ]],
  "cli": [[
     [W("src/main.rs", main_rs)],
     [R("cargo build --offline -q 2>&1 && echo build ok")],
     [D("the textstats binary")],
  ]],
  "cli-tests": [[
     [W("tests/cli.rs", cli_rs)],
     [N("Testing", "CLI tests in tests/cli.rs run the built binary through env!(\"CARGO_BIN_EXE_textstats\").")],
     [D("end-to-end tests of the command")],
  ]],
  "docs": [[
     [W("README.md", readme)],
     [N("Testing", "The README's examples are a manual test: run them after changing --top.")],
     [D("README with usage")],
  ]],
}
# cli-tests and docs both add a note at the end of the guide's Testing section while they run
# side by side; docs (no checks) lands first, cli-tests' note then overlaps it, and the merge
# agent keeps both.
guide = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "field-guide", "index.md")).read()
anchor = "- Unit tests live beside the code, in `#[cfg(test)] mod tests`.\n"
assert anchor in guide
notes = ("- The README's examples are a manual test: run them after changing --top.\n"
         "- CLI tests in tests/cli.rs run the built binary through env!(\"CARGO_BIN_EXE_textstats\").\n")
merger = {"cli-tests": [{"content": guide.replace(anchor, anchor + notes),
                         "explanation": "Both tasks added a note at the end of Testing; both notes are kept, the landed one first."}]}
# One reviewer lens (diff) looks at every landed task; it finds one minor point in freq, under
# the severity that makes a follow-up task, so it is only journaled.
reviewer = {"freq": {"diff": {"findings": [
    {"file": "src/freq.rs", "line": 1, "severity": "minor", "category": "test", "concerns": "R-3",
     "finding": "no test covers n = 0", "fix": "add a test that top_words(text, 0) is empty"}]}}}
book = {"note": "Hand-written answers, as a model would answer. They show the pipeline works, not that a model can do the task.",
        "planner": {"": plan}, "workers": workers, "merger": merger, "reviewer": reviewer}
json.dump(book, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "answers.json"), "w"), indent=1)
