//! A person's commits in `out/`: a clean one is imported into the build's history with its
//! author, so a rebuild after a spec edit works on top of it and keeps it, a merge as its
//! first-parent diff; an unsafe one (a symlink) is refused, naming why, and nothing is overwritten (design: vcs.import).

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use specc_tests::answers::AnswerBook;

use crate::build::{TOML, child, done, git, project, rebuild, write};

const SPEC: &str =
    "# Pair\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n## Beta\n\n- [R-2] Beta MUST exist.\n";

fn book() -> Arc<AnswerBook> {
    let attempt = |f: &str, text: &str| json!([[write(f, text)], [done()]]);
    Arc::new(AnswerBook::new(json!({
        "planner": {"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
            child("b", "R-2", "b.txt", &["test -f b.txt"], &[]),
        ]}},
        "workers": {"a": [attempt("a.txt", "alpha\n"), attempt("a.txt", "alpha, again\n")],
                    "b": [attempt("b.txt", "beta\n"), attempt("b.txt", "beta, again\n")]},
    })))
}

fn calls(book: &AnswerBook, task: &str) -> usize {
    book.seen()
        .iter()
        .filter(|s| s.starts_with(&format!("{task}#")))
        .count()
}

/// Commits everything in `out` as Pat.
fn commit_as_pat(out: &Path, message: &str) {
    assert!(git(out, &["add", "-A"]).0);
    let (ok, _) = git(
        out,
        &[
            "-c",
            "user.name=Pat Person",
            "-c",
            "user.email=pat@example.com",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
    assert!(ok, "commit");
}

#[test]
fn a_persons_clean_commit_is_imported_and_kept_by_a_rebuild_after_a_spec_edit() {
    let dir = project(TOML);
    std::fs::write(dir.path().join("spec.md"), SPEC).expect("spec");
    let b = book();
    let first = rebuild(dir.path(), &b, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.err, first.out);
    let out = dir.path().join("out");
    std::fs::write(out.join("a.txt"), "alpha, by a person\n").expect("edit");
    std::fs::write(out.join("notes.txt"), "my notes\n").expect("add");
    commit_as_pat(&out, "my own alpha");
    // Beta's requirement changes: only b is built again, on top of Pat's commit.
    let edited = SPEC.replace("Beta MUST exist.", "Beta MUST exist, twice.");
    std::fs::write(dir.path().join("spec.md"), edited).expect("spec");
    let second = rebuild(dir.path(), &b, &[]);
    assert_eq!(second.code, 0, "{}\n{}", second.err, second.out);
    assert!(
        second.err.contains("imported 1 commit made in"),
        "{}",
        second.err
    );
    assert_eq!((calls(&b, "a"), calls(&b, "b")), (2, 4));
    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap_or_default();
    assert_eq!(
        read("a.txt"),
        "alpha, by a person\n",
        "the person's edit is kept"
    );
    assert_eq!(read("notes.txt"), "my notes\n");
    assert_eq!(read("b.txt"), "beta, again\n");
    // Pat's commit stays in out/'s history with Pat as its author, specc's on top of it.
    let (_, log) = git(&out, &["log", "--format=%an|%s"]);
    let lines: Vec<&str> = log.lines().collect();
    assert!(lines[0].starts_with("specc|"), "{log}");
    assert_eq!(lines[1], "Pat Person|my own alpha", "{log}");
    assert!(git(&out, &["fsck", "--strict"]).0);
    assert!(
        git(&out, &["status", "--porcelain"]).1.is_empty(),
        "out/ is clean after the export"
    );
    // The store holds the import with its author: a third build is up to date, and a
    // forced rebuild of a works on Pat's a.txt (its attempt rewrites it: a task said so).
    let third = rebuild(dir.path(), &b, &[]);
    assert_eq!(third.code, 0, "{}", third.err);
    assert!(third.out.contains("2 up to date"), "{}", third.out);
    assert!(!third.err.contains("imported"), "{}", third.err);
}

#[test]
fn a_merge_commit_is_imported_as_its_first_parent_diff_and_a_symlink_is_refused() {
    let dir = project(TOML);
    std::fs::write(dir.path().join("spec.md"), SPEC).expect("spec");
    let b = book();
    assert_eq!(rebuild(dir.path(), &b, &[]).code, 0);
    let out = dir.path().join("out");
    assert!(git(&out, &["checkout", "-q", "-b", "side"]).0);
    std::fs::write(out.join("side.txt"), "side\n").expect("side");
    commit_as_pat(&out, "side");
    assert!(git(&out, &["checkout", "-q", "main"]).0);
    std::fs::write(out.join("main.txt"), "main\n").expect("main");
    commit_as_pat(&out, "main");
    let merge = [
        "-c",
        "user.name=Pat Person",
        "-c",
        "user.email=pat@example.com",
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge side",
        "side",
    ];
    assert!(git(&out, &merge).0, "merge");
    let merged = rebuild(dir.path(), &b, &[]);
    assert_eq!(merged.code, 0, "{}", merged.err);
    assert!(merged.err.contains("imported 2 commits"), "{}", merged.err);
    for f in ["side.txt", "main.txt", "a.txt", "b.txt"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // A symlink has no form in the store: refused, naming it, and nothing overwritten.
    std::os::unix::fs::symlink("a.txt", out.join("link.txt")).expect("link");
    commit_as_pat(&out, "a link");
    let head = git(&out, &["rev-parse", "HEAD"]).1;
    let seen = b.seen().len();
    let again = rebuild(dir.path(), &b, &["--force", "a"]);
    assert_eq!(again.code, 1, "{}", again.err);
    assert!(
        again.err.contains("E0403") && again.err.contains("`link.txt` has"),
        "{}",
        again.err
    );
    assert_eq!(
        git(&out, &["rev-parse", "HEAD"]).1,
        head,
        "main is untouched"
    );
    assert_eq!(b.seen().len(), seen, "no model was asked");
}

#[test]
fn work_landed_after_the_last_export_goes_beside_main_and_a_rebase_onto_it_imports() {
    let dir = project(TOML);
    std::fs::write(dir.path().join("spec.md"), SPEC).expect("spec");
    let b = book();
    assert_eq!(rebuild(dir.path(), &b, &[]).code, 0);
    // Work the store landed that was never exported (an export refused or interrupted).
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("rt");
    rt.block_on(async {
        let repo = specc_vcs::Repo::open(
            &dir.path().join(".specc/vcs/log"),
            specc_vcs::Options::default(),
        )
        .expect("store");
        let head = repo.head_now().expect("head");
        let landed = repo
            .submit(specc_vcs::Submission {
                base: head,
                changes: vec![specc_vcs::Change {
                    path: "landed.txt".into(),
                    expected: None,
                    new: Some(b"landed, not exported\n".to_vec()),
                    executable: false,
                }],
                message: "landed meanwhile".into(),
                task: "a".into(),
                idempotency_key: String::new(),
            })
            .await;
        assert!(
            matches!(landed, specc_vcs::Outcome::Committed { .. }),
            "{landed:?}"
        );
    });
    let out = dir.path().join("out");
    std::fs::write(out.join("notes.txt"), "mine\n").expect("notes");
    commit_as_pat(&out, "my notes");
    let refused = rebuild(dir.path(), &b, &[]);
    assert_eq!(refused.code, 1, "{}", refused.err);
    assert!(
        refused.err.contains("E0403") && refused.err.contains("branch `specc`"),
        "{}",
        refused.err
    );
    let (_, on_branch) = git(&out, &["show", "specc:landed.txt"]);
    assert_eq!(on_branch, "landed, not exported\n");
    assert!(
        git(&out, &["rebase", "-q", "specc"]).0,
        "the person's rebase"
    );
    let after = rebuild(dir.path(), &b, &[]);
    assert_eq!(after.code, 0, "{}\n{}", after.err, after.out);
    assert!(after.err.contains("imported 1 commit"), "{}", after.err);
    let (_, tree) = git(&out, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(
        tree.contains("landed.txt") && tree.contains("notes.txt"),
        "{tree}"
    );
}
