use specc_ir::FileId;

use super::{check_decision_set, parse_design_doc, pin};

/// Parses `text` and renders each decision and every diagnostic, with the text it points at.
fn outline(text: &str) -> String {
    let (decisions, mut diagnostics) = parse_design_doc(FileId(0), text);
    diagnostics.extend(check_decision_set(&decisions));
    let mut out = String::new();
    for d in &decisions {
        out.push_str(&format!(
            "{} {:?} pin={} status={:?} supersedes={:?}\n  decision: {:?}\n  rationale: {:?}\n",
            d.id, d.title, d.pin, d.status, d.supersedes, d.decision, d.rationale
        ));
    }
    crate::test_support::push_diagnostics(&mut out, text, &diagnostics);
    out
}

#[track_caller]
fn check(text: &str, expect: &str) {
    crate::test_support::assert_outline(&outline(text), expect);
}

#[test]
fn reads_the_shared_design_example() {
    let text = "# Storage\n\n## Page size {#storage.page-size}\nDecision: 4096-byte pages, fixed when the database is created.\nRationale: matches the OS page; the file format stays simple.\nStatus: accepted\n";
    let p = pin("4096-byte pages, fixed when the database is created.");
    check(
        text,
        &format!(
            r#"
storage.page-size "Page size" pin={p} status=Accepted supersedes=[]
  decision: "4096-byte pages, fixed when the database is created."
  rationale: Some("matches the OS page; the file format stays simple.")
"#
        ),
    );
}

