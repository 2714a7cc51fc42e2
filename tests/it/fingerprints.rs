//! Fingerprints change exactly on the path from an edited section to the root.

use std::collections::{BTreeMap, BTreeSet};

use specc_ir::FileId;
use specc_passes::parse_spec;

use crate::support::fixture;

fn fingerprints(text: &str) -> BTreeMap<String, String> {
    let parsed = parse_spec(FileId(0), text);
    parsed
        .tree
        .nodes()
        .map(|n| (n.id.0.clone(), n.fingerprint.to_string()))
        .collect()
}

fn changed(before: &str, after: &str) -> BTreeSet<String> {
    let (a, b) = (fingerprints(before), fingerprints(after));
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "same nodes"
    );
    a.iter()
        .filter(|(id, fp)| b[*id] != **fp)
        .map(|(id, _)| id.clone())
        .collect()
}

fn kvstore() -> String {
    std::fs::read_to_string(fixture("specs/valid/kvstore.md")).expect("fixture")
}

fn set(ids: &[&str]) -> BTreeSet<String> {
    ids.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn editing_one_section_changes_only_its_path_to_the_root() {
    let before = kvstore();
    let after = before.replacen(
        "absent key MUST return nil rather than an error",
        "absent key MUST return nil, never an error",
        1,
    );
    assert_ne!(before, after, "the edit applies");
    let path = changed(&before, &after);
    let leaf = path
        .iter()
        .max_by_key(|id| id.len())
        .expect("something changed")
        .clone();
    // Every changed id is the edited node or one of its ancestors, and all ancestors changed.
    let mut expected = set(&[""]);
    let mut prefix = String::new();
    for seg in leaf.split('/') {
        prefix = if prefix.is_empty() {
            seg.to_owned()
        } else {
            format!("{prefix}/{seg}")
        };
        expected.insert(prefix.clone());
    }
    assert_eq!(path, expected);
    assert!(path.len() >= 3, "the edit is in a nested section: {path:?}");
}

#[test]
fn moving_text_above_a_section_does_not_change_its_fingerprint() {
    let before = kvstore();
    // Lengthen the overview's prose: every later section shifts by many bytes.
    let after = before.replacen(
        "## Overview\n",
        "## Overview\n\nSome more words about the overview, none of them binding.\n",
        1,
    );
    assert_ne!(before, after);
    assert_eq!(changed(&before, &after), set(&["", "overview"]));
}

#[test]
fn whitespace_only_edits_change_nothing() {
    let before = kvstore();
    let after = before.replacen(
        "absent key MUST return nil rather",
        "absent key   MUST return\nnil  rather",
        1,
    );
    assert_ne!(before, after);
    assert_eq!(changed(&before, &after), BTreeSet::new());
}

/// A spec large enough for the front end's second threads (pulldown-cmark and the content
/// digests) gets exactly the fingerprints the one-thread path computes, node by node; and an
/// edit there still changes only its path to the root.
#[test]
fn the_threaded_front_end_fingerprints_like_the_single_threaded_one() {
    let big = specc_tests::repeat_spec(&kvstore(), 600 * 1024);
    let parsed = specc_passes::parse_spec(specc_ir::FileId(0), &big);
    let mut checked = 0;
    for node in parsed.tree.nodes() {
        assert_eq!(
            node.fingerprint,
            specc_passes::front_end::fingerprint_node(node),
            "{}",
            node.id.as_str()
        );
        checked += 1;
    }
    assert!(checked > 300, "{checked} nodes");
    // The same sections at the start of a small spec (one thread) and of a large one.
    let small = specc_passes::parse_spec(specc_ir::FileId(0), &kvstore());
    let filler =
        specc_tests::repeat_spec(&kvstore(), 400 * 1024).replacen("# Repeated spec", "", 1);
    let large = specc_passes::parse_spec(specc_ir::FileId(0), &format!("{}\n{filler}", kvstore()));
    for (a, b) in small
        .tree
        .root
        .children
        .iter()
        .zip(&large.tree.root.children)
    {
        assert_eq!((&a.id, a.fingerprint), (&b.id, b.fingerprint));
    }
    let edited = big.replacen("MUST", "MUST NOT", 1);
    assert_eq!(
        changed(&big, &edited).len(),
        3,
        "a section, its parent, the root"
    );
}
