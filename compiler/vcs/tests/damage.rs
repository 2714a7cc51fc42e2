//! A log damaged on disk: cut at any offset (a write that stopped, a power loss before its
//! fsync) it opens with every commit before the cut; changed anywhere — a byte flipped in
//! committed data or in the last batch — it refuses to open, with an error that says where
//! and how to recover, rather than drop or trust acknowledged commits.

use std::path::Path;

use specc_vcs::{Change, Options, Outcome, Repo, Submission};

/// A store with `commits` commits, one file each, committed one batch at a time; returns the
/// log's bytes.
fn build(log: &Path, commits: u64) -> Vec<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let repo = Repo::open(log, Options::default()).expect("open");
        for k in 0..commits {
            let path = format!("f{}.txt", k % 4);
            let (head, file) = repo.read_head(&path).await.expect("head");
            let mut text = file
                .as_ref()
                .map(|f| String::from_utf8_lossy(&f.bytes).into_owned())
                .unwrap_or_default();
            text.push_str(&format!("line {k}\n"));
            let outcome = repo
                .submit(Submission {
                    base: head,
                    changes: vec![Change {
                        path,
                        expected: file.map(|f| f.blob),
                        new: Some(text.into_bytes()),
                        executable: false,
                    }],
                    message: format!("commit {k}"),
                    task: format!("t{k}"),
                    idempotency_key: format!("k{k}"),
                })
                .await;
            assert!(matches!(outcome, Outcome::Committed { .. }), "{outcome:?}");
        }
    });
    std::fs::read(log).expect("log")
}

/// Opens the log at `path`: the head's sequence number and whether every file of every
/// commit on the branch reads back.
fn open(path: &Path) -> std::io::Result<u64> {
    let repo = Repo::open(path, Options::default())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let stats = repo.stats().await;
        let mut at = stats.head;
        while let Some(id) = at {
            assert!(
                repo.files(id).await.is_ok(),
                "commit {} reads back",
                id.hex()
            );
            at = repo.commit(id).await.ok().and_then(|c| c.parent);
        }
        Ok(stats.seq)
    })
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn a_log_cut_anywhere_opens_with_the_commits_before_the_cut() {
    let dir = tempfile::tempdir().expect("dir");
    let bytes = build(&dir.path().join("log"), 24);
    let full = open(&dir.path().join("log")).expect("whole log");
    assert_eq!(full, 24, "root commit 0, then 24");
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut cuts: Vec<usize> = (0..60)
        .map(|_| 1 + (xorshift(&mut seed) as usize) % (bytes.len() - 1))
        .collect();
    cuts.extend([1, bytes.len() - 1]);
    cuts.sort_unstable();
    let mut last_seq = 0;
    for cut in cuts {
        let path = dir.path().join(format!("cut-{cut}"));
        std::fs::write(&path, &bytes[..cut]).expect("cut");
        let seq = open(&path).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert!(seq >= last_seq && seq < full, "cut at {cut}: seq {seq}");
        last_seq = seq;
        // Recovery cut the torn tail off: it opens again the same.
        assert_eq!(open(&path).expect("reopen"), seq);
    }
}

#[test]
fn a_changed_byte_anywhere_refuses_to_open_with_a_clear_error() {
    let dir = tempfile::tempdir().expect("dir");
    let bytes = build(&dir.path().join("log"), 24);
    let mut seed = 0xD1B5_4A32_D192_ED03u64;
    // The last batch byte by byte (its head record included), and a sample of the rest.
    let tail = bytes.len().saturating_sub(200);
    let mut at: Vec<usize> = (tail..bytes.len()).collect();
    at.extend((0..150).map(|_| (xorshift(&mut seed) as usize) % tail));
    for pos in at {
        let mut damaged = bytes.clone();
        damaged[pos] ^= 0x5A;
        let path = dir.path().join("flipped");
        std::fs::write(&path, &damaged).expect("write");
        match open(&path) {
            Ok(seq) => panic!(
                "a byte changed at {pos} of {} opened at seq {seq}",
                bytes.len()
            ),
            Err(e) => {
                let e = e.to_string();
                assert!(
                    e.contains("the record at byte") && e.contains("truncate -s"),
                    "at {pos}: {e}"
                );
            }
        }
        // Refusing changed nothing on disk.
        assert_eq!(std::fs::read(&path).expect("read"), damaged, "at {pos}");
    }
}

#[test]
fn a_power_loss_that_left_a_hole_in_the_last_batch_opens() {
    // An unsynced batch whose size reached the disk but one of whose pages did not: the file
    // keeps its length, with a 512-byte block of zeros inside the last records.
    let dir = tempfile::tempdir().expect("dir");
    let bytes = build(&dir.path().join("log"), 24);
    let whole = open(&dir.path().join("log")).expect("whole");
    let mut holed = bytes.clone();
    let hole = (bytes.len() - 300) / 512 * 512;
    for b in &mut holed[hole..(hole + 512).min(bytes.len())] {
        *b = 0;
    }
    let path = dir.path().join("holed");
    std::fs::write(&path, &holed).expect("write");
    let seq = open(&path).expect("a hole in the unsynced tail is a torn write");
    assert!(
        seq < whole,
        "the batch with the hole is cut: {seq} < {whole}"
    );
}
