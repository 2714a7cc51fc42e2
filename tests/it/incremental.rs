//! The salsa layering: an edit to one section re-executes the per-node queries of that
//! section and its ancestors only.

use salsa::Setter;
use specc::db::Database;
use specc_ir::FileId;
use specc_passes::db::{NodeKey, SpecFile, node_summary, parse_spec};

use crate::support::fixture;

/// Runs `node_summary` for every node; returns the node ids in tree order.
fn summarise_all(db: &Database, file: SpecFile) -> Vec<String> {
    let ids: Vec<String> = parse_spec(db, file)
        .tree
        .nodes()
        .map(|n| n.id.0.clone())
        .collect();
    for id in &ids {
        let key = NodeKey::new(db, file, id.clone());
        assert!(node_summary(db, key).is_some(), "{id} has a summary");
    }
    ids
}

/// The executed queries named `query`, as the node ids they ran for.
fn executed(db: &Database, file: SpecFile, ids: &[String], query: &str) -> (Vec<String>, usize) {
    let log = db.take_executed();
    let parses = log.iter().filter(|l| l.starts_with("parse_spec(")).count();
    let ran: Vec<String> = ids
        .iter()
        .filter(|id| {
            let key = NodeKey::new(db, file, (*id).clone());
            let needle = format!("{query}({:?})", salsa::plumbing::AsId::as_id(&key));
            log.iter().any(|l| l.contains(&needle))
        })
        .cloned()
        .collect();
    (ran, parses)
}

#[test]
fn editing_one_section_reruns_only_its_path() {
    let text = std::fs::read_to_string(fixture("specs/valid/twenty-sections.md")).expect("fixture");
    let db = &mut Database::with_event_log();
    let file = SpecFile::new(
        &*db,
        "twenty-sections.md".to_owned(),
        FileId(0),
        text.clone(),
    );
    let ids = summarise_all(db, file);
    assert!(ids.len() >= 21, "{ids:?}");
    let (first, parses) = executed(db, file, &ids, "node_summary");
    assert_eq!(parses, 1);
    assert_eq!(first.len(), ids.len(), "a cold run summarises every node");

    // Edit one requirement in one section, through the input's setter.
    let section = ids[5].clone();
    let node = parse_spec(db, file)
        .tree
        .node(&section)
        .expect("section")
        .clone();
    let req = node
        .requirements
        .first()
        .expect("the section has a requirement");
    let mut edited = text.clone();
    let at = req.span.range();
    edited.replace_range(at.clone(), &format!("{} (edited)", &text[at]));
    file.set_text(db).to(edited);

    summarise_all(db, file);
    let (reran, parses) = executed(db, file, &ids, "node_summary");
    assert_eq!(parses, 1, "the front end re-parses the file once");
    assert_eq!(
        reran,
        vec![String::new(), section],
        "only the edited section and the root"
    );

    // Nothing changed: nothing re-runs.
    summarise_all(db, file);
    let (reran, parses) = executed(db, file, &ids, "node_summary");
    assert_eq!((reran.len(), parses), (0, 0));
}

#[test]
fn editing_prose_in_a_nested_section_reruns_its_ancestors_too() {
    let text = std::fs::read_to_string(fixture("specs/valid/kvstore.md")).expect("fixture");
    let db = &mut Database::with_event_log();
    let file = SpecFile::new(&*db, "kvstore.md".to_owned(), FileId(0), text.clone());
    let ids = summarise_all(db, file);
    db.take_executed();
    let edited = text.replacen(
        "absent key MUST return nil rather than an error",
        "absent key MUST return nil, never an error",
        1,
    );
    assert_ne!(edited, text);
    file.set_text(db).to(edited);
    summarise_all(db, file);
    let (reran, _) = executed(db, file, &ids, "node_summary");
    assert_eq!(
        reran,
        vec!["", "protocol", "protocol/commands", "protocol/commands/get"]
    );
}
