//! The head's file contents live in a bounded cache (design: vcs.memory): with a cache far
//! smaller than the head, reads, 3-way merges, the megafile guard and a reopen still see every
//! file's bytes, read back from the log.

use specc_vcs::object::ObjectId;
use specc_vcs::{Options, Outcome, Refusal, Repo, Submission};

const FILES: usize = 200;

fn text(i: usize, edit: &str) -> String {
    // About 1 KiB per file: 200 files are 50 times the 4 KiB cache.
    let mut s = format!("{edit}\n");
    for line in 0..60 {
        s.push_str(&format!("file {i} line {line:02} ..........\n"));
    }
    s
}

#[path = "support/edit.rs"]
mod edit;

/// A one-file edit with no idempotency key.
fn submit(base: ObjectId, path: &str, expected: Option<ObjectId>, new: &str) -> Submission {
    edit::edit(base, path, expected, new, "")
}

fn options() -> Options {
    Options {
        head_cache_bytes: 4096,
        line_budget: 100,
        ..Options::default()
    }
}

async fn head(repo: &Repo) -> ObjectId {
    repo.read_head("-").await.expect("head").0
}

#[tokio::test]
async fn a_small_cache_still_sees_every_file() {
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("log");
    let repo = Repo::open(&log, options()).expect("open");
    for i in 0..FILES {
        let base = head(&repo).await;
        let o = repo
            .submit(submit(base, &format!("f/{i}.txt"), None, &text(i, "v1")))
            .await;
        assert!(matches!(o, Outcome::Committed { .. }), "{o:?}");
    }
    let stale = head(&repo).await;
    // Every file read back whole, long after the cache let it go.
    for i in 0..FILES {
        let (_, f) = repo.read_head(&format!("f/{i}.txt")).await.expect("read");
        let f = f.expect("file");
        assert_eq!(f.bytes.as_slice(), text(i, "v1").as_bytes(), "file {i}");
    }
    // A merge needs the head's bytes of a file edited since the writer's base: edit the last
    // line at the head, then the first line from the stale base; both edits survive.
    for i in (0..FILES).step_by(20) {
        let path = format!("f/{i}.txt");
        let (now, f) = repo.read_head(&path).await.expect("read");
        let blob = f.expect("file").blob;
        let tail = text(i, "v1").replace("line 59", "LINE 59");
        let o = repo.submit(submit(now, &path, Some(blob), &tail)).await;
        assert!(matches!(o, Outcome::Committed { .. }), "{o:?}");
        let o = repo
            .submit(submit(stale, &path, Some(blob), &text(i, "v2")))
            .await;
        assert!(
            matches!(&o, Outcome::Committed { merged, .. } if merged == &vec![path.clone()]),
            "{o:?}"
        );
        let (_, f) = repo.read_head(&path).await.expect("read");
        let want = text(i, "v2").replace("line 59", "LINE 59");
        assert_eq!(f.expect("file").bytes.as_slice(), want.as_bytes());
    }
    // The guard counts lines without the bytes in memory: a file grown past the budget is
    // refused.
    let (now, f) = repo.read_head("f/1.txt").await.expect("read");
    let big = text(1, "v1").repeat(2);
    let o = repo
        .submit(submit(now, "f/1.txt", f.map(|f| f.blob), &big))
        .await;
    assert!(
        matches!(o, Outcome::Refused(Refusal::Megafile { .. })),
        "{o:?}"
    );
    drop(repo);

    // After a reopen, the same.
    let repo = Repo::open(&log, options()).expect("reopen");
    for i in 0..FILES {
        let (_, f) = repo.read_head(&format!("f/{i}.txt")).await.expect("read");
        let f = f.expect("file");
        let want = if i % 20 == 0 {
            text(i, "v2").replace("line 59", "LINE 59")
        } else {
            text(i, "v1")
        };
        assert_eq!(f.bytes.as_slice(), want.as_bytes(), "file {i} after reopen");
    }
}
