//! File modes and checkouts: the executable bit goes through submit, `files`, a restart,
//! checkout (on disk) and the git export; a mode-only change is a commit, and merges like
//! content (the writer's change of mode wins, else the head's mode stays); a checkout removes
//! stale files and emptied directories but not the kept entries, and never follows a symlink.

use std::collections::BTreeSet;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, FileEntry, Options, Outcome, Repo, Resolver, Submission};

mod support;
use support::git;

/// A change of `path` against `base`, expecting what `base` has there.
async fn change(
    repo: &Repo,
    base: ObjectId,
    path: &str,
    new: Option<&str>,
    executable: bool,
) -> Change {
    let files = repo.files(base).await.expect("base");
    let expected = files
        .iter()
        .find(|f| f.path == path)
        .map(|f| ObjectId::of(specc_vcs::object::Kind::Blob, &f.bytes));
    Change {
        path: path.to_owned(),
        expected,
        new: new.map(|t| t.as_bytes().to_vec()),
        executable,
    }
}

async fn submit(repo: &Repo, base: ObjectId, changes: Vec<Change>) -> Outcome {
    repo.submit(Submission {
        base,
        changes,
        message: "edit".to_owned(),
        task: "task".to_owned(),
        idempotency_key: String::new(),
    })
    .await
}

fn committed(o: &Outcome) -> (ObjectId, Vec<String>) {
    match o {
        Outcome::Committed { id, merged, .. } => (*id, merged.clone()),
        other => panic!("not committed: {other:?}"),
    }
}

async fn head(repo: &Repo) -> ObjectId {
    repo.read_head("-").await.expect("head").0
}

/// The file at `path` of `commit`.
async fn file(repo: &Repo, commit: ObjectId, path: &str) -> FileEntry {
    let files = repo.files(commit).await.expect("files");
    files
        .into_iter()
        .find(|f| f.path == path)
        .expect("the file")
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p)
        .expect("exists")
        .permissions()
        .mode()
        & 0o777
}

