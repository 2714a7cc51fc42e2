//! Support shared by specc's integration tests and benchmarks: generated inputs, and the
//! answer book (`answers`), a scripted provider for `specc build`.

pub mod answers;
pub mod cpu;
pub mod plans;
pub mod recorded_run;
pub mod settings;

/// The specc binary, built on first use by the cargo that runs the tests (`CARGO`): the
/// sandbox helper for builds the tests run in-process, so every command a scripted model
/// proposes runs in the sandbox, as in the binary.
pub fn specc_binary() -> std::path::PathBuf {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| cargo_build(&[])).clone()
}

/// The optimised specc binary, for benchmarks that run it as a process.
pub fn specc_release_binary() -> std::path::PathBuf {
    static BIN: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    BIN.get_or_init(|| cargo_build(&["--release"])).clone()
}

fn cargo_build(extra: &[&str]) -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = std::process::Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "specc",
            "--bin",
            "specc",
            "--message-format=json",
        ])
        .args(extra)
        .current_dir(root())
        .output()
        .expect("cargo builds the specc binary");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["target"]["name"] == "specc")
        .find_map(|v| v["executable"].as_str().map(std::path::PathBuf::from))
        .expect("cargo names the specc executable")
}

/// The plan-diagnostic cases, `fixtures/planner/cases/*/`, in order.
pub fn planner_cases() -> Vec<std::path::PathBuf> {
    let dir = root().join("fixtures/planner/cases");
    let mut cases: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    cases.retain(|p| p.is_dir());
    cases.sort();
    cases
}

/// The workspace root.
pub fn root() -> std::path::PathBuf {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

/// A realistic spec of about `bytes` bytes: unique nested sections with prose, list-item and
/// paragraph requirements (some tagged, some EARS), examples, checks and decisions. Each
/// section has 6 requirements; section `i` is `## Area i` or `### Part i`.
pub fn generate_spec(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 4096);
    s.push_str("+++\nname = \"generated\"\n+++\n\n# Generated service\n\nA generated spec for benchmarks.\n\n");
    let mut i = 0usize;
    while s.len() < bytes {
        if i.is_multiple_of(8) {
            s.push_str(&format!("## Area {i}\n\nThis area groups the parts that follow. It exists so that nesting is realistic, and its prose runs to a few sentences, e.g. this one.\n\n"));
        } else {
            s.push_str(&format!("### Part {i}\n\n"));
        }
        s.push_str(&format!(
            "The component for part {i} keeps its state in memory and persists it on shutdown.\n\
             The server MUST answer every request for part {i} within 50 ms at the 99th percentile.\n\
             It SHOULD batch writes when the queue holds more than 64 entries. Nothing else changes.\n\n\
             - [G-{i}] The client MUST NOT retry a request that failed with a permanent error.\n\
             - WHEN a connection to part {i} drops, THE SYSTEM SHALL reconnect with exponential backoff.\n\
             - Operators MAY disable part {i} with a **feature flag** named `part_{i}`.\n\
             - The log SHALL record every rejected request with its reason.\n\n\
             ```sh test\ncurl -s localhost:8080/part/{i} | grep ok\n```\n\n\
             > Decision: part {i} stores at most 1024 entries. {{#part{i}.capacity}}\n\n"
        ));
        i += 1;
    }
    s
}

/// Number of requirements [`generate_spec`] writes per section.
pub const GENERATED_REQUIREMENTS_PER_SECTION: usize = 6;

/// A spec of about `bytes` bytes made of copies of a real spec's body (`template`, front
/// matter and title dropped), each copy's headings, explicit ids and tags made unique, under
/// one title. Its density of requirements, prose and code is the template's.
pub fn repeat_spec(template: &str, bytes: usize) -> String {
    let body = strip_front_matter_and_title(template);
    let mut s = String::with_capacity(bytes + template.len());
    s.push_str("# Repeated spec\n\n");
    let mut copy = 0usize;
    while s.len() < bytes {
        for line in body.lines() {
            if line.starts_with('#') {
                // `## Title {#id}` -> `## Title N {#id-N}`; `## Title` -> `## Title N`.
                match line.find(" {#") {
                    Some(at) => {
                        let id = line[at + 3..].trim_end_matches('}');
                        s.push_str(&format!("{} {copy} {{#{id}-{copy}}}", &line[..at]));
                    }
                    None => s.push_str(&format!("{line} {copy}")),
                }
            } else {
                s.push_str(&retag(line, copy));
            }
            s.push('\n');
        }
        copy += 1;
    }
    s
}

