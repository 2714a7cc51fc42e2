//! The commit protocol: pushrebase, 3-way merge, conflicts with both sides, idempotency, the
//! megafile guard, reading old commits, and durability across a reopen.

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Options, Outcome, Refusal, Repo, Submission};

#[path = "support/edit.rs"]
mod edit;
use edit::edit as sub;

fn committed(o: &Outcome) -> (ObjectId, u64) {
    match o {
        Outcome::Committed { id, seq, .. } => (*id, *seq),
        other => panic!("not committed: {other:?}"),
    }
}

async fn head_of(repo: &Repo, path: &str) -> (ObjectId, Option<ObjectId>) {
    let (head, file) = repo.read_head(path).await.expect("read");
    (head, file.map(|f| f.blob))
}

#[tokio::test]
async fn pushrebase_merges_and_conflicts() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    let (root, _) = head_of(&repo, "src/a.txt").await;
    let base_text = "one\ntwo\nthree\nfour\nfive\n";
    let c1 = repo
        .submit(sub(root, "src/a.txt", None, base_text, "k1"))
        .await;
    let (base, _) = committed(&c1);
    let (_, blob) = head_of(&repo, "src/a.txt").await;

    // Two writers from the same base: another file rebases; the same file, other lines, merges.
    let other = repo.submit(sub(base, "src/b.txt", None, "b\n", "k2")).await;
    committed(&other);
    let mine = repo
        .submit(sub(
            base,
            "src/a.txt",
            blob,
            "ONE\ntwo\nthree\nfour\nfive\n",
            "k3",
        ))
        .await;
    committed(&mine);
    let theirs = repo
        .submit(sub(
            base,
            "src/a.txt",
            blob,
            "one\ntwo\nthree\nfour\nFIVE\n",
            "k4",
        ))
        .await;
    match &theirs {
        Outcome::Committed { merged, .. } => assert_eq!(merged, &["src/a.txt"]),
        other => panic!("{other:?}"),
    }
    let (head, _) = head_of(&repo, "src/a.txt").await;
    assert_eq!(
        repo.read(head, "src/a.txt").await.as_deref().ok(),
        Some(&b"ONE\ntwo\nthree\nfour\nFIVE\n"[..])
    );
    // The old commit still reads as it was, without a checkout.
    assert_eq!(
        repo.read(base, "src/a.txt").await.as_deref().ok(),
        Some(base_text.as_bytes())
    );
    assert_eq!(
        repo.read(base, "src/b.txt").await,
        Err(specc_vcs::ReadError::NoFile {
            commit: base,
            path: "src/b.txt".into()
        })
    );

    // The same line from a stale base: a conflict with both sides.
    let clash = repo
        .submit(sub(
            base,
            "src/a.txt",
            blob,
            "uno\ntwo\nthree\nfour\nfive\n",
            "k5",
        ))
        .await;
    match clash {
        Outcome::Conflict(c) => {
            assert_eq!(c.path, "src/a.txt");
            assert_eq!(c.base.as_deref(), Some(base_text.as_bytes()));
            assert_eq!(
                c.head.as_deref(),
                Some(&b"ONE\ntwo\nthree\nfour\nFIVE\n"[..])
            );
            assert_eq!(
                c.submitted.as_deref(),
                Some(&b"uno\ntwo\nthree\nfour\nfive\n"[..])
            );
        }
        other => panic!("{other:?}"),
    }
    let stats = repo.stats().await;
    assert_eq!(stats.conflicts, [("src/a.txt".to_owned(), 1)]);
    assert_eq!(stats.seq, 4);
}

