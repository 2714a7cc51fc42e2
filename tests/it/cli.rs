//! The command line: exit statuses, input errors, JSON formats, `specc explain`.

use crate::support::{fixture, specc};

#[test]
fn missing_file_is_a_clear_usage_error() {
    let out = specc(&["plan", "/definitely/not/here/spec.md"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("E0001"), "{}", out.stderr);
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
}

#[test]
fn directory_is_not_a_file() {
    let out = specc(&["plan", &fixture("specs")]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("E0002") && out.stderr.contains("is a directory"),
        "{}",
        out.stderr
    );
}

#[test]
fn binary_and_non_utf8_files_are_refused_without_panicking() {
    let dir = tempdir("binary");
    let latin1 = dir.join("latin1.md");
    std::fs::write(&latin1, b"# Caf\xe9\nThe menu MUST list prices.\n").expect("write");
    let out = specc(&["plan", &latin1.display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("E0003") && out.stderr.contains("invalid byte at offset 5"),
        "{}",
        out.stderr
    );

    let binary = dir.join("binary.md");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&binary, &bytes).expect("write");
    let out = specc(&["plan", &binary.display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("E0003"), "{}", out.stderr);

    let nul = dir.join("nul.md");
    std::fs::write(&nul, b"# A\x00B\n").expect("write");
    let out = specc(&["plan", &nul.display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("binary file"), "{}", out.stderr);
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    assert_eq!(specc(&["plan"]).code, 2);
    assert_eq!(specc(&["frobnicate"]).code, 2);
    assert_eq!(specc(&["plan", "x.md", "--emit", "nonsense"]).code, 2);
    let help = specc(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("plan"));
}

#[test]
fn message_format_json_is_one_object_per_line() {
    let out = specc(&[
        "plan",
        &fixture("specs/invalid/several-errors.md"),
        "--message-format",
        "json",
    ]);
    assert_eq!(out.code, 1);
    // Every JSON object on stdout, one per line; nothing for a program on stderr.
    assert_eq!(out.stderr, "", "stderr is for people");
    let lines = crate::support::json_diagnostics(&out.stdout);
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    for d in &lines {
        for key in [
            "code", "severity", "message", "file", "line", "column", "labels", "help",
        ] {
            assert!(d.get(key).is_some(), "missing {key} in {d}");
        }
    }
    let dup = lines
        .iter()
        .find(|d| d["code"] == "E0101")
        .expect("E0101 reported");
    let labels = dup["labels"].as_array().expect("labels");
    assert_eq!(labels.len(), 2, "primary and the first use");
    assert_eq!(labels[1]["line"], 3);
}

#[test]
fn io_errors_in_json_have_no_place_but_a_code() {
    let out = specc(&["plan", "/nope.md", "--message-format", "json"]);
    assert_eq!(out.code, 2);
    let d: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("JSON on stdout");
    assert_eq!(d["code"], "E0001");
    assert!(d["file"].is_null());
}

#[test]
fn every_code_has_an_explanation_and_explain_prints_it() {
    for c in specc_ir::codes::ALL {
        let out = specc(&["explain", c.code]);
        assert_eq!(out.code, 0, "{}", c.code);
        assert!(
            out.stdout.starts_with(&format!("# {}: ", c.code)),
            "{}: {}",
            c.code,
            out.stdout
        );
    }
    let lower = specc(&["explain", "e0101"]);
    assert_eq!(lower.code, 0);
    let list = specc(&["explain"]);
    assert_eq!(list.stdout.lines().count(), specc_ir::codes::ALL.len());
    let unknown = specc(&["explain", "E9999"]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("not a specc diagnostic code"));
}

#[test]
fn explanations_name_only_registered_codes() {
    let dir = crate::support::root().join("compiler/driver/src/explain");
    for entry in std::fs::read_dir(dir).expect("explain dir") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        let code = name.trim_end_matches(".md");
        assert!(
            specc_ir::codes::lookup(code).is_some(),
            "{name} explains an unregistered code"
        );
        assert!(
            specc::explanation(code).is_some(),
            "{name} is not wired into `specc explain`"
        );
    }
}

#[test]
fn explain_snapshot() {
    insta::assert_snapshot!(specc(&["explain"]).stdout);
    insta::assert_snapshot!(specc(&["explain", "E0101"]).stdout);
}

pub(crate) fn tempdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("specc-it-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

#[test]
fn an_error_limit_shows_twenty_of_a_code_then_counts_the_rest() {
    let dir = tempfile::tempdir().expect("dir");
    let spec: String = (0..30)
        .map(|i| format!("## S{i}\n\n- [R-{i}] It MUST {i}.\n\n```foo test\necho {i}\n```\n\n"))
        .collect();
    let path = dir.path().join("spec.md");
    std::fs::write(&path, format!("# Many\n\n{spec}")).expect("spec");
    let path = path.display().to_string();
    let shown = |stderr: &str| stderr.lines().filter(|l| l.trim() == "E0105").count();
    let limited = specc(&["plan", &path]);
    assert_eq!(limited.code, 1);
    assert_eq!(shown(&limited.stderr), 20, "{}", limited.stderr);
    assert!(
        limited.stderr.contains("note: 10 more E0105 diagnostics not shown (--error-limit 20; --error-limit 0 shows all)"),
        "{}",
        limited.stderr
    );
    let all = specc(&["plan", &path, "--error-limit", "0"]);
    assert_eq!((all.code, shown(&all.stderr)), (1, 30));
    assert!(!all.stderr.contains("not shown"));
    let five = specc(&[
        "plan",
        &path,
        "--error-limit",
        "5",
        "--message-format",
        "json",
    ]);
    let diagnostics = crate::support::json_diagnostics(&five.stdout);
    assert_eq!(diagnostics.len(), 5, "five: {}", five.stdout);
    let count: serde_json::Value = five
        .stdout
        .lines()
        .find(|l| l.contains("\"type\":\"suppressed\""))
        .and_then(|l| serde_json::from_str(l).ok())
        .expect("the count, on stdout");
    assert_eq!(count["code"], "E0105");
    assert_eq!(count["count"], 25);
    // Machine output is not cut unless asked: JSON shows all thirty by default.
    let json = specc(&["plan", &path, "--message-format", "json"]);
    assert_eq!(crate::support::json_diagnostics(&json.stdout).len(), 30);
}

#[test]
fn two_labels_far_apart_are_two_snippets_not_the_lines_between() {
    let dir = tempfile::tempdir().expect("dir");
    let filler: String = (0..4600).map(|i| format!("filler line {i}.\n")).collect();
    let path = dir.path().join("spec.md");
    std::fs::write(
        &path,
        format!("# S\n\n## A {{#dup}}\n\n{filler}\n## B {{#dup}}\n\n- x MUST y.\n"),
    )
    .expect("spec");
    let out = specc(&["plan", &path.display().to_string()]);
    assert!(
        out.stderr.contains("spec.md:3:1") && out.stderr.contains("spec.md:4606:1"),
        "{}",
        out.stderr
    );
    let lines = out.stderr.lines().count();
    assert!(
        lines < 40,
        "output grows with labels, not with the distance between them: {lines} lines"
    );
}

#[test]
fn mcp_lists_its_tools_and_says_which_spend() {
    let out = specc(&["mcp", "--list-tools"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!(out.stdout);
}