fn strip_front_matter_and_title(text: &str) -> &str {
    let mut rest = text;
    if let Some(after) = rest.strip_prefix("+++\n")
        && let Some(end) = after.find("\n+++\n")
    {
        rest = &after[end + 5..];
    }
    let rest = rest.trim_start();
    match rest.strip_prefix("# ") {
        Some(r) => r.find('\n').map_or("", |p| &r[p + 1..]),
        None => rest,
    }
}

/// `[KV-3]` -> `[KV-3-N]`-like unique tags: the letters get the copy number appended.
fn retag(line: &str, copy: usize) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let tail = &rest[open + 1..];
        let letters = tail.bytes().take_while(u8::is_ascii_uppercase).count();
        if letters > 0 && tail[letters..].starts_with('-') {
            out.push('[');
            out.push_str(&tail[..letters]);
            out.push_str(&format!("X{copy}"));
            rest = &tail[letters..];
        } else {
            out.push('[');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// The shape of a generated source tree for `specc check` benchmarks.
#[derive(Clone, Copy, Debug)]
pub struct CheckTree {
    /// Source files, spread over eight languages (six with grammars, two line-comment ones).
    pub files: usize,
    /// Lines per source file, roughly.
    pub lines: usize,
    /// Decisions recorded under `design-docs/`, 30 to a document.
    pub decisions: usize,
    /// One file in `reference_every` carries references (1 to 3 of them).
    pub reference_every: usize,
    /// Requirements in a generated `spec.md` (`R-1`…); when not 0, each referencing file
    /// also names one of them (`req: R-n`), for `specc trace`.
    pub requirements: usize,
}

impl CheckTree {
    /// The benchmark of issue 3: 10,000 files of ~100 lines, references in 10 %, 300 decisions.
    pub const ISSUE_3: CheckTree = CheckTree {
        files: 10_000,
        lines: 100,
        decisions: 300,
        reference_every: 10,
        requirements: 0,
    };

    /// The trace benchmark's tree (issue 29): the check benchmark's, with a spec of 150
    /// requirements that the referencing files name.
    pub const TRACE: CheckTree = CheckTree {
        requirements: 150,
        ..CheckTree::ISSUE_3
    };
}

/// Writes a generated tree under `root` (which must exist) and returns the relative paths of
/// the source files. Every reference resolves, so a correct check reports nothing; every
/// tenth referencing file also has `design:` inside a string literal, which is no reference.
pub fn generate_check_tree(
    root: &std::path::Path,
    shape: CheckTree,
) -> std::io::Result<Vec<String>> {
    use std::fmt::Write as _;
    let docs = root.join("design-docs");
    std::fs::create_dir_all(&docs)?;
    for d in 0..shape.decisions.div_ceil(30) {
        let mut doc = format!("# Area {d}\n\nDecisions of area {d}.\n\n");
        for k in 0..30.min(shape.decisions - d * 30) {
            let _ = write!(
                doc,
                "## Question {k} of area {d} {{#area{d}.q{k}}}\n\nDecision: area {d} answers question {k} with option {}.\nRationale: it was the simplest option that met the requirement.\nStatus: accepted\n\n",
                (d * 7 + k) % 5
            );
        }
        std::fs::write(docs.join(format!("area{d}.md")), doc)?;
    }
    const KINDS: [(&str, &str); 8] = [
        ("rs", "//"),
        ("py", "#"),
        ("js", "//"),
        ("ts", "//"),
        ("go", "//"),
        ("c", "//"),
        ("java", "//"),
        ("sh", "#"),
    ];
    if shape.requirements > 0 {
        let mut spec = String::from("# Generated\n\nA spec for the trace benchmark.\n");
        for r in 1..=shape.requirements {
            if r % 10 == 1 {
                let _ = write!(spec, "\n## Part {}\n\n", r / 10);
            }
            let _ = writeln!(spec, "- [R-{r}] The system MUST keep invariant {r}.");
        }
        std::fs::write(root.join("spec.md"), spec)?;
    }
    let mut paths = Vec::with_capacity(shape.files);
    for i in 0..shape.files {
        let (ext, comment) = KINDS[i % KINDS.len()];
        let rel = format!("src/m{:03}/file{i:05}.{ext}", i / 100);
        let path = root.join(&rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut text = String::with_capacity(shape.lines * 40);
        // Strided so that every language gets its share of referencing files.
        let referencing = (i / KINDS.len()).is_multiple_of(shape.reference_every);
        let (open, close) = wrapper(ext);
        text.push_str(open);
        for line in 0..shape.lines.saturating_sub(3) {
            if referencing && shape.requirements > 0 && line % 40 == 6 {
                let r = (i / shape.reference_every + line) % shape.requirements + 1;
                let _ = writeln!(text, "{comment} req: R-{r}");
            } else if referencing && line % 40 == 5 {
                let decision = (i / shape.reference_every + line) % shape.decisions.max(1);
                let _ = writeln!(
                    text,
                    "{comment} design: area{}.q{}",
                    decision / 30,
                    decision % 30
                );
            } else if referencing
                && (i / KINDS.len()).is_multiple_of(shape.reference_every * 10)
                && line == 7
            {
                let _ = writeln!(text, "{}", string_line(ext, "design: not.a.reference"));
            } else if line % 10 == 0 {
                let _ = writeln!(
                    text,
                    "{comment} step {line} of file {i}: keep the invariant"
                );
            } else {
                let _ = writeln!(text, "{}", code_line(ext, line));
            }
        }
        text.push_str(close);
        std::fs::write(&path, text)?;
        paths.push(rel);
    }
    Ok(paths)
}

/// A function around the generated lines, so that each file parses as its language.
fn wrapper(ext: &str) -> (&'static str, &'static str) {
    match ext {
        "rs" => (
            "use std::io;\nfn run() -> io::Result<()> {\n",
            "    Ok(())\n}\n",
        ),
        "py" => ("import os\ndef run():\n", "    return None\n"),
        "js" | "ts" => ("'use strict';\nfunction run() {\n", "  return null;\n}\n"),
        "go" => ("package m\nfunc run() int {\n", "\treturn 0\n}\n"),
        "c" | "java" => (
            "#include <stdio.h>\nint run(void) {\n",
            "    return 0;\n}\n",
        ),
        _ => ("#!/bin/sh\nset -eu\n", "exit 0\n"),
    }
}

fn code_line(ext: &str, line: usize) -> String {
    match ext {
        "rs" => format!("    let value{line} = compute({line}, \"x\") + 1;"),
        "py" => format!("    value_{line} = compute({line}, 'x') + 1"),
        "js" => format!("  const value{line} = compute({line}, 'x') + 1;"),
        "ts" => format!("  const value{line}: number = compute({line}, 'x') + 1;"),
        "go" => format!("\tvalue{line} := compute({line}, \"x\") + 1"),
        "sh" => format!("value_{line}=$(( {line} + 1 ))"),
        _ => format!("    int value{line} = compute({line}, \"x\") + 1;"),
    }
}

fn string_line(ext: &str, text: &str) -> String {
    match ext {
        "py" => format!("    message = \"{text}\""),
        "sh" => format!("message=\"{text}\""),
        "rs" => format!("    let message = \"{text}\";"),
        "js" | "ts" => format!("  const message = \"{text}\";"),
        "go" => format!("\tmessage := \"{text}\""),
        _ => format!("    char* message = \"{text}\";"),
    }
}
