//! `Repo::changes` (what moving a checkout between two commits writes) agrees with the
//! difference of the two commits' whole file lists, over random histories that add, change
//! and delete files in wide directories, change only a file's mode, and turn files into
//! directories and back.

use std::collections::BTreeMap;

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Options, Outcome, Repo, Submission};

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

type Files = BTreeMap<String, (Vec<u8>, bool)>;

/// A path and what moving to the second commit leaves there.
type Moved = Vec<(String, Option<(Vec<u8>, bool)>)>;

async fn files(repo: &Repo, commit: ObjectId) -> Files {
    repo.files(commit)
        .await
        .expect("files")
        .into_iter()
        .map(|f| (f.path, (f.bytes, f.executable)))
        .collect()
}

#[tokio::test]
async fn changes_between_any_two_commits_are_the_difference_of_their_files() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("log"), Options::default()).expect("open");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let commits = history(&repo, &mut seed).await;
    for _ in 0..200 {
        let from = commits[(xorshift(&mut seed) % commits.len() as u64) as usize];
        let to = commits[(xorshift(&mut seed) % commits.len() as u64) as usize];
        let (a, b) = (files(&repo, from).await, files(&repo, to).await);
        let mut want: Moved = a
            .keys()
            .chain(b.keys())
            .filter(|p| a.get(*p) != b.get(*p))
            .map(|p| (p.clone(), b.get(p).cloned()))
            .collect();
        want.sort();
        want.dedup();
        let mut got = repo.changes(from, to).await.expect("changes");
        got.sort();
        assert_eq!(got, want, "from {} to {}", from.hex(), to.hex());
    }
}

/// `Repo::changes_now` (the recent commits' files, no round trip) moves a checkout of any
/// recent commit to any later one exactly as the tree diff does: applied to the first
/// commit's files it gives the second's, and it lists every path the diff lists. It knows
/// nothing of a commit it did not see land, nor of going backwards.
#[tokio::test]
async fn changes_now_between_recent_commits_move_a_checkout_as_the_diff_does() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("log"), Options::default()).expect("open");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let commits = history(&repo, &mut seed).await;
    for _ in 0..200 {
        let (mut i, mut j) = (
            (xorshift(&mut seed) % commits.len() as u64) as usize,
            (xorshift(&mut seed) % commits.len() as u64) as usize,
        );
        if i > j {
            std::mem::swap(&mut i, &mut j);
        }
        let (from, to) = (commits[i], commits[j]);
        let got = repo
            .changes_now(from, to)
            .expect("recent commits are known");
        let mut moved = files(&repo, from).await;
        for (path, file) in &got {
            match file {
                Some(f) => moved.insert(path.clone(), f.clone()),
                None => moved.remove(path),
            };
        }
        assert_eq!(moved, files(&repo, to).await, "{i} to {j}");
        let diff = repo.changes(from, to).await.expect("changes");
        let listed: std::collections::BTreeSet<&String> = got.iter().map(|(p, _)| p).collect();
        assert!(diff.iter().all(|(p, _)| listed.contains(p)), "{i} to {j}");
        if i < j {
            assert_eq!(repo.changes_now(to, from), None, "backwards, {j} to {i}");
        }
    }
    drop(repo);
    // Another process's handle saw none of them land: only its head is known.
    let repo = Repo::open(&dir.path().join("log"), Options::default()).expect("open");
    let last = *commits.last().expect("commits");
    assert_eq!(repo.changes_now(last, last), Some(Vec::new()));
    assert_eq!(repo.changes_now(commits[0], last), None);
}

/// The recent commits are bounded by the bytes of their files: the oldest are forgotten.
#[tokio::test]
async fn changes_now_forgets_the_oldest_commits_past_its_bytes() {
    let dir = tempfile::tempdir().expect("dir");
    let repo = Repo::open(&dir.path().join("log"), Options::default()).expect("open");
    let mut commits = vec![repo.read_head("-").await.expect("head").0];
    for k in 0..20u8 {
        let (head, _) = repo.read_head("-").await.expect("head");
        let s = Submission {
            base: head,
            changes: vec![Change {
                path: format!("big/{k}.bin"),
                expected: None,
                new: Some(vec![b'a' + k; 1 << 20]),
                executable: false,
            }],
            message: format!("big {k}"),
            task: "t".to_owned(),
            idempotency_key: String::new(),
        };
        match repo.submit(s).await {
            Outcome::Committed { id, .. } => commits.push(id),
            other => panic!("{k}: {other:?}"),
        }
    }
    let last = *commits.last().expect("commits");
    assert_eq!(
        repo.changes_now(commits[0], last),
        None,
        "20 MiB is past the bound"
    );
    let recent = repo
        .changes_now(commits[15], last)
        .expect("the last 5 MiB are kept");
    assert_eq!(recent.len(), 5);
}

/// 300 commits that add, change and delete files in wide directories, change only a file's
/// mode, and turn files into directories and back; the commits in order, the first the
/// repository's head before them.
async fn history(repo: &Repo, seed: &mut u64) -> Vec<ObjectId> {
    let mut commits = vec![repo.read_head("-").await.expect("head").0];
    let mut mode_only = 0;
    for k in 0..300u64 {
        let (head, _) = repo.read_head("-").await.expect("head");
        let now = files(repo, head).await;
        let r = xorshift(seed);
        // Wide directories (40 names each), a name that is a file or a directory in turn.
        let path = match r % 5 {
            0 => format!("d{}/x", r % 3),
            1 => format!("d{}", r % 3),
            _ => format!("w/{}/f{:02}.txt", r % 4, (r >> 8) % 40),
        };
        let mut changes = Vec::new();
        // A file in the way of a directory (or the reverse) is deleted first.
        let blocking: Vec<&String> = now
            .keys()
            .filter(|p| p.starts_with(&format!("{path}/")) || path.starts_with(&format!("{p}/")))
            .collect();
        if !blocking.is_empty() {
            for p in blocking {
                changes.push(Change {
                    path: p.clone(),
                    expected: repo
                        .read_head(p)
                        .await
                        .ok()
                        .and_then(|(_, f)| f.map(|f| f.blob)),
                    new: None,
                    executable: false,
                });
            }
        } else if let Ok((_, Some(f))) = repo.read_head(&path).await
            && r % 13 == 1
        {
            // Only the mode changes: the same blob, the other bit.
            mode_only += 1;
            changes.push(Change {
                path: path.clone(),
                expected: Some(f.blob),
                new: Some(f.bytes.to_vec()),
                executable: !f.executable,
            });
        } else {
            let expected = repo
                .read_head(&path)
                .await
                .ok()
                .and_then(|(_, f)| f.map(|f| f.blob));
            let delete = expected.is_some() && r.is_multiple_of(7);
            changes.push(Change {
                path: path.clone(),
                expected,
                new: (!delete).then(|| format!("{k}\n").into_bytes()),
                executable: r.is_multiple_of(11),
            });
        }
        let s = Submission {
            base: head,
            changes,
            message: format!("edit {k}"),
            task: "t".to_owned(),
            idempotency_key: String::new(),
        };
        match repo.submit(s).await {
            Outcome::Committed { id, .. } => commits.push(id),
            other => panic!("edit {k}: {other:?}"),
        }
    }
    assert!(mode_only > 0, "the history changes some file's mode alone");
    commits
}
