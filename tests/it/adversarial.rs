//! Inputs built to break a parser: none may panic, overflow the stack or fail to finish.

use specc_ir::FileId;
use specc_passes::parse_spec;

use crate::cli::tempdir;
use crate::support::specc;

#[test]
fn ten_thousand_deep_nested_list() {
    let mut text = String::from("# Deep\n\n");
    text.push_str(&"- ".repeat(10_000));
    text.push_str("The innermost item MUST still be found.\n");
    let parsed = parse_spec(FileId(0), &text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.tree.requirements().count(), 1);
}

#[test]
fn ten_thousand_deep_indented_list_and_quotes() {
    let mut text = String::from("# Deep\n\n");
    for depth in 0..10_000 {
        text.push_str(&">".repeat(depth % 50));
        text.push_str(&"  ".repeat(depth % 100));
        text.push_str("- item MAY nest\n");
    }
    text.push_str(&">".repeat(10_000));
    text.push_str(" The quote SHOULD parse.\n");
    let parsed = parse_spec(FileId(0), &text);
    assert!(parsed.tree.requirements().count() > 0);
}

#[test]
fn deep_list_through_the_cli() {
    let dir = tempdir("deep");
    let path = dir.join("deep.md");
    std::fs::write(
        &path,
        format!("# Deep\n\n{}x MUST be found\n", "- ".repeat(10_000)),
    )
    .expect("write");
    let out = specc(&["plan", &path.display().to_string(), "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn empty_file_through_the_cli() {
    let dir = tempdir("empty");
    let path = dir.join("empty.md");
    std::fs::write(&path, "").expect("write");
    let out = specc(&["plan", &path.display().to_string()]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("E0103"), "{}", out.stderr);
}

#[test]
fn fifty_megabyte_spec_finishes() {
    let text = specc_tests::generate_spec(50 * 1024 * 1024);
    let dir = tempdir("big");
    let path = dir.join("big.md");
    std::fs::write(&path, &text).expect("write");
    let parsed = parse_spec(FileId(0), &text);
    assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics.first());
    let sections = parsed.tree.nodes().count() - 1;
    assert_eq!(
        parsed.tree.requirements().count(),
        sections * specc_tests::GENERATED_REQUIREMENTS_PER_SECTION
    );
    let path = path.display().to_string();
    let json = specc(&["plan", &path, "--format", "json"]);
    assert_eq!(json.code, 0);
    // The text tree looks every node up by id: this is the path that was quadratic once.
    let text = specc(&["plan", &path]);
    assert_eq!(text.code, 0);
    assert_eq!(
        text.stdout.lines().count(),
        sections + 2,
        "a header and a line per node"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn pathological_markdown_never_panics() {
    let cases = [
        "+++",
        "+++\n",
        "+++\n+++",
        "+++\nx = 1\n+++",
        "# {#}",
        "# A {#a}\n## B {#a}\n### C {#a}",
        "## \u{2713}\n## \u{2713}",
        "> Decision:",
        "> Decision: {#x}",
        "- [R-1] x MUST\n- [R-1] y MUST\n- [R-1] z MUST",
        "```test\n```",
        "```\nunterminated",
        "WHEN",
        "MUST",
        "MUST NOT",
        "[R-",
        "[R-1",
        "é MUST é. é SHALL é",
        "# a\n\n| a | b |\n|---|---|\n| MUST | x |\n",
        "\u{feff}# BOM\nx MUST y",
        "<!-- MUST -->\n<div>MUST</div>",
        "\r\n\r\n# CRLF\r\n\r\n- x MUST y\r\n",
    ];
    for case in cases {
        let parsed = parse_spec(FileId(0), case);
        for d in &parsed.diagnostics {
            if let Some(l) = &d.primary {
                assert!(
                    l.span.end as usize <= case.len(),
                    "span past the end for {case:?}"
                );
                assert!(case.is_char_boundary(l.span.start as usize), "{case:?}");
            }
        }
    }
}
