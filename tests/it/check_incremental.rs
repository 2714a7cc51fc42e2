//! `specc check` is incremental: each file is a salsa input, and an edit re-runs only what it
//! reaches. The assertions read salsa's `WillExecute` events.

use std::path::{Path, PathBuf};

use specc::check::{CheckOptions, CheckSession};
use specc::db::Database;

const DOC: &str = "# Storage\n\n## Page size {#storage.page-size}\nDecision: 4096-byte pages.\nRationale: matches the OS page.\n\n## Log {#storage.wal}\nDecision: a write-ahead log.\nRationale: durability.\n";

/// A tree of 40 sources: two refer to `storage.page-size`, three to `storage.wal`.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    write(&root.join("design-docs/storage.md"), DOC);
    for i in 0..40 {
        let text = match i {
            3 | 17 => "// design: storage.page-size\nfn f() {}\n".to_owned(),
            5 | 6 | 30 => "# design: storage.wal\nx = 1\n".to_owned(),
            _ => format!("// plain file {i}\nfn g{i}() {{}}\n"),
        };
        let ext = if matches!(i, 5 | 6 | 30) { "py" } else { "rs" };
        write(&root.join(format!("src/f{i:02}.{ext}")), &text);
    }
    (dir, root)
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn open(root: &Path) -> CheckSession {
    let mut session = CheckSession::open(
        Database::with_event_log(),
        root,
        None,
        CheckOptions::default(),
    )
    .expect("opens");
    let report = session.check();
    assert_eq!(report.diagnostics.len(), 0, "{:?}", report.diagnostics);
    assert_eq!(report.references, 5);
    session
}

/// How many times `query` executed, from the log since the last call.
fn count(log: &[String], query: &str) -> usize {
    log.iter()
        .filter(|l| l.starts_with(&format!("{query}(")))
        .count()
}

#[test]
fn editing_one_code_file_reparses_only_that_file() {
    let (_dir, root) = tree();
    let mut session = open(&root);
    let cold = session.db().take_executed();
    assert_eq!(
        count(&cold, "source_references"),
        40,
        "a cold check parses every file"
    );

    let path = root.join("src/f17.rs");
    write(&path, "// design: storage.page-size@00000000\nfn f() {}\n");
    let changes = session.update(std::slice::from_ref(&path));
    assert_eq!(changes.edited.len(), 1);
    let report = session.check();
    assert_eq!(report.diagnostics.len(), 1, "the stale pin is reported");
    assert_eq!(report.diagnostics[0].code, "E0207");

    let log = session.db().take_executed();
    let file = session.source(&path).expect("loaded");
    let id = format!(
        "source_references({:?})",
        salsa::plumbing::AsId::as_id(&file)
    );
    let parses: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("source_references("))
        .collect();
    assert_eq!(parses, [&id], "only the edited file is re-parsed");
    assert_eq!(
        count(&log, "source_findings"),
        1,
        "only the edited file is re-checked"
    );
    assert_eq!(
        count(&log, "doc_decisions"),
        0,
        "no design document is re-read"
    );
}

#[test]
fn editing_a_rationale_rechecks_no_references() {
    let (_dir, root) = tree();
    let mut session = open(&root);
    session.db().take_executed();

    let path = root.join("design-docs/storage.md");
    let edited = DOC.replace(
        "matches the OS page.",
        "matches the OS page, and\nthe disk's sector size is smaller.",
    );
    write(&path, &edited);
    assert_eq!(session.update(std::slice::from_ref(&path)).edited.len(), 1);
    assert!(session.check().diagnostics.is_empty());

    let log = session.db().take_executed();
    assert_eq!(
        count(&log, "doc_decisions"),
        1,
        "the document is re-read: {log:?}"
    );
    assert_eq!(count(&log, "source_references"), 0);
    assert_eq!(
        count(&log, "source_findings"),
        0,
        "no reference is re-checked: {log:?}"
    );
}

#[test]
fn editing_a_decision_text_rechecks_exactly_its_referrers() {
    let (_dir, root) = tree();
    let mut session = open(&root);
    session.db().take_executed();

    let path = root.join("design-docs/storage.md");
    write(
        &path,
        &DOC.replace(
            "a write-ahead log.",
            "a write-ahead log, fsynced per batch.",
        ),
    );
    session.update(std::slice::from_ref(&path));
    assert!(
        session.check().diagnostics.is_empty(),
        "unpinned references stay valid"
    );

    let log = session.db().take_executed();
    assert_eq!(
        count(&log, "source_references"),
        0,
        "no source is re-parsed"
    );
    assert_eq!(
        count(&log, "source_findings"),
        3,
        "the three files referring to storage.wal, and no other: {log:?}"
    );
}