#[test]
fn pins_ignore_wrapping_and_fields_may_be_bold() {
    let (a, _) = parse_design_doc(FileId(0), "## A {#x}\nDecision: one two\nthree.\n");
    let (b, _) = parse_design_doc(
        FileId(0),
        "## A {#x}\n**Decision:**   one\n  two three.\n\nRationale: r\n",
    );
    assert_eq!(a[0].pin, b[0].pin);
    assert_eq!(a[0].pin.len(), 8);
    assert!(a[0].pin.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(b[0].rationale.as_deref(), Some("r"));
    let (c, _) = parse_design_doc(FileId(0), "## A {#x}\nDecision: one two three!\n");
    assert_ne!(a[0].pin, c[0].pin);
}

#[test]
fn statuses_and_supersedes() {
    check(
        "## Old {#a.v1}\nDecision: old.\nStatus: superseded by `a.v2`\n\n## New {#a.v2}\nDecision: new.\nSupersedes: a.v1\nStatus: Proposed\n\n## Odd {#a.v3}\nDecision: odd.\nStatus: maybe\n",
        &format!(
            r#"
a.v1 "Old" pin={} status=SupersededBy("a.v2") supersedes=[]
  decision: "old."
  rationale: None
a.v2 "New" pin={} status=Proposed supersedes=["a.v1"]
  decision: "new."
  rationale: None
a.v3 "Odd" pin={} status=Accepted supersedes=[]
  decision: "odd."
  rationale: None
E0204 unknown status `maybe` at "Status: maybe"
"#,
            pin("old."),
            pin("new."),
            pin("odd.")
        ),
    );
}

#[test]
fn malformed_conflicting_and_duplicate_decisions() {
    let text = "## A {#a}\nRationale: no decision here.\n\n## B {#b}\nDecision: yes.\n\n## B again {#b}\nDecision: no.\n\n## B once more {#b}\nDecision: yes.\n\n## Plain heading\nDecision: not a decision: no id.\n";
    let got = outline(text);
    assert!(
        got.contains("E0201 decision `a` has no `Decision:` line at \"## A {#a}\""),
        "{got}"
    );
    assert!(
        got.contains("E0202 decision `b` is decided two different ways at \"Decision: no.\""),
        "{got}"
    );
    assert!(
        got.contains("W0203 decision `b` is recorded twice at \"## B once more {#b}\""),
        "{got}"
    );
    assert_eq!(got.matches("\n  decision:").count(), 4, "{got}");
}

#[test]
fn subheadings_stay_inside_a_decision() {
    check(
        "## A {#a}\nDecision: yes.\n\n### Alternatives\nStatus: deprecated\n\n## Next\nDecision: ignored.\n",
        &format!(
            r#"
a "A" pin={} status=Deprecated supersedes=[]
  decision: "yes."
  rationale: None
"#,
            pin("yes.")
        ),
    );
}

#[test]
fn a_nested_decision_is_its_own_and_repeated_fields_are_reported() {
    let text = "## Storage {#storage}\nDecision: A.\n\n### Page size {#storage.page-size}\nDecision: B.\n\n#### Alternatives\nDecision: C.\n\n## Empty {#empty}\nDecision:\n";
    let got = outline(text);
    assert!(got.contains("storage \"Storage\""), "{got}");
    assert!(got.contains("  decision: \"A.\""), "{got}");
    assert!(got.contains("storage.page-size \"Page size\""), "{got}");
    assert!(got.contains("  decision: \"B.\""), "{got}");
    assert!(!got.contains("\"C.\""), "{got}");
    assert!(
        got.contains("W0205 `Decision:` appears twice in one decision at \"Decision: C.\""),
        "{got}"
    );
    assert!(
        got.contains("E0201 decision `empty` has no `Decision:` line"),
        "{got}"
    );
}

mod checks {
    use specc_ir::FileId;

    use crate::design_docs::{
        check_against_spec, check_references, parse_design_doc, pin, unreferenced,
    };
    use crate::references::{in_line_comments, line_comment_markers};

    const DOCS: &str = "## Page size {#storage.page-size}\nDecision: 4096-byte pages.\n\n## Old framing {#net.framing-v1}\nDecision: newline-delimited.\nStatus: superseded by net.framing\n\n## Framing {#net.framing}\nDecision: length-prefixed frames.\n\n## Unused {#net.unused}\nDecision: nothing uses this.\n";

    fn codes_for(code: &str) -> Vec<String> {
        let (decisions, diags) = parse_design_doc(FileId(0), DOCS);
        assert!(diags.is_empty(), "{diags:?}");
        let refs = in_line_comments(FileId(1), code, line_comment_markers("rs").unwrap_or(&[]));
        let mut out: Vec<String> = check_references(&decisions, &refs)
            .into_iter()
            .map(|d| {
                format!(
                    "{} {}{}",
                    d.code,
                    d.message,
                    d.help.map(|h| format!(" | {h}")).unwrap_or_default()
                )
            })
            .collect();
        out.extend(
            unreferenced(&decisions, &refs)
                .into_iter()
                .map(|d| format!("{} {}", d.code, d.message)),
        );
        out
    }

    #[test]
    fn unknown_stale_superseded_and_unreferenced() {
        let current = pin("4096-byte pages.");
        let code = format!(
            "// design: storage.page-size@{current}\n// design: storage.page-sise\n// design: storage.page-size@00000000\n// design: net.framing-v1\n// design: net.framing\n"
        );
        let got = codes_for(&code);
        assert_eq!(got.len(), 4, "{got:#?}");
        assert!(
            got[0].starts_with(
                "E0206 no design decision `storage.page-sise` | did you mean `storage.page-size`?"
            ),
            "{got:#?}"
        );
        assert!(
            got[1]
                .starts_with("E0207 `storage.page-size` changed since this code was pinned to it"),
            "{got:#?}"
        );
        assert!(
            got[1].contains(&format!("design: storage.page-size@{current}")),
            "{got:#?}"
        );
        assert!(
            got[2].starts_with("W0208 `net.framing-v1` is superseded by `net.framing`"),
            "{got:#?}"
        );
        assert_eq!(got[3], "W0209 no code references `net.unused`");
    }

    #[test]
    fn a_current_pin_or_no_pin_is_clean() {
        let code = format!(
            "// design: storage.page-size@{}\n// design: net.framing\n// design: net.unused\n",
            pin("4096-byte pages.")
        );
        assert_eq!(codes_for(&code), Vec::<String>::new());
    }

    #[test]
    fn design_decisions_must_agree_with_the_spec() {
        let (decisions, _) = parse_design_doc(FileId(0), DOCS);
        let spec = crate::front_end::parse_spec(
            FileId(1),
            "# S\n> Decision: 8192-byte pages. {#storage.page-size}\n\n> Decision: length-prefixed   frames. {#net.framing}\n",
        );
        let got = check_against_spec(&decisions, &spec.tree);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(got[0].code, "E0210");
        assert_eq!(got[0].secondary.len(), 1);
    }
}
