//! Checkout and git export: the exported history is `git fsck --strict` clean, carries the
//! messages and task ids, its head tree equals the store's byte for byte, and a second export
//! appends only the new commits.

use std::path::Path;
use std::process::Command;

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, FileEntry, Options, Outcome, Repo, Submission};

mod support;
use support::git;

async fn commit(repo: &Repo, path: &str, new: Option<&str>, task: &str) -> ObjectId {
    let (head, file) = repo.read_head(path).await.expect("head");
    let s = Submission {
        base: head,
        changes: vec![Change {
            path: path.to_owned(),
            expected: file.map(|f| f.blob),
            new: new.map(|t| t.as_bytes().to_vec()),
            executable: false,
        }],
        message: format!("{task}: write {path}"),
        task: task.to_owned(),
        idempotency_key: String::new(),
    };
    match repo.submit(s).await {
        Outcome::Committed { id, .. } => id,
        other => panic!("{other:?}"),
    }
}

/// The tree of `main` (path, bytes, mode), from git itself.
fn git_tree(dir: &Path) -> Vec<FileEntry> {
    let mut files: Vec<FileEntry> = git(dir, &["ls-tree", "-r", "main"])
        .lines()
        .map(|l| {
            let (meta, path) = l.split_once('\t').expect("ls-tree line");
            let meta: Vec<&str> = meta.split_whitespace().collect();
            assert!(meta[0] == "100644" || meta[0] == "100755", "{l}");
            let o = Command::new("git")
                .args(["cat-file", "blob", meta[2]])
                .current_dir(dir)
                .output()
                .expect("cat-file");
            FileEntry {
                path: path.to_owned(),
                bytes: o.stdout,
                executable: meta[0] == "100755",
            }
        })
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_is_fsck_clean_equal_to_the_store_and_incremental() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    for i in 0..30 {
        let path = format!("src/m{}/f{}.rs", i % 3, i % 7);
        commit(
            &repo,
            &path,
            Some(&format!("// version {i}\nfn f() {{}}\n")),
            &format!("task-{i}"),
        )
        .await;
    }
    commit(&repo, "src/m0/f0.rs", None, "task-delete").await;
    let head = commit(&repo, "README.md", Some("# exported\n"), "task-readme").await;

    let work = dir.path().join("work");
    let written = repo.checkout(head, &work, &[]).await.expect("checkout");
    let store_files = repo.files(head).await.expect("files");
    assert_eq!(written, store_files.len());
    for f in &store_files {
        assert_eq!(
            std::fs::read(work.join(&f.path)).expect("checked out"),
            f.bytes
        );
    }
    assert!(
        !work.join("src/m0/f0.rs").exists(),
        "the deleted file is gone"
    );

    let g = dir.path().join("git");
    assert_eq!(repo.export_git(&g, None).await.expect("export"), 32);
    git(&g, &["fsck", "--strict"]);
    let log = git(&g, &["log", "--format=%s|%b", "main"]);
    assert!(log.contains("task-readme: write README.md"), "{log}");
    assert!(log.contains("Specc-Task: task-7"), "{log}");
    assert_eq!(
        git_tree(&g),
        store_files,
        "the exported head tree is the store's, byte for byte"
    );

    // Incremental: only the new commits are appended.
    for i in 0..5 {
        commit(&repo, &format!("docs/n{i}.md"), Some("note\n"), "task-docs").await;
    }
    assert_eq!(repo.export_git(&g, None).await.expect("export"), 5);
    assert_eq!(git(&g, &["rev-list", "--count", "main"]).trim(), "37");
    git(&g, &["fsck", "--strict"]);
    let (head, _) = repo.read_head("x").await.expect("head");
    assert_eq!(git_tree(&g), repo.files(head).await.expect("files"));
    assert_eq!(
        repo.export_git(&g, None).await.expect("export"),
        0,
        "nothing new, nothing added"
    );
}

