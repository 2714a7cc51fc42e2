//! Slots moved lazily (design: runtime.lazy-checkouts): a lease writes none of what its
//! directory owes the base; a whole-file `write` elsewhere goes straight in; any tool that
//! needs the directory as the base has it (a `read`, a `write` of an owed path or under an
//! owed directory) brings it up to date first; and however many leases a slot owed across,
//! once brought up to date it holds exactly a fresh checkout of its base.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use specc_llm::ToolCall;
use specc_runtime::{Base, Scope, Slots, Toolbox};

mod common;
use specc_sandbox::{CommandLimits, ProcessRunner};
use specc_vcs::{Options, Repo};

type Files = BTreeMap<String, (String, bool)>;

/// Every file under `dir` with its text and whether it is executable.
fn tree(dir: &Path) -> Files {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).expect("under").to_string_lossy();
            let m = std::fs::symlink_metadata(&p).expect("meta");
            if m.is_dir() {
                stack.push(p);
            } else {
                let text = std::fs::read_to_string(&p).expect("read");
                out.insert(
                    rel.into_owned(),
                    (text, m.permissions().mode() & 0o111 != 0),
                );
            }
        }
    }
    out
}

fn files(list: &[(&str, &str, bool)]) -> Files {
    list.iter()
        .map(|(p, t, x)| ((*p).to_owned(), ((*t).to_owned(), *x)))
        .collect()
}

/// The tools of an attempt on `lease` (a macro: the lease's types are the crate's own).
macro_rules! toolbox {
    ($repo:expr, $lease:expr) => {
        Toolbox {
            root: $lease.dir.clone(),
            scope: Scope::new(&["**".to_owned()]),
            runner: Arc::new(ProcessRunner::default()),
            limits: CommandLimits {
                timeout: Duration::from_secs(10),
                output_cap: 1000,
            },
            logs: $lease.dir.join("../logs"),
            guide_lines: 100,
            base: Base::new($repo.clone(), $lease.base),
            tracked: $lease.tracked.clone(),
            pins: None,
            breaks: Default::default(),
            contradictions: Default::default(),
            git: Default::default(),
        }
    };
}

async fn call(t: &Toolbox, name: &str, args: serde_json::Value) -> String {
    let call = ToolCall {
        id: "1".into(),
        name: name.into(),
        arguments: args,
    };
    let out = t.call(&call, 1, Duration::from_secs(10)).await;
    assert!(!out.failed, "{name}: {}", out.text);
    out.text
}

