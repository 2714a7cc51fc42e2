//! The `write` tool's files: a new one in a new directory, modes as asked (and kept when
//! not asked), and nothing written over a directory or outside the scope. A write may be
//! kept in memory until something needs the directory (design: runtime.lazy-checkouts):
//! the directory is brought up to date (`Toolbox::ready`) before it is looked at.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use specc_llm::ToolCall;
use specc_runtime::{Base, Scope, Toolbox};
use specc_sandbox::{CommandLimits, ProcessRunner};
use specc_vcs::{Options, Repo};

async fn write(t: &Toolbox, args: serde_json::Value) -> (String, bool) {
    let call = ToolCall {
        id: "1".into(),
        name: "write".into(),
        arguments: args,
    };
    let out = t.call(&call, 1, Duration::from_secs(10)).await;
    (out.text, out.failed)
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(path)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test]
async fn written_files_get_the_asked_mode_and_keep_it_when_not_asked() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = Repo::open(&tmp.path().join("log"), Options::default()).expect("repo");
    let head = repo.stats().await.head.expect("head");
    let root = tmp.path().join("slot");
    std::fs::create_dir_all(&root).expect("mkdir");
    let t = Toolbox {
        root: root.clone(),
        scope: Scope::new(&["src/**".to_owned()]),
        runner: Arc::new(ProcessRunner::default()),
        limits: CommandLimits {
            timeout: Duration::from_secs(10),
            output_cap: 1000,
        },
        logs: tmp.path().join("logs"),
        guide_lines: 100,
        base: Base::new(repo, head),
        tracked: Arc::default(),
        pins: None,
        breaks: Default::default(),
        contradictions: Default::default(),
        git: Default::default(),
    };
    let file = root.join("src/deep/run.sh");
    let (text, failed) = write(&t, json!({"path": "src/deep/run.sh", "content": "a\n"})).await;
    assert!(!failed, "{text}");
    t.ready().await.expect("ready");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "a\n");
    assert_eq!(mode(&file), 0o644, "a new file is not executable");

    let args = json!({"path": "src/deep/run.sh", "content": "#!/bin/sh\n", "executable": true});
    assert!(!write(&t, args).await.1);
    t.ready().await.expect("ready");
    assert_eq!(mode(&file), 0o755);
    assert!(
        !write(&t, json!({"path": "src/deep/run.sh", "content": "b\n"}))
            .await
            .1
    );
    t.ready().await.expect("ready");
    assert_eq!(mode(&file), 0o755, "kept when not asked");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "b\n");
    let args = json!({"path": "src/deep/run.sh", "content": "c\n", "executable": false});
    assert!(!write(&t, args).await.1);
    t.ready().await.expect("ready");
    assert_eq!(mode(&file), 0o644);

    // Two writes kept in memory: the second keeps the mode the first asked for.
    let args = json!({"path": "src/deep/x.sh", "content": "x\n", "executable": true});
    assert!(!write(&t, args).await.1);
    assert!(!root.join("src/deep/x.sh").exists(), "kept in memory");
    assert!(
        !write(&t, json!({"path": "src/deep/x.sh", "content": "y\n"}))
            .await
            .1
    );
    t.ready().await.expect("ready");
    assert_eq!(
        mode(&root.join("src/deep/x.sh")),
        0o755,
        "the first write's mode"
    );

    // A directory where the file should be: refused, and left alone.
    std::fs::create_dir_all(root.join("src/d")).expect("mkdir");
    let (text, failed) = write(&t, json!({"path": "src/d", "content": "x"})).await;
    assert!(failed && text.contains("directory"), "{text}");
    assert!(root.join("src/d").is_dir());
    // Outside the scope: refused, nothing written.
    let (text, failed) = write(&t, json!({"path": "other.txt", "content": "x"})).await;
    assert!(
        failed && text.contains("outside your write scope"),
        "{text}"
    );
    assert!(!root.join("other.txt").exists());
}
