//! What the slot tests share: commits made through the real VCS, and the two commits both
//! move slots between.

use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, Outcome, Repo, Submission};

/// Commits `files` (path, text or `None` to remove, executable) on `base`.
pub(crate) async fn commit(
    repo: &Repo,
    base: ObjectId,
    files: &[(&str, Option<&str>, bool)],
) -> ObjectId {
    let mut changes = Vec::new();
    for (path, text, executable) in files {
        let expected = repo
            .file(base, path)
            .await
            .expect("base")
            .map(|(b, _)| ObjectId::of(Kind::Blob, &b));
        changes.push(Change {
            path: (*path).to_owned(),
            expected,
            new: text.map(|t| t.as_bytes().to_vec()),
            executable: *executable,
        });
    }
    let outcome = repo
        .submit(Submission {
            base,
            changes,
            message: "m".into(),
            task: "t".into(),
            idempotency_key: String::new(),
        })
        .await;
    match outcome {
        Outcome::Committed { id, .. } => id,
        other => panic!("{other:?}"),
    }
}

/// c1: `a.txt`, `d/b.txt` and an executable `run.sh`; c2 on it: `a.txt` changed, `d/b.txt`
/// removed, `e/f/c.txt` added and `run.sh` no longer executable.
pub(crate) async fn two_commits(repo: &Repo) -> (ObjectId, ObjectId) {
    let root = repo.stats().await.head.expect("head");
    let c1 = commit(
        repo,
        root,
        &[
            ("a.txt", Some("a1\n"), false),
            ("d/b.txt", Some("b1\n"), false),
            ("run.sh", Some("#!/bin/sh\n"), true),
        ],
    )
    .await;
    let c2 = commit(
        repo,
        c1,
        &[
            ("a.txt", Some("a2\n"), false),
            ("d/b.txt", None, false),
            ("e/f/c.txt", Some("c\n"), false),
            ("run.sh", Some("#!/bin/sh\n"), false),
        ],
    )
    .await;
    (c1, c2)
}
