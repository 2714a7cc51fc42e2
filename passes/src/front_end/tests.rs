//! Unit tests of the front end, through one `check` helper that prints a compact outline.

use specc_ir::{FileId, IntentNode};

use super::parse_spec;

/// Parses `text` and renders nodes, requirements, checks, decisions and diagnostics.
fn outline(text: &str) -> String {
    let parsed = parse_spec(FileId(0), text);
    let mut out = String::new();
    let mut stack: Vec<(&IntentNode, usize)> = vec![(&parsed.tree.root, 0)];
    while let Some((node, depth)) = stack.pop() {
        let pad = "  ".repeat(depth);
        out.push_str(&format!("{pad}node {} {:?}\n", node.id, node.title));
        for r in &node.requirements {
            out.push_str(&format!(
                "{pad}  req {} {} {:?} {:?}\n",
                r.id, r.level, r.form, r.text
            ));
        }
        for c in &node.checks {
            out.push_str(&format!("{pad}  check {} {:?}\n", c.runner, c.code));
        }
        for e in &node.examples {
            out.push_str(&format!("{pad}  example {:?}\n", e.lang));
        }
        for d in &node.decisions {
            out.push_str(&format!(
                "{pad}  decision {:?} {:?} {:?}\n",
                d.id, d.text, d.rationale
            ));
        }
        for n in &node.non_goals {
            out.push_str(&format!("{pad}  non-goal {:?}\n", n.text));
        }
        stack.extend(node.children.iter().rev().map(|c| (c, depth + 1)));
    }
    for d in &parsed.diagnostics {
        let at = d
            .primary
            .as_ref()
            .map(|l| &text[l.span.range()])
            .unwrap_or("");
        out.push_str(&format!("{} {} at {at:?}\n", d.code, d.message));
    }
    out
}

#[track_caller]
fn check(text: &str, expect: &str) {
    let got = outline(text);
    assert_eq!(got.trim(), expect.trim(), "\n--- got ---\n{got}");
}

#[test]
fn first_h1_titles_the_root_and_sections_nest() {
    check(
        "# Store\n\n## Storage\n\n### Page cache\n\nIt MUST evict.\n\n## Network\n",
        r#"
node (root) "Store"
  node storage "Storage"
    node storage/page-cache "Page cache"
      req storage/page-cache#1 MUST Rfc2119 "It MUST evict."
  node network "Network"
"#,
    );
}

#[test]
fn explicit_ids_replace_the_path_and_prefix_children() {
    check(
        "# S\n## Storage {#store}\n### Cache\n",
        r#"
node (root) "S"
  node store "Storage"
    node store/cache "Cache"
"#,
    );
}

#[test]
fn keywords_need_capitals_and_whole_words() {
    check(
        "# S\n- it must not count\n- MUSTARD is food\n- it MUST NOT fail\n- it SHOULD NOT log\n- MAY.\n",
        r#"
node (root) "S"
  req #1 MUST NOT Rfc2119 "it MUST NOT fail"
  req #2 SHOULD NOT Rfc2119 "it SHOULD NOT log"
  req #3 MAY Rfc2119 "MAY."
"#,
    );
}

#[test]
fn paragraph_sentences_split_and_abbreviations_hold() {
    check(
        "# S\n\nIntro, e.g. this. The server MUST reply. Is it fast? Clients SHOULD retry! Done.\n",
        r#"
node (root) "S"
  req #1 MUST Rfc2119 "The server MUST reply."
  req #2 SHOULD Rfc2119 "Clients SHOULD retry!"
"#,
    );
}

#[test]
fn ears_forms_and_tags() {
    check(
        "# S\n- WHEN a frame arrives, THE SYSTEM SHALL parse it. [R-1]\n- WHILE idle, THE SYSTEM SHALL sleep.\n- IF the disk fills, THEN THE SYSTEM SHALL refuse writes.\n- WHERE TLS is on, THE SYSTEM SHALL verify peers.\n- [R-2] THE SYSTEM SHALL log.\n",
        r#"
node (root) "S"
  req R-1 SHALL EarsEvent "WHEN a frame arrives, THE SYSTEM SHALL parse it. [R-1]"
  req #2 SHALL EarsState "WHILE idle, THE SYSTEM SHALL sleep."
  req #3 SHALL EarsUnwanted "IF the disk fills, THEN THE SYSTEM SHALL refuse writes."
  req #4 SHALL EarsOptional "WHERE TLS is on, THE SYSTEM SHALL verify peers."
  req R-2 SHALL EarsUbiquitous "[R-2] THE SYSTEM SHALL log."
"#,
    );
}

#[test]
fn checks_examples_decisions_and_non_goals() {
    check(
        "# S\n```sh test\ntrue\n```\n```json\n{}\n```\n> Decision: 4 KiB pages. {#storage.page-size}\n> Rationale: the OS page.\n\n## Non-goals\n- Clustering.\n- It MUST NOT count here.\n## Next\n",
        r#"
node (root) "S"
  check sh "true\n"
  example Some("json")
  decision Some("storage.page-size") "4 KiB pages." Some("the OS page.")
  non-goal "Clustering."
  non-goal "It MUST NOT count here."
  node next "Next"
"#,
    );
}

#[test]
fn diagnostics_point_at_the_offending_text() {
    check(
        "# S\n## A\n## A\n- x MUST [T-1]\n- y MUST [T-1]\n```cobol test\n```\n## {#bad//id}\n- [T-9] no keyword\n",
        r###"
node (root) "S"
  node a "A"
  node a-2 "A"
    req T-1 MUST Rfc2119 "x MUST [T-1]"
    req a-2#2 MUST Rfc2119 "y MUST [T-1]"
    check cobol ""
  node section-3 ""
E0101 duplicate section id `a` at "## A"
E0102 duplicate requirement tag `[T-1]` at "[T-1]"
E0105 unknown test runner `cobol` at "```cobol test"
E0108 `{#bad//id}` is not a valid section id at "## {#bad//id}"
W0106 heading has no text to make an id from at "## {#bad//id}"
W0109 `[T-9]` tags text with no requirement keyword at "[T-9]"
"###,
    );
}
