//! A contradiction between two decisions that a worker's attempt reports is settled through
//! `specc serve` as on one machine: the coordinator's merge is submitted under the
//! attempt's claim, lands beside the task's own commit (not as its landing), and the code
//! pinned to the old text is revisited. The answers are `build_break`'s hand-written book,
//! recorded by an in-process `specc build` (the single-machine result) and replayed by
//! serve and one worker.

use specc_tests::answers::AnswerBook;
use std::sync::Arc;

use crate::build::{TOML, project, rebuild};
use crate::serve::{result, spawn, wait_exit, wait_for};

#[test]
fn a_contradiction_a_worker_reports_is_settled_through_serve() {
    let single = project(TOML);
    let recording = single.path().join("recording.jsonl");
    let book = Arc::new(AnswerBook::new(crate::build_break::contradiction_book()));
    let rec = recording.display().to_string();
    let built = rebuild(single.path(), &book, &["--record", &rec]);
    assert_eq!(built.code, 0, "{}\n{}", built.err, built.out);
    let (tree, _) = result(single.path());

    let dir = tempfile::tempdir().expect("dir");
    let d = dir.path();
    std::fs::copy(single.path().join("spec.md"), d.join("spec.md")).expect("spec");
    std::fs::write(
        d.join("specc.toml"),
        TOML.replace("none.jsonl", &recording.display().to_string()),
    )
    .expect("config");
    let bin = specc_tests::specc_binary();
    let serve_args = ["serve", "spec.md", "--listen", "127.0.0.1:0"];
    let (mut serve, serve_rx) = spawn(&bin, d, &serve_args, None);
    let mut log = Vec::new();
    let line = wait_for(&serve_rx, "listening on http://", &mut log);
    let url = line.rsplit(' ').next().expect("url").to_owned();
    let worker = ["worker", "--connect", url.as_str(), "--jobs", "1"];
    let (mut w, worker_rx) = spawn(&bin, d, &worker, None);
    let status = wait_exit(&mut serve, &serve_rx, &mut log);
    let _ = w.wait();
    let worker_log: Vec<String> = worker_rx.iter().collect();
    let text = format!("{}\n--- worker:\n{}", log.join("\n"), worker_log.join("\n"));
    assert!(status.success(), "{text}");
    assert!(
        text.contains("DecisionsMerged") && text.contains("commits=4"),
        "the worker merged the decisions and serve landed the merge beside a, b and the revisit:\n{text}"
    );
    assert_eq!(
        result(d).0,
        tree,
        "the tree differs from one machine's:\n{text}"
    );
    let doc = std::fs::read_to_string(d.join("out/design-docs/planned-core.md")).expect("doc");
    assert!(
        doc.contains("Decision: Records are CBOR, on disk and on the wire."),
        "{doc}"
    );
}