/// Every file and directory under `dir`, relative, without following links.
fn tree(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, rel: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(root.join(rel)).expect("read_dir") {
            let e = e.expect("entry");
            let p: PathBuf = rel.join(e.file_name());
            let kind = e.file_type().expect("type");
            if kind.is_dir() {
                out.insert(format!("{}/", p.display()));
                walk(root, &p, out);
            } else {
                out.insert(p.display().to_string());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, Path::new(""), &mut out);
    out
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executable_bit_round_trips_through_files_checkout_and_export() {
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("repo.log");
    let repo = Repo::open(&log, Options::default()).expect("open");
    let root = head(&repo).await;
    let changes = vec![
        change(&repo, root, "run.sh", Some("#!/bin/sh\necho hi\n"), true).await,
        change(&repo, root, "bin/tool", Some("#!/bin/sh\n"), true).await,
        change(&repo, root, "README.md", Some("# modes\n"), false).await,
    ];
    let (c, _) = committed(&submit(&repo, root, changes).await);
    let modes = |files: Vec<FileEntry>| -> Vec<(String, bool)> {
        files.into_iter().map(|f| (f.path, f.executable)).collect()
    };
    let expected = vec![
        ("README.md".to_owned(), false),
        ("bin/tool".to_owned(), true),
        ("run.sh".to_owned(), true),
    ];
    assert_eq!(modes(repo.files(c).await.expect("files")), expected);
    let (_, at_head) = repo.read_head("run.sh").await.expect("head");
    assert!(
        at_head.expect("run.sh").executable,
        "read_head has the mode"
    );

    // Over existing files whose modes are wrong, the checkout sets the commit's.
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).expect("mkdir");
    for (name, m) in [("run.sh", 0o600), ("README.md", 0o700)] {
        std::fs::write(work.join(name), "old").expect("write");
        std::fs::set_permissions(work.join(name), std::fs::Permissions::from_mode(m))
            .expect("chmod");
    }
    assert_eq!(repo.checkout(c, &work, &[]).await.expect("checkout"), 3);
    assert_eq!(mode(&work.join("run.sh")), 0o755);
    assert_eq!(mode(&work.join("bin/tool")), 0o755);
    assert_eq!(mode(&work.join("README.md")), 0o644);
    assert_eq!(
        std::fs::read(work.join("run.sh")).expect("read"),
        b"#!/bin/sh\necho hi\n"
    );

    let g = dir.path().join("git");
    assert_eq!(repo.export_git(&g, None).await.expect("export"), 1);
    git(&g, &["fsck", "--strict"]);
    let ls = git(&g, &["ls-tree", "-r", "main"]);
    let git_modes: Vec<(&str, &str)> = ls
        .lines()
        .map(|l| {
            let (meta, path) = l.split_once('\t').expect("ls-tree line");
            (path, meta.split_whitespace().next().expect("mode"))
        })
        .collect();
    assert_eq!(
        git_modes,
        [
            ("README.md", "100644"),
            ("bin/tool", "100755"),
            ("run.sh", "100755")
        ]
    );

    // The mode is in the store: it survives a restart.
    drop(repo);
    let repo = Repo::open(&log, Options::default()).expect("reopen");
    assert_eq!(modes(repo.files(c).await.expect("files")), expected);
    let (_, at_head) = repo.read_head("bin/tool").await.expect("head");
    assert!(at_head.expect("bin/tool").executable);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mode_only_change_commits_exports_and_merges() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    let text = "a\nb\nc\nd\ne\n";
    let root = head(&repo).await;
    let (b, _) = committed(
        &submit(
            &repo,
            root,
            vec![change(&repo, root, "s.sh", Some(text), false).await],
        )
        .await,
    );

    // The same content with the bit set is a commit of its own, and git sees the mode change.
    let (m, merged) = committed(
        &submit(
            &repo,
            b,
            vec![change(&repo, b, "s.sh", Some(text), true).await],
        )
        .await,
    );
    assert_ne!(m, b);
    assert!(merged.is_empty());
    assert!(file(&repo, m, "s.sh").await.executable);
    assert!(
        !file(&repo, b, "s.sh").await.executable,
        "the old commit is as it was"
    );
    let g = dir.path().join("git");
    assert_eq!(repo.export_git(&g, None).await.expect("export"), 2);
    let raw = git(&g, &["diff-tree", "-r", "main~1", "main"]);
    assert!(raw.starts_with(":100644 100755 "), "{raw}");
    assert!(raw.trim_end().ends_with("M\ts.sh"), "{raw}");
    // And back: the bit cleared is exported as a change too.
    let (n, _) = committed(
        &submit(
            &repo,
            m,
            vec![change(&repo, m, "s.sh", Some(text), false).await],
        )
        .await,
    );
    assert_eq!(repo.export_git(&g, None).await.expect("export"), 1);
    let raw = git(&g, &["diff-tree", "-r", "main~1", "main"]);
    assert!(raw.starts_with(":100755 100644 "), "{raw}");
    git(&g, &["fsck", "--strict"]);

    // A stale writer that kept its base's mode keeps the head's: its edit rebases onto the
    // head's chmod (n is 644; the head becomes 755 by a mode-only change).
    let edit = change(&repo, n, "s.sh", Some("A\nb\nc\nd\ne\n"), false).await;
    let (h1, _) = committed(
        &submit(
            &repo,
            n,
            vec![change(&repo, n, "s.sh", Some(text), true).await],
        )
        .await,
    );
    let (h2, _) = committed(&submit(&repo, n, vec![edit]).await);
    let f = file(&repo, h2, "s.sh").await;
    assert_eq!(
        (f.bytes.as_slice(), f.executable),
        (&b"A\nb\nc\nd\ne\n"[..], true)
    );

    // A stale writer that changed only the mode: the head's content stays, the writer's mode
    // wins (h1 is 755; the writer clears the bit, the head edited the content meanwhile).
    let chmod = change(&repo, h1, "s.sh", Some(text), false).await;
    let (h3, merged) = committed(&submit(&repo, h1, vec![chmod]).await);
    assert_eq!(merged, ["s.sh"]);
    let f = file(&repo, h3, "s.sh").await;
    assert_eq!(
        (f.bytes.as_slice(), f.executable),
        (&b"A\nb\nc\nd\ne\n"[..], false)
    );

    // A 3-way merge: both edits land, and the writer's mode change wins.
    let other = change(&repo, h3, "s.sh", Some("A\nb\nc\nd\nE\n"), true).await;
    committed(
        &submit(
            &repo,
            h3,
            vec![change(&repo, h3, "s.sh", Some("A\nB\nc\nd\ne\n"), false).await],
        )
        .await,
    );
    let (h5, merged) = committed(&submit(&repo, h3, vec![other]).await);
    assert_eq!(merged, ["s.sh"]);
    let f = file(&repo, h5, "s.sh").await;
    assert_eq!(
        (f.bytes.as_slice(), f.executable),
        (&b"A\nB\nc\nd\nE\n"[..], true)
    );

    // A conflict carries the writer's mode change, and its resolution keeps it.
    let clash = change(&repo, h5, "s.sh", Some("Z\nB\nc\nd\nE\n"), false).await;
    committed(
        &submit(
            &repo,
            h5,
            vec![change(&repo, h5, "s.sh", Some("Q\nB\nc\nd\nE\n"), true).await],
        )
        .await,
    );
    match submit(&repo, h5, vec![clash]).await {
        Outcome::Conflict(c) => assert_eq!(c.executable_change, Some(false)),
        other => panic!("{other:?}"),
    }
    struct Take;
    impl Resolver for Take {
        fn resolve(&self, q: &specc_vcs::Queued) -> Option<Vec<u8>> {
            q.conflict.submitted.clone()
        }
    }
    let (_, outcome) = repo.resolve_next(&Take).await.expect("queued");
    let (h6, _) = committed(&outcome.expect("resolved"));
    let f = file(&repo, h6, "s.sh").await;
    assert_eq!(
        (f.bytes.as_slice(), f.executable),
        (&b"Z\nB\nc\nd\nE\n"[..], false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkout_removes_stale_files_and_emptied_directories_but_not_kept_entries() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    let root = head(&repo).await;
    let first = vec![
        change(&repo, root, "a/b/c.txt", Some("c\n"), false).await,
        change(&repo, root, "a/d.txt", Some("d\n"), false).await,
        change(&repo, root, "x.txt", Some("x\n"), false).await,
    ];
    let (c1, _) = committed(&submit(&repo, root, first).await);
    let second = vec![
        change(&repo, c1, "a/b/c.txt", None, false).await,
        change(&repo, c1, "x.txt", None, false).await,
        change(&repo, c1, "y/z.txt", Some("z\n"), false).await,
    ];
    let (c2, _) = committed(&submit(&repo, c1, second).await);

    let work = dir.path().join("work");
    let keep = [".git", "target"];
    assert_eq!(repo.checkout(c1, &work, &keep).await.expect("checkout"), 3);
    // What a build and an agent leave behind.
    for (path, text) in [
        ("stale.txt", "s"),
        ("d/e/f.txt", "f"),
        ("nested/target/o.txt", "o"),
        ("target/debug/out.bin", "bin"),
        (".git/HEAD", "ref: refs/heads/main\n"),
    ] {
        let p = work.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    std::fs::create_dir_all(work.join("emptydir/deeper")).expect("mkdir");
    std::fs::create_dir_all(work.join("target/empty")).expect("mkdir");

    assert_eq!(repo.checkout(c2, &work, &keep).await.expect("checkout"), 2);
    assert_eq!(
        tree(&work),
        set(&[
            ".git/",
            ".git/HEAD",
            "a/",
            "a/d.txt",
            "target/",
            "target/debug/",
            "target/debug/out.bin",
            "target/empty/",
            "y/",
            "y/z.txt",
        ]),
        "a/b, x.txt and everything untracked outside the kept entries are gone"
    );
    assert_eq!(std::fs::read(work.join("y/z.txt")).expect("read"), b"z\n");

    // A file that already holds the commit's bytes and mode is not rewritten (its inode and
    // modification time stay, so builds kept in the checkout stay warm).
    use std::os::unix::fs::MetadataExt;
    let before = std::fs::metadata(work.join("a/d.txt")).expect("meta");
    assert_eq!(repo.checkout(c2, &work, &keep).await.expect("checkout"), 2);
    let after = std::fs::metadata(work.join("a/d.txt")).expect("meta");
    assert_eq!(
        (before.ino(), before.mtime_nsec()),
        (after.ino(), after.mtime_nsec())
    );

    // Back to the first commit: y/ empties and goes, a/b comes back.
    assert_eq!(repo.checkout(c1, &work, &keep).await.expect("checkout"), 3);
    assert!(!work.join("y").exists());
    assert_eq!(std::fs::read(work.join("a/b/c.txt")).expect("read"), b"c\n");
    assert!(work.join("target/debug/out.bin").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_in_the_checkout_is_removed_not_followed() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    let root = head(&repo).await;
    let changes = vec![
        change(&repo, root, "evil.txt", Some("mine\n"), false).await,
        change(&repo, root, "src/lib.rs", Some("// lib\n"), false).await,
        change(&repo, root, "target/gen.rs", Some("// generated\n"), false).await,
    ];
    let (c, _) = committed(&submit(&repo, root, changes).await);

    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("sub")).expect("mkdir");
    std::fs::write(outside.join("secret.txt"), "secret\n").expect("write");
    std::fs::write(outside.join("sub/inner.txt"), "inner\n").expect("write");
    let before = tree(&outside);

    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("stale")).expect("mkdir");
    symlink(&outside, work.join("escape")).expect("link"); // a directory link, not in the commit
    symlink(outside.join("secret.txt"), work.join("evil.txt")).expect("link"); // at a file
    symlink(outside.join("sub"), work.join("src")).expect("link"); // at a directory
    symlink(&outside, work.join("stale/inside")).expect("link"); // inside a stale directory
    symlink("/nonexistent/specc", work.join("dangling")).expect("link");
    // A kept entry is left alone, links and all, but the commit's own file there is written
    // (in the real directory the link is replaced by).
    symlink(&outside, work.join("target")).expect("link");
    std::fs::create_dir_all(work.join(".git")).expect("mkdir");
    symlink(outside.join("secret.txt"), work.join(".git/config")).expect("link");

    assert_eq!(
        repo.checkout(c, &work, &[".git", "target"])
            .await
            .expect("checkout"),
        3
    );
    assert_eq!(tree(&outside), before, "nothing written or removed outside");
    assert_eq!(
        std::fs::read(outside.join("secret.txt")).expect("read"),
        b"secret\n"
    );
    assert_eq!(
        tree(&work),
        set(&[
            ".git/",
            ".git/config",
            "evil.txt",
            "src/",
            "src/lib.rs",
            "target/",
            "target/gen.rs",
        ])
    );
    for p in ["evil.txt", "src", "target"] {
        let m = std::fs::symlink_metadata(work.join(p)).expect("exists");
        assert!(!m.file_type().is_symlink(), "{p} is no longer a link");
    }
    assert!(
        std::fs::symlink_metadata(work.join(".git/config"))
            .expect("kept")
            .file_type()
            .is_symlink(),
        "a kept link stays"
    );
    assert_eq!(
        std::fs::read(work.join("evil.txt")).expect("read"),
        b"mine\n"
    );
    assert_eq!(mode(&work.join("evil.txt")), 0o644);
}
