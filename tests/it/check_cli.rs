//! `specc check` and `specc pin` on trees built at test time: what fixtures cannot hold (a
//! 20 MB file), what changes files (pin), and what runs until told to stop (--watch).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::support::specc;

const DOC: &str = "# Storage\n\n## Page size {#storage.page-size}\nDecision: 4096-byte pages.\nRationale: matches the OS page.\n";
/// The pin of "4096-byte pages.".
fn current_pin() -> String {
    specc_passes::design_docs::pin("4096-byte pages.")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write(&dir.path().join("design-docs/storage.md"), DOC);
    for (rel, text) in files {
        write(&dir.path().join(rel), text);
    }
    dir
}

fn path(dir: &tempfile::TempDir) -> String {
    dir.path().display().to_string()
}

#[test]
fn a_twenty_megabyte_source_is_skipped_with_a_warning() {
    let mut big = "// padding line that is not a reference\n".repeat(20 * 1024 * 1024 / 40);
    big.push_str("// design: missing.decision\n");
    let dir = tree(&[
        ("src/big.c", &big),
        ("src/ok.rs", "// design: storage.page-size\n"),
    ]);
    let out = specc(&["check", &path(&dir), "--message-format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let all = crate::support::json_diagnostics(&out.stdout);
    assert_eq!(all.len(), 1, "{}", out.stdout);
    let d = &all[0];
    assert_eq!(d["code"], "W0212");
    let message = d["message"].as_str().unwrap_or_default();
    assert!(
        message.ends_with("big.c` is 20 MiB; sources over 8 MiB are not searched"),
        "{message}"
    );
    let last = out.stdout.lines().last().unwrap_or_default();
    let summary: serde_json::Value = serde_json::from_str(last).expect("the summary, last");
    assert_eq!(summary["sources"], 1, "only the small file was checked");
}

#[test]
fn a_missing_path_or_a_file_is_a_usage_error() {
    let out = specc(&["check", "/nonexistent/specc/tree"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("E0001"), "{}", out.stderr);
    let dir = tree(&[]);
    let file = dir
        .path()
        .join("design-docs/storage.md")
        .display()
        .to_string();
    let out = specc(&["check", &file]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is not a directory"), "{}", out.stderr);
}

#[test]
fn pin_rewrites_stale_pins_and_then_the_check_passes() {
    let src = "fn a() {} // design: storage.page-size@0badc0de\n// design: storage.page-size\n/// design: storage.page-size@0badc0de and design: nope.unknown\n";
    let dir = tree(&[("src/lib.rs", src)]);
    let before = specc(&["check", &path(&dir)]);
    assert_eq!(before.code, 1);
    assert_eq!(
        before.stderr.matches("E0207").count(),
        2,
        "{}",
        before.stderr
    );

    // Every stale pin in the file; the unpinned reference stays unpinned; the unknown id is
    // reported, not pinned.
    let file = dir.path().join("src/lib.rs");
    let out = specc(&["pin", &file.display().to_string()]);
    assert_eq!(out.code, 1, "the unknown id is an error: {}", out.stderr);
    assert!(out.stderr.contains("E0206"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 2, "{}", out.stdout);
    let pin = current_pin();
    let after = std::fs::read_to_string(&file).expect("read");
    assert_eq!(
        after,
        src.replace("0badc0de", &pin),
        "only the pins changed, byte for byte"
    );

    // Naming a line pins its unpinned references too.
    let out = specc(&["pin", &format!("{}:2", file.display())]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after = std::fs::read_to_string(&file).expect("read");
    assert_eq!(
        after.lines().nth(1),
        Some(format!("// design: storage.page-size@{pin}").as_str())
    );

    // Nothing left to do, and nothing at a line without references.
    let out = specc(&["pin", &format!("{}:1", file.display())]);
    assert_eq!(
        (out.code, out.stdout.contains("every pin is current")),
        (0, true),
        "{}",
        out.stdout
    );
    let out = specc(&["pin", &format!("{}:4", file.display())]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("E0214"), "{}", out.stderr);

    std::fs::write(&file, after.replace(" and design: nope.unknown", "")).expect("write");
    let check = specc(&["check", &path(&dir)]);
    assert_eq!(check.code, 0, "{}", check.stderr);
}

#[test]
fn pin_refuses_files_it_cannot_pin() {
    let dir = tree(&[("notes.txt", "design: storage.page-size@0badc0de\n")]);
    let out = specc(&["pin", &dir.path().join("notes.txt").display().to_string()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("not a source file"), "{}", out.stderr);
    let out = specc(&[
        "pin",
        &dir.path().join("src/absent.rs").display().to_string(),
    ]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("does not exist"), "{}", out.stderr);
}

#[test]
fn watch_rechecks_on_change_and_says_what_changed() {
    let dir = tree(&[("src/lib.rs", "// design: storage.page-size\n")]);
    let root = path(&dir);
    let file = dir.path().join("src/lib.rs");
    let watcher =
        std::thread::spawn(move || specc(&["check", &root, "--watch", "--watch-limit", "1"]));
    // Keep editing until the watcher has seen an edit: it may not be watching yet, and the
    // initial check may already see the first edit.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    while !watcher.is_finished() {
        assert!(Instant::now() < deadline, "the watcher never re-checked");
        n += 1;
        std::fs::write(&file, format!("// design: storage.page-sise {n}\n")).expect("write");
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = watcher.join().expect("no panic");
    assert_eq!(out.code, 1, "the last check found an error: {}", out.stdout);
    let rounds: Vec<&str> = out.stdout.split("\nchanged: ").collect();
    assert_eq!(
        rounds.len(),
        2,
        "one initial check and one re-check: {}",
        out.stdout
    );
    assert!(rounds[0].contains("watching "), "{}", rounds[0]);
    assert!(rounds[1].starts_with("edited "), "{}", rounds[1]);
    assert!(rounds[1].contains("src/lib.rs"), "{}", rounds[1]);
    assert!(rounds[1].contains("1 error"), "{}", rounds[1]);
    assert!(rounds[1].contains("re-checked in"), "{}", rounds[1]);
    assert!(
        out.stderr.contains("did you mean `storage.page-size`?"),
        "{}",
        out.stderr
    );
}

#[test]
fn pin_keeps_the_spelling_replaces_malformed_pins_and_writes_through_links() {
    let src = "//design:storage.page-size@0badc0de\n// design: storage.page-size@123 and design: storage.page-size@0123456789\n";
    let dir = tree(&[("src/real.rs", src)]);
    let real = dir.path().join("src/real.rs");
    let link = dir.path().join("src/link.rs");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let pin = current_pin();

    let out = specc(&["pin", &link.display().to_string()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = specc(&["pin", &format!("{}:2", link.display())]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(link.is_symlink(), "the link is still a link");
    let after = std::fs::read_to_string(&real).expect("read");
    assert_eq!(
        after,
        format!(
            "//design:storage.page-size@{pin}\n// design: storage.page-size@{pin} and design: storage.page-size@{pin}\n"
        )
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("src"))
        .expect("dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().contains("specc-pin"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file is left behind");
}

#[test]
fn watch_sees_added_files_and_spec_edits() {
    let dir = tree(&[("src/lib.rs", "// design: storage.page-size\n")]);
    write(
        &dir.path().join("spec.md"),
        "# Spec\n\n> Decision: 4096-byte pages. {#storage.page-size}\n",
    );
    let mut session = specc::check::CheckSession::open(
        specc::db::Database::default(),
        dir.path(),
        Some(&dir.path().join("spec.md")),
        specc::check::CheckOptions::default(),
    )
    .expect("opens");
    assert!(session.check().diagnostics.is_empty());

    let added = dir.path().join("src/new.py");
    write(&added, "# design: nope.unknown\n");
    let changes = session.update(std::slice::from_ref(&added));
    assert_eq!(changes.added.len(), 1, "{changes:?}");
    assert_eq!(session.check().diagnostics.len(), 1);

    let spec = dir.path().join("spec.md");
    write(
        &spec,
        "# Spec\n\n> Decision: 8192-byte pages. {#storage.page-size}\n",
    );
    let changes = session.update(std::slice::from_ref(&spec));
    assert_eq!(changes.edited.len(), 1, "{changes:?}");
    let codes: Vec<&str> = session.check().diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(
        codes,
        ["E0210", "E0206"],
        "the spec now contradicts the design"
    );

    std::fs::remove_dir_all(dir.path().join("src")).expect("rm");
    let changes = session.update(&[dir.path().join("src")]);
    assert_eq!(changes.removed.len(), 2, "{changes:?}");
    assert_eq!(session.check().sources, 0);
}
