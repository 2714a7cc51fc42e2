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
    crate::test_support::push_diagnostics(&mut out, text, &parsed.diagnostics);
    out
}

#[track_caller]
fn check(text: &str, expect: &str) {
    crate::test_support::assert_outline(&outline(text), expect);
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
fn the_strongest_keyword_of_a_requirement_sets_its_level() {
    check(
        "# S\n- The OPTIONAL `tag` field MUST be ASCII.\n- It is RECOMMENDED to cache, and it MAY log.\n- It MAY retry and SHOULD NOT loop.\n",
        r#"
node (root) "S"
  req #1 MUST Rfc2119 "The OPTIONAL tag field MUST be ASCII."
  req #2 SHOULD Rfc2119 "It is RECOMMENDED to cache, and it MAY log."
  req #3 SHOULD NOT Rfc2119 "It MAY retry and SHOULD NOT loop."
"#,
    );
}

#[test]
fn text_after_a_nested_block_is_not_glued_to_the_text_before_it() {
    check(
        "# S\n* The relay MUST check each hook:\n  ```sh\n  echo hi\n  ```\n  After emitting, it MUST log.\n\
         - The gate MUST hold:\n  - a nested item\n\n  Then it SHOULD log.\n> Quoted MUST read:\n> ```\n> x\n> ```\n> Then more.\n",
        r#"
node (root) "S"
  req #1 MUST Rfc2119 "The relay MUST check each hook: After emitting, it MUST log."
  req #2 MUST Rfc2119 "The gate MUST hold: Then it SHOULD log."
  req #3 MUST Rfc2119 "Quoted MUST read:"
  example Some("sh")
  example None
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

#[test]
fn non_ascii_space_before_an_abbreviation_does_not_panic() {
    check(
        "# T\n\nThe server MUST reply\u{a0}soon. Then it MUST stop.\n\nA (\u{3000}x. It MAY go.\n",
        r#"
node (root) "T"
  req #1 MUST Rfc2119 "The server MUST reply\u{a0}soon."
  req #2 MUST Rfc2119 "Then it MUST stop."
  req #3 MAY Rfc2119 "It MAY go."
"#,
    );
}

#[test]
fn a_tag_after_the_full_stop_belongs_to_its_sentence() {
    check(
        "# T\n\nThe server MUST reply. [R-1]\nThe client MUST wait (see [R-7]).\n",
        r#"
node (root) "T"
  req R-1 MUST Rfc2119 "The server MUST reply. [R-1]"
  req #2 MUST Rfc2119 "The client MUST wait (see [R-7])."
"#,
    );
}

#[test]
fn a_tag_in_the_middle_is_a_reference_not_an_id() {
    check(
        "# T\n- [R-1] The client MUST retry.\n- The client MUST stop when [R-1] fails.\n- See [RFC-2119]; clients MAY retry.\n\nThis follows from [R-1] above.\n",
        r#"
node (root) "T"
  req R-1 MUST Rfc2119 "[R-1] The client MUST retry."
  req #2 MUST Rfc2119 "The client MUST stop when [R-1] fails."
  req #3 MAY Rfc2119 "See [RFC-2119]; clients MAY retry."
"#,
    );
}

#[test]
fn punctuation_of_any_script_may_touch_a_keyword() {
    check(
        "# T\n- Clients MAY\u{2014}if they wish\u{2014}retry.\n- The server \u{201c}MUST\u{201d} reply.\n- It MUST\u{a0}NOT fail.\n- caféMUST is a word.\n",
        r#"
node (root) "T"
  req #1 MAY Rfc2119 "Clients MAY—if they wish—retry."
  req #2 MUST Rfc2119 "The server “MUST” reply."
  req #3 MUST NOT Rfc2119 "It MUST\u{a0}NOT fail."
"#,
    );
}

#[test]
fn a_list_inside_a_decision_belongs_to_the_decision() {
    check(
        "# T\n\n> Decision: use TCP {#net.transport}\n> - clients reconnect\n\n> Plain quote:\n> - items MUST still count\n> - and MAY be many\n",
        r#"
node (root) "T"
  req #1 MUST Rfc2119 "items MUST still count"
  req #2 MAY Rfc2119 "and MAY be many"
  decision Some("net.transport") "use TCP clients reconnect" None
"#,
    );
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let parsed = super::parse_spec(
        specc_ir::FileId(0),
        "\u{feff}+++\nname = \"x\"\n+++\n# T\n- It MUST go.\n",
    );
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert!(parsed.tree.front_matter.is_some());
    assert_eq!(parsed.tree.root.title, "T");
    let parsed = super::parse_spec(specc_ir::FileId(0), "\u{feff}# Title\n");
    assert_eq!(parsed.tree.root.title, "Title");
}

#[test]
fn many_duplicate_headings_get_distinct_ids() {
    let text = "# T\n".to_owned() + &"## A\n".repeat(5);
    let parsed = super::parse_spec(specc_ir::FileId(0), &text);
    let ids: Vec<_> = parsed
        .tree
        .root
        .children
        .iter()
        .map(|c| c.id.0.as_str())
        .collect();
    assert_eq!(ids, ["a", "a-2", "a-3", "a-4", "a-5"]);
    assert_eq!(parsed.diagnostics.len(), 4);
}

#[test]
fn keywords_in_inline_code_are_quoted_not_used() {
    check(
        "# T\n\nUse the `MUST` keyword in docs. Servers MUST log `MAY` calls.\n\n- Write `SHALL` in capitals.\n",
        r#"
node (root) "T"
  req #1 MUST Rfc2119 "Servers MUST log MAY calls."
"#,
    );
}

#[test]
fn a_trailing_tag_already_taken_is_a_citation() {
    check(
        "# T\n- [R-1] It MUST go.\n- Clients MUST behave as in [R-1].\n\nSee the note in [R-7].\n\nX MUST y. [R-3].\nUse `MUST` NOT here.\n",
        r#"
node (root) "T"
  req R-1 MUST Rfc2119 "[R-1] It MUST go."
  req #2 MUST Rfc2119 "Clients MUST behave as in [R-1]."
  req R-3 MUST Rfc2119 "X MUST y. [R-3]."
"#,
    );
}

/// `find_keyword` picks candidates by a keyword's second letter, which leans on the order of
/// its keyword table: every keyword, negated or not, is found with its level.
#[test]
fn every_keyword_is_found_with_its_level() {
    use specc_ir::Level;
    let cases = [
        ("It MUST x.", Level::Must, "MUST"),
        ("It MUST NOT x.", Level::MustNot, "MUST NOT"),
        ("It SHALL x.", Level::Shall, "SHALL"),
        ("It SHALL  NOT x.", Level::ShallNot, "SHALL  NOT"),
        ("It SHOULD x.", Level::Should, "SHOULD"),
        ("It SHOULD NOT x.", Level::ShouldNot, "SHOULD NOT"),
        ("It MAY x.", Level::May, "MAY"),
        ("Support for x is REQUIRED.", Level::Must, "REQUIRED"),
        (
            "- **REQUIRED**: Read tasks.md first",
            Level::Must,
            "REQUIRED",
        ),
        ("Caching is RECOMMENDED.", Level::Should, "RECOMMENDED"),
        (
            "Polling is NOT RECOMMENDED.",
            Level::ShouldNot,
            "NOT RECOMMENDED",
        ),
        (
            "Polling is NOT\u{a0}RECOMMENDED.",
            Level::ShouldNot,
            "NOT\u{a0}RECOMMENDED",
        ),
        ("Compression is OPTIONAL.", Level::May, "OPTIONAL"),
        ("A reply is NOT REQUIRED.", Level::May, "NOT REQUIRED"),
        ("NOT a keyword, but OPTIONAL is", Level::May, "OPTIONAL"),
    ];
    for (text, level, found) in cases {
        let (l, range) = super::requirements::find_keyword(text).expect(text);
        assert_eq!((l, &text[range]), (level, found), "{text}");
    }
    for none in [
        "MUSTARD MAYBE SHALLOW SHOULDER",
        "SUCH SHAPE MAX",
        "REQUIREDNESS NOTE OPTIONALLY RECOMMENDEDS NOT REQUIRE",
        "NOTRECOMMENDED xREQUIRED",
        "É MUST_",
        "xMUST",
    ] {
        assert!(super::requirements::find_keyword(none).is_none(), "{none}");
    }
}

/// An ordered list's items are named by their numbers as written (design:
/// spec.requirements); an item with two keyword sentences gives each its own; a
/// requirement outside the list takes the next count no item took.
#[test]
fn an_ordered_list_names_its_requirements_by_their_numbers() {
    let src = "# R\n\n## N\n\n1. A line MUST end.\n2. Fields MUST be apart. Names SHOULD be short.\n3. Nothing.\n11. A count MUST be positive.\n\n- An entry MAY repeat.\n\nAnother rule MUST hold.\n";
    let tree = crate::parse_spec(FileId(0), src).tree;
    let ids: Vec<&str> = tree.requirements().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["n#1", "n#2.1", "n#2.2", "n#11", "n#5", "n#6"],
        "{:?}",
        tree.requirements().map(|r| &r.text).collect::<Vec<_>>()
    );
    // Each node keeps its source text as written.
    let n = tree.node("n").expect("n");
    assert!(
        n.text.starts_with("## N\n\n1. A line MUST end."),
        "{}",
        n.text
    );
    assert!(n.text.ends_with("Another rule MUST hold."), "{}", n.text);
    assert_eq!(&src[n.text_span.range()], n.text);
}