#[tokio::test]
async fn an_idempotency_key_commits_once_even_after_a_restart() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("repo.log");
    let first;
    {
        let repo = Repo::open(&path, Options::default()).expect("open");
        let (root, _) = head_of(&repo, "x").await;
        first = repo.submit(sub(root, "x", None, "1\n", "same-key")).await;
        let again = repo.submit(sub(root, "x", None, "1\n", "same-key")).await;
        assert_eq!(first, again);
        assert_eq!(repo.stats().await.seq, 1);
    }
    let repo = Repo::open(&path, Options::default()).expect("reopen");
    let (head, _) = head_of(&repo, "x").await;
    let again = repo.submit(sub(head, "x", None, "1\n", "same-key")).await;
    assert_eq!(
        committed(&again),
        committed(&first),
        "the first result, after a restart too"
    );
    assert_eq!(repo.stats().await.seq, 1, "nothing committed twice");
    assert_eq!(
        repo.read(head, "x").await.as_deref().ok(),
        Some(&b"1\n"[..])
    );
}

#[tokio::test]
async fn the_megafile_guard_refuses_growth_until_a_split_lands() {
    let dir = tempfile::tempdir().expect("dir");
    let options = Options {
        line_budget: 10,
        ..Options::default()
    };
    let repo = Repo::open(&dir.path().join("repo.log"), options).expect("open");
    let (root, _) = head_of(&repo, "big.rs").await;
    let lines = |n: usize| (0..n).map(|i| format!("line {i}\n")).collect::<String>();
    let (c, _) = committed(&repo.submit(sub(root, "big.rs", None, &lines(9), "")).await);
    let (_, blob) = head_of(&repo, "big.rs").await;
    match repo.submit(sub(c, "big.rs", blob, &lines(12), "")).await {
        Outcome::Refused(Refusal::Megafile {
            lines: 12,
            budget: 10,
            already_flagged: false,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(repo.stats().await.flagged, ["big.rs"]);
    assert_eq!(repo.flagged_now(), ["big.rs"], "published with the batch");
    // Still flagged: even growth within the budget is refused until a split lands.
    match repo.submit(sub(c, "big.rs", blob, &lines(10), "")).await {
        Outcome::Refused(Refusal::Megafile {
            already_flagged: true,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // A split: the file shrinks, another takes the rest. The flag is lifted.
    let split = Submission {
        base: c,
        changes: vec![
            Change {
                path: "big.rs".into(),
                expected: blob,
                new: Some(lines(5).into_bytes()),
                executable: false,
            },
            Change {
                path: "big_part2.rs".into(),
                expected: None,
                new: Some(lines(4).into_bytes()),
                executable: false,
            },
        ],
        message: "split big.rs".into(),
        task: "t".into(),
        idempotency_key: String::new(),
    };
    let (s, _) = committed(&repo.submit(split).await);
    assert_eq!(
        repo.head_now(),
        Some(s),
        "a submitter sees its commit at once"
    );
    assert!(repo.flagged_now().is_empty());
    assert!(repo.stats().await.flagged.is_empty());
    let (_, blob) = head_of(&repo, "big.rs").await;
    committed(&repo.submit(sub(s, "big.rs", blob, &lines(7), "")).await);
    // Writers can flag a file themselves.
    repo.flag("big_part2.rs");
    assert_eq!(repo.stats().await.flagged, ["big_part2.rs"]);
    assert_eq!(repo.flagged_now(), ["big_part2.rs"]);
    let head = repo.stats().await.head;
    drop(repo);
    let repo = Repo::open(&dir.path().join("repo.log"), options).expect("reopen");
    assert_eq!(repo.head_now(), head, "published on open");
    assert_eq!(repo.flagged_now(), ["big_part2.rs"]);
}

/// A scripted resolver: keeps both edits, theirs first, and records what it was shown.
struct Both(std::sync::Mutex<Vec<String>>);

impl specc_vcs::Resolver for Both {
    fn resolve(&self, q: &specc_vcs::Queued) -> Option<Vec<u8>> {
        if let Ok(mut seen) = self.0.lock() {
            seen.push(format!(
                "{}|{}",
                q.writer,
                q.head_intent.clone().unwrap_or_default()
            ));
        }
        let head = String::from_utf8_lossy(q.conflict.head.as_deref()?).into_owned();
        let mine = String::from_utf8_lossy(q.conflict.submitted.as_deref()?).into_owned();
        let extra: String = mine
            .lines()
            .filter(|l| !head.contains(*l))
            .map(|l| format!("{l}\n"))
            .collect();
        Some(format!("{head}{extra}").into_bytes())
    }
}

#[tokio::test]
async fn conflicts_queue_fairly_and_resolutions_go_through_the_protocol() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("repo.log"), Options::default()).expect("open");
    let (root, _) = head_of(&repo, "f").await;
    let (base, _) = committed(&repo.submit(sub(root, "f", None, "x\n", "")).await);
    let (_, blob) = head_of(&repo, "f").await;
    let mut winner = sub(base, "f", blob, "winner\n", "");
    winner.message = "the winning edit".into();
    committed(&repo.submit(winner).await);
    // Writer A conflicts three times, writer B once, all on the same line.
    for (writer, n) in [("A", 3), ("B", 1)] {
        for k in 0..n {
            let mut s = sub(base, "f", blob, &format!("{writer}{k}\n"), "");
            s.task = writer.to_owned();
            assert!(matches!(repo.submit(s).await, Outcome::Conflict(_)));
        }
    }
    assert_eq!(repo.queued(), 4);
    let resolver = Both(std::sync::Mutex::new(Vec::new()));
    let mut order = Vec::new();
    while let Some((q, outcome)) = repo.resolve_next(&resolver).await {
        order.push(q.writer.clone());
        assert!(
            matches!(outcome, Some(Outcome::Committed { .. })),
            "{outcome:?}"
        );
    }
    assert_eq!(
        order,
        ["A", "B", "A", "A"],
        "round-robin: B is not starved behind A"
    );
    let seen = resolver.0.lock().expect("lock").clone();
    assert_eq!(
        seen[0], "A|the winning edit",
        "the resolver sees the other side's intent"
    );
    let (head, _) = head_of(&repo, "f").await;
    let text = String::from_utf8(repo.read(head, "f").await.expect("f")).expect("utf8");
    assert_eq!(text, "winner\nA0\nB0\nA1\nA2\n");
}

#[tokio::test]
async fn the_base_decides_not_the_writers_word_and_bad_paths_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("repo.log");
    let repo = Repo::open(&path, Options::default()).expect("open");
    assert!(
        Repo::open(&path, Options::default()).is_err(),
        "one process per store"
    );
    let (root, _) = head_of(&repo, "p").await;
    let (b, _) = committed(&repo.submit(sub(root, "p", None, "x\n", "")).await);
    let (_, x) = head_of(&repo, "p").await;
    committed(&repo.submit(sub(b, "p", x, "y\n", "")).await);
    let (_, y) = head_of(&repo, "p").await;
    // A writer on base `b` that claims to have seen `y` would silently revert the head.
    match repo.submit(sub(b, "p", y, "z\n", "")).await {
        Outcome::Refused(Refusal::ExpectedMismatch { path }) => assert_eq!(path, "p"),
        other => panic!("{other:?}"),
    }
    for bad in [
        "",
        "/abs",
        "a//b",
        "a/../b",
        "./a",
        ".git/config",
        "a/\"q\"",
        "tab\there",
        "dir/",
    ] {
        match repo.submit(sub(b, bad, None, "x\n", "")).await {
            Outcome::Refused(Refusal::InvalidPath { .. }) => {}
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    // A file cannot become a directory, nor a directory a file.
    let (h, _) = head_of(&repo, "p").await;
    assert!(matches!(
        repo.submit(sub(h, "p/child", None, "x\n", "")).await,
        Outcome::Refused(Refusal::PathCollision { .. })
    ));
    let (h2, _) = committed(&repo.submit(sub(h, "d/f", None, "x\n", "")).await);
    assert!(matches!(
        repo.submit(sub(h2, "d", None, "x\n", "")).await,
        Outcome::Refused(Refusal::PathCollision { .. })
    ));
    // A new file over budget is refused but not flagged: it does not exist.
    let big: String = (0..700).map(|i| format!("{i}\n")).collect();
    assert!(matches!(
        repo.submit(sub(h2, "new.rs", None, &big, "")).await,
        Outcome::Refused(Refusal::Megafile { .. })
    ));
    assert!(repo.stats().await.flagged.is_empty());
}

#[tokio::test]
async fn old_bases_resolve_past_the_in_memory_history_and_after_a_restart() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("repo.log");
    let lines = |k: usize| format!("head {k}\nmiddle\ntail\n");
    let (old_base, old_blob);
    {
        let repo = Repo::open(&path, Options::default()).expect("open");
        let (root, _) = head_of(&repo, "p").await;
        let (b, _) = committed(&repo.submit(sub(root, "p", None, &lines(0), "")).await);
        old_base = b;
        old_blob = head_of(&repo, "p").await.1;
        // More changes of `p` than the in-memory history keeps.
        for k in 1..80 {
            let (h, blob) = head_of(&repo, "p").await;
            committed(&repo.submit(sub(h, "p", blob, &lines(k), "")).await);
        }
        // From the old base: the right expected blob is accepted (and merged), a wrong one not.
        let ok = repo
            .submit(sub(old_base, "p", old_blob, "head 0\nmiddle\nTAIL\n", ""))
            .await;
        assert!(
            matches!(ok, Outcome::Committed { ref merged, .. } if merged == &["p"]),
            "{ok:?}"
        );
        let (_, now) = head_of(&repo, "p").await;
        assert!(matches!(
            repo.submit(sub(old_base, "p", now, "x\n", "")).await,
            Outcome::Refused(Refusal::ExpectedMismatch { .. })
        ));
    }
    // After a restart the old base is older than what the process loaded: trees decide.
    let repo = Repo::open(&path, Options::default()).expect("reopen");
    let (h, blob) = head_of(&repo, "p").await;
    assert_eq!(
        repo.read(h, "p").await.as_deref().ok(),
        Some(&b"head 79\nmiddle\nTAIL\n"[..])
    );
    assert!(matches!(
        repo.submit(sub(old_base, "q", None, "new\n", "")).await,
        Outcome::Committed { .. }
    ));
    assert!(matches!(
        repo.submit(sub(old_base, "p", blob, "x\n", "")).await,
        Outcome::Refused(Refusal::ExpectedMismatch { .. })
    ));
}

#[tokio::test]
async fn flags_survive_a_restart() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("repo.log");
    let options = Options {
        line_budget: 10,
        ..Options::default()
    };
    let lines = |n: usize| (0..n).map(|i| format!("{i}\n")).collect::<String>();
    {
        let repo = Repo::open(&path, options).expect("open");
        let (root, _) = head_of(&repo, "a.rs").await;
        let (c, _) = committed(&repo.submit(sub(root, "a.rs", None, &lines(9), "")).await);
        let (_, blob) = head_of(&repo, "a.rs").await;
        assert!(matches!(
            repo.submit(sub(c, "a.rs", blob, &lines(11), "")).await,
            Outcome::Refused(Refusal::Megafile { .. })
        ));
        repo.flag("b.rs");
        assert_eq!(repo.stats().await.flagged, ["a.rs", "b.rs"]);
    }
    let repo = Repo::open(&path, options).expect("reopen");
    assert_eq!(
        repo.stats().await.flagged,
        ["a.rs", "b.rs"],
        "a 9-line file stays flagged after a restart"
    );
    let (h, blob) = head_of(&repo, "a.rs").await;
    assert!(matches!(
        repo.submit(sub(h, "a.rs", blob, &lines(10), "")).await,
        Outcome::Refused(Refusal::Megafile {
            already_flagged: true,
            ..
        })
    ));
}