#[tokio::test]
async fn a_lazily_moved_slot_writes_what_it_owes_only_when_a_tool_needs_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let (c1, c2) = common::two_commits(&repo).await;
    let c3 = common::commit(&repo, c2, &[("g.txt", Some("g\n"), false)]).await;
    let want1 = files(&[
        ("a.txt", "a1\n", false),
        ("d/b.txt", "b1\n", false),
        ("run.sh", "#!/bin/sh\n", true),
    ]);
    let want2 = files(&[
        ("a.txt", "a2\n", false),
        ("e/f/c.txt", "c\n", false),
        ("run.sh", "#!/bin/sh\n", false),
    ]);
    let mut want3 = want2.clone();
    want3.insert("g.txt".into(), ("g\n".into(), false));

    let slots = Slots::new(tmp.path().join("work"));
    {
        let lease = slots.lease(&repo, c1).await.expect("lease");
        assert_eq!(tree(&lease.dir), want1, "a new slot: a full checkout");
    }
    {
        let lease = slots.lease_lazily(&repo, c2).await.expect("lease");
        assert_eq!(tree(&lease.dir), want1, "a lazy lease writes nothing");
        assert_eq!(
            lease.tracked.owed("a.txt"),
            Some(Some((b"a2\n".to_vec(), false)))
        );
        assert_eq!(lease.tracked.owed("d/b.txt"), Some(None), "removed by c2");
        assert_eq!(lease.tracked.owed("g.txt"), None, "not owed: not in c2");
        let t = toolbox!(repo, lease);
        // A whole-file write where nothing is owed is kept in memory: the directory owes
        // it like c2's files.
        call(
            &t,
            "write",
            json!({"path": "n/new.txt", "content": "new\n"}),
        )
        .await;
        assert_eq!(
            tree(&lease.dir),
            want1,
            "still owing c2's files and the write"
        );
        assert_eq!(
            lease.tracked.owed("n/new.txt"),
            Some(Some((b"new\n".to_vec(), false)))
        );
        // The slot goes back owing them.
    }
    {
        // Two leases' worth owed: c2's changes, the last tools' file, and c3's.
        let lease = slots.lease_lazily(&repo, c3).await.expect("lease");
        assert_eq!(
            lease.tracked.owed("n/new.txt"),
            Some(None),
            "the tools' write"
        );
        assert_eq!(
            lease.tracked.owed("g.txt"),
            Some(Some((b"g\n".to_vec(), false)))
        );
        let t = toolbox!(repo, lease);
        // Writing a path that is owed (c2 added `e/f/c.txt`) brings the directory up to
        // date first.
        call(
            &t,
            "write",
            json!({"path": "e/f/c.txt", "content": "mine\n"}),
        )
        .await;
        assert_eq!(tree(&lease.dir), want3, "c3 exactly");
        assert_eq!(
            lease.tracked.owed("g.txt"),
            None,
            "nothing of c3 owed any more"
        );
        assert_eq!(
            lease.tracked.owed("e/f/c.txt"),
            Some(Some((b"mine\n".to_vec(), false))),
            "the tool's write, kept in memory"
        );
    }
    {
        // A read needs the directory: the tool's write is undone first (owed again).
        let lease = slots.lease_lazily(&repo, c3).await.expect("lease");
        assert_eq!(
            lease.tracked.owed("e/f/c.txt"),
            Some(Some((b"c\n".to_vec(), false)))
        );
        let t = toolbox!(repo, lease);
        let text = call(&t, "read", json!({"path": "e/f/c.txt"})).await;
        assert!(text.contains('c') && !text.contains("mine"), "{text}");
        assert_eq!(tree(&lease.dir), want3);
    }
}

#[tokio::test]
async fn a_write_over_an_owed_path_or_under_one_brings_the_directory_up_to_date_first() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let root = repo.stats().await.head.expect("head");
    // c1 has a file `x`; c2 replaces it with a directory `x/` (a removal, then an add).
    let c1 = common::commit(&repo, root, &[("x", Some("file\n"), true)]).await;
    let c2 = common::commit(&repo, c1, &[("x", None, false)]).await;
    let c3 = common::commit(&repo, c2, &[("x/inner.txt", Some("i\n"), false)]).await;
    let slots = Slots::new(tmp.path().join("work"));
    drop(slots.lease(&repo, c1).await.expect("lease"));
    let lease = slots.lease_lazily(&repo, c3).await.expect("lease");
    assert_eq!(tree(&lease.dir), files(&[("x", "file\n", true)]));
    let t = toolbox!(repo, lease);
    // The directory still holds a file where c3 has a directory: the write cannot go
    // straight in, so the directory is brought to c3 first and the write lands inside it.
    call(&t, "write", json!({"path": "x/new.txt", "content": "n\n"})).await;
    assert_eq!(tree(&lease.dir), files(&[("x/inner.txt", "i\n", false)]));
    // Reading it takes the write into the directory.
    let text = call(&t, "read", json!({"path": "x/new.txt"})).await;
    assert!(text.contains('n'), "{text}");
    assert_eq!(
        tree(&lease.dir),
        files(&[("x/inner.txt", "i\n", false), ("x/new.txt", "n\n", false)])
    );
}