/// A checkout's git view (design: vcs.checkout-view), named by relative paths as a spec
/// given by a relative path names its state: `main` is the store's history up to the base,
/// the index the base's tree, so `git status` shows only what the checkout changed; a later
/// base brings the view forward, an earlier one points it back, and a second view borrows
/// the first one's objects instead of importing the history again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkout_git_view_answers_status_and_log_and_follows_its_base() {
    // Under the test's working directory, so that relative paths reach it.
    let dir = tempfile::tempdir_in(".").expect("dir");
    let rel = dir
        .path()
        .strip_prefix(std::env::current_dir().expect("cwd"))
        .expect("relative")
        .to_owned();
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    let first = commit(&repo, "a.txt", Some("one\n"), "task-a").await;
    let second = commit(&repo, "b.txt", Some("two\n"), "task-b").await;
    let (work, view) = (rel.join("slot-1"), rel.join("slot-1.git"));
    repo.checkout(first, &work, &[]).await.expect("checkout");
    repo.git_view(&view, &work, first).await.expect("view");
    std::fs::write(work.join("new.txt"), "new\n").expect("write");
    assert_eq!(git(&work, &["status", "--short"]), "?? new.txt\n");
    assert_eq!(git(&work, &["log", "--format=%s"]), "task-a: write a.txt\n");
    // Forward: only the new commit is imported.
    std::fs::remove_file(work.join("new.txt")).expect("rm");
    repo.checkout(second, &work, &[".git"])
        .await
        .expect("checkout");
    repo.git_view(&view, &work, second).await.expect("forward");
    assert_eq!(git(&work, &["status", "--short"]), "");
    assert_eq!(
        git(&work, &["log", "--format=%s"]),
        "task-b: write b.txt\ntask-a: write a.txt\n"
    );
    // Back to an earlier base.
    repo.checkout(first, &work, &[".git"])
        .await
        .expect("checkout");
    let shared = repo.git_view(&view, &work, first).await.expect("back");
    assert_eq!(git(&work, &["status", "--short"]), "");
    assert_eq!(git(&work, &["log", "--format=%s"]), "task-a: write a.txt\n");
    // A second view: the same history, its objects the shared repository's alone.
    let (work2, view2) = (rel.join("slot-2"), rel.join("slot-2.git"));
    repo.checkout(second, &work2, &[]).await.expect("checkout");
    let shared2 = repo.git_view(&view2, &work2, second).await.expect("view");
    assert_eq!(shared, shared2);
    assert_eq!(
        git(&work2, &["log", "--format=%s"]),
        "task-b: write b.txt\ntask-a: write a.txt\n"
    );
    assert_eq!(git(&work2, &["status", "--short"]), "");
    let own = |v: &std::path::Path| {
        std::fs::read_dir(v.join("objects"))
            .expect("objects")
            .flatten()
            .filter(|e| !["info", "pack"].contains(&e.file_name().to_str().unwrap_or("")))
            .count()
    };
    assert_eq!(own(&view), 0, "the view holds no objects of its own");
    assert_eq!(own(&view2), 0, "nor does the second");
    assert!(own(&shared) > 0, "the shared repository holds them");
}

/// The shared repository an earlier build left is read back and brought forward with only
/// the new commits; one made for another store's history is made anew beside it and
/// swapped in (design: vcs.checkout-view).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_left_by_an_earlier_build_are_reused_and_another_history_is_remade() {
    let dir = tempfile::tempdir().expect("dir");
    let (work, slots) = (dir.path().join("work"), dir.path().join("slots"));
    let store = dir.path().join("a.log");
    let repo = Repo::open(&store, Options::default()).expect("open");
    let first = commit(&repo, "a.txt", Some("one\n"), "task-a").await;
    repo.checkout(first, &work.join("1"), &[])
        .await
        .expect("checkout");
    let shared = repo
        .git_view(&slots.join("slot-1.git"), &work.join("1"), first)
        .await
        .expect("view");
    drop(repo);
    let main = |d: &Path| git(d, &["rev-list", "refs/heads/main"]);
    let before = main(&shared);

    // A later build on the same store: the shared repository is read back, and only the
    // new commit is imported (the old one keeps its git commit).
    let repo = Repo::open(&store, Options::default()).expect("reopen");
    let second = commit(&repo, "b.txt", Some("two\n"), "task-b").await;
    repo.checkout(second, &work.join("2"), &[])
        .await
        .expect("checkout");
    repo.git_view(&slots.join("slot-2.git"), &work.join("2"), second)
        .await
        .expect("view");
    let after = main(&shared);
    assert!(after.ends_with(&before), "{before} then {after}");
    assert_eq!(after.lines().count(), 2);
    drop(repo);

    // Another store's history in the same place: made anew, nothing left beside it.
    let other = Repo::open(&dir.path().join("b.log"), Options::default()).expect("open");
    let own = commit(&other, "c.txt", Some("three\n"), "task-c").await;
    other
        .checkout(own, &work.join("3"), &[])
        .await
        .expect("checkout");
    other
        .git_view(&slots.join("slot-3.git"), &work.join("3"), own)
        .await
        .expect("remade");
    assert_eq!(
        git(&work.join("3"), &["log", "--format=%s"]),
        "task-c: write c.txt\n"
    );
    assert_eq!(git(&work.join("3"), &["status", "--short"]), "");
    assert_eq!(main(&shared).lines().count(), 1);
    let left: Vec<_> = std::fs::read_dir(&slots)
        .expect("slots")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("specc-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
