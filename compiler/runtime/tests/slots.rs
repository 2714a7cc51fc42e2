//! Checkout slots: a slot moved to another commit holds exactly what a fresh checkout of
//! that commit holds — after the tools wrote in it (only those paths and the commits'
//! changes are touched), and after a command ran (a full checkout).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

mod common;

use specc_runtime::Slots;
use specc_vcs::object::ObjectId;
use specc_vcs::{Options, Repo};

/// Every file under `dir` (outside `.git` and `target`) with its content and mode.
fn tree(dir: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            let p = e.path();
            let rel = p
                .strip_prefix(dir)
                .expect("under")
                .to_string_lossy()
                .into_owned();
            if rel == ".git" || rel == "target" {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).expect("meta");
            if m.is_dir() {
                stack.push(p);
            } else {
                let exec = m.permissions().mode() & 0o111 != 0;
                out.insert(rel, (std::fs::read(&p).expect("read"), exec));
            }
        }
    }
    out
}

/// Empty directories under `dir` (a removed file's directory must go with it).
fn empty_dirs(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries: Vec<_> = std::fs::read_dir(&d).expect("dir").flatten().collect();
        if entries.is_empty() && d != dir {
            out.push(d.display().to_string());
        }
        for e in entries {
            if e.file_type().expect("type").is_dir() {
                stack.push(e.path());
            }
        }
    }
    out
}

#[tokio::test]
async fn a_slot_moved_between_commits_holds_exactly_a_fresh_checkout() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let (c1, c2) = common::two_commits(&repo).await;
    let fresh = |c: ObjectId, name: &str| {
        let dir = tmp.path().join(name);
        let repo = repo.clone();
        async move {
            repo.checkout(c, &dir, &[]).await.expect("checkout");
            tree(&dir)
        }
    };
    let (want1, want2) = (fresh(c1, "fresh1").await, fresh(c2, "fresh2").await);
    assert_ne!(want1, want2);

    let slots = Slots::new(tmp.path().join("work"));
    let dir = {
        let lease = slots.lease(&repo, c1).await.expect("lease");
        assert_eq!(tree(&lease.dir), want1, "a new slot: a full checkout");
        // The tools write: a new file in a new directory, and a changed one; and, whole,
        // one that c2 brings as it is (left as it is) and one it brings otherwise.
        let whole = [("e/f/c.txt", "c\n"), ("d/b.txt", "b2\n")];
        for (path, text) in [("n/new.txt", "new\n"), ("a.txt", "mine\n")]
            .into_iter()
            .chain(whole)
        {
            lease.tracked.wrote(path);
            let full = lease.dir.join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(full, text).expect("write");
        }
        for (path, text) in whole {
            lease.tracked.wrote_whole(path, text.as_bytes(), false);
        }
        lease.dir.clone()
    };
    {
        let lease = slots.lease(&repo, c2).await.expect("lease");
        assert_eq!(lease.dir, dir, "the freed slot is reused");
        assert_eq!(
            tree(&lease.dir),
            want2,
            "the tools' writes undone, c2's changes made"
        );
        assert!(
            empty_dirs(&lease.dir).is_empty(),
            "{:?}",
            empty_dirs(&lease.dir)
        );
    }
    {
        let lease = slots.lease(&repo, c1).await.expect("lease");
        assert_eq!(tree(&lease.dir), want1, "and back");
        // A command runs and leaves a file the tools never saw.
        lease.tracked.ran_command();
        std::fs::write(lease.dir.join("stray.o"), "x").expect("write");
    }
    let lease = slots.lease(&repo, c2).await.expect("lease");
    assert_eq!(tree(&lease.dir), want2, "after a command: a full checkout");
    // A second lease while the first is held gets another slot.
    let other = slots.lease(&repo, c1).await.expect("lease");
    assert_ne!(other.dir, lease.dir);
    assert_eq!(tree(&other.dir), want1);
}

/// `apply` over whatever may be in a file's way: a link (never written through), a
/// directory, a FIFO (which must not hang the write), a file of the wrong mode, and a
/// missing directory; every file ends a regular file with its content and mode.
#[test]
fn apply_replaces_what_is_in_the_way_and_sets_modes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (dir, outside) = (tmp.path().join("slot"), tmp.path().join("outside.txt"));
    std::fs::create_dir_all(dir.join("d/inner")).expect("mkdir");
    std::fs::write(&outside, "keep\n").expect("write");
    std::os::unix::fs::symlink(&outside, dir.join("link.txt")).expect("link");
    std::fs::write(dir.join("d/inner/x"), "x").expect("write");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe"))
        .status()
        .expect("mkfifo");
    assert!(made.success());
    std::fs::write(dir.join("exe.sh"), "old\n").expect("write");
    std::fs::set_permissions(dir.join("exe.sh"), std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    let file = |text: &str, exec: bool| Some((text.as_bytes().to_vec(), exec));
    let changes = vec![
        ("link.txt".to_owned(), file("l\n", false)),
        ("d".to_owned(), file("d\n", false)),
        ("pipe".to_owned(), file("p\n", true)),
        ("exe.sh".to_owned(), file("#!/bin/sh\n", true)),
        ("new/deep/n.txt".to_owned(), file("n\n", false)),
    ];
    specc_runtime::apply_changes(&dir, &changes).expect("apply");
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), "keep\n");
    for (path, mode) in [("link.txt", 0o644), ("pipe", 0o755), ("exe.sh", 0o755)] {
        let m = std::fs::symlink_metadata(dir.join(path)).expect("meta");
        assert!(m.is_file(), "{path}");
        assert_eq!(m.permissions().mode() & 0o777, mode, "{path}");
    }
    let want: BTreeMap<String, (Vec<u8>, bool)> = changes
        .iter()
        .filter_map(|(p, f)| f.clone().map(|f| (p.clone(), f)))
        .collect();
    assert_eq!(tree(&dir), want);
}