/// A whole-file write kept in memory behaves as one written into the directory: a read
/// sees it, a file without `executable` keeps its mode, what lands is the write, and a
/// path under a file is refused as the directory refuses it.
#[tokio::test]
async fn a_write_kept_in_memory_reads_lands_and_refuses_as_one_in_the_directory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let (c1, _) = common::two_commits(&repo).await;
    let slots = Slots::new(tmp.path().join("work"));
    let lease = slots.lease(&repo, c1).await.expect("lease");
    let t = toolbox!(repo, lease);
    call(
        &t,
        "write",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho\n"}),
    )
    .await;
    call(&t, "write", json!({"path": "w/new.txt", "content": "w\n"})).await;
    let untouched = files(&[
        ("a.txt", "a1\n", false),
        ("d/b.txt", "b1\n", false),
        ("run.sh", "#!/bin/sh\n", true),
    ]);
    assert_eq!(tree(&lease.dir), untouched, "both writes kept in memory");
    let known = lease.tracked.known().expect("only the tools wrote");
    let run = known["run.sh"].now.as_ref().expect("written whole");
    assert!(
        run.executable,
        "a file written without `executable` keeps its mode"
    );
    let refused = t
        .call(
            &ToolCall {
                id: "1".into(),
                name: "write".into(),
                arguments: json!({"path": "a.txt/x", "content": "x\n"}),
            },
            1,
            Duration::from_secs(10),
        )
        .await;
    assert!(
        refused.failed && refused.text.contains("Not a directory"),
        "a path under a file: {}",
        refused.text
    );
    let text = call(&t, "read", json!({"path": "run.sh"})).await;
    assert!(text.contains("echo"), "a read sees the write: {text}");
    let mut now = untouched.clone();
    now.insert("run.sh".into(), ("#!/bin/sh\necho\n".into(), true));
    now.insert("w/new.txt".into(), ("w\n".into(), false));
    assert_eq!(
        tree(&lease.dir),
        now,
        "the read took both writes into the directory"
    );
}

#[tokio::test]
async fn a_write_where_the_base_has_a_directory_is_refused_as_at_the_base() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let root = repo.stats().await.head.expect("head");
    let c1 = common::commit(&repo, root, &[("a.txt", Some("a\n"), false)]).await;
    let c2 = common::commit(&repo, c1, &[("x/inner.txt", Some("i\n"), false)]).await;
    let slots = Slots::new(tmp.path().join("work"));
    drop(slots.lease(&repo, c1).await.expect("lease"));
    let lease = slots.lease_lazily(&repo, c2).await.expect("lease");
    assert!(!lease.dir.join("x").exists(), "`x/` is owed, not there yet");
    let t = toolbox!(repo, lease);
    let call = ToolCall {
        id: "1".into(),
        name: "write".into(),
        arguments: json!({"path": "x", "content": "a file\n"}),
    };
    let out = t.call(&call, 1, Duration::from_secs(10)).await;
    assert!(
        out.failed && out.text.contains("directory"),
        "refused as at the base, where `x` is a directory: {}",
        out.text
    );
    assert_eq!(
        tree(&lease.dir),
        files(&[("a.txt", "a\n", false), ("x/inner.txt", "i\n", false)])
    );
}

/// A write kept in memory, and then landed as it was, is still owed to the directory at
/// the next lease: the directory never took it.
#[tokio::test]
async fn a_write_kept_in_memory_and_landed_is_still_owed_at_the_next_lease() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let (c1, _) = common::two_commits(&repo).await;
    let slots = Slots::new(tmp.path().join("work"));
    drop(slots.lease(&repo, c1).await.expect("lease"));
    {
        let lease = slots.lease_lazily(&repo, c1).await.expect("lease");
        let t = toolbox!(repo, lease);
        call(&t, "write", json!({"path": "p/x.txt", "content": "x\n"})).await;
        assert!(!lease.dir.join("p/x.txt").exists(), "kept in memory");
    }
    let c4 = common::commit(&repo, c1, &[("p/x.txt", Some("x\n"), false)]).await;
    let lease = slots.lease_lazily(&repo, c4).await.expect("lease");
    assert_eq!(
        lease.tracked.owed("p/x.txt"),
        Some(Some((b"x\n".to_vec(), false))),
        "what landed is owed: the directory does not hold it"
    );
    lease.tracked.ready(&lease.dir).await.expect("ready");
    assert_eq!(
        std::fs::read_to_string(lease.dir.join("p/x.txt")).expect("read"),
        "x\n"
    );
}
