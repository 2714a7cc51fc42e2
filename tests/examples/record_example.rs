//! Re-records an example's `recording.jsonl` from its hand-written answer book
//! (`answers.json`): runs `specc build` on a copy of the example with the book answering
//! every request and `--record` on, then puts the new recording beside the spec. Run it
//! after a change to the prompts or the tools changes what specc asks (the replay then
//! stops with E0316 naming the request it has no answer for):
//!
//! ```sh
//! cargo run -p specc-tests --example record-example -- examples/textstats
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_tests::answers::AnswerBook;

fn main() {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: record-example EXAMPLE_DIR");
        std::process::exit(2);
    };
    if let Err(e) = record(&dir) {
        eprintln!("record-example: {e}");
        std::process::exit(1);
    }
}

fn record(dir: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(dir.join("answers.json")).map_err(|e| e.to_string())?;
    let book: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    for f in [
        "spec.md",
        "specc.toml",
        "field-guide/index.md",
        "hidden/hidden.rs",
    ] {
        let from = dir.join(f);
        if from.is_file() {
            let to = tmp.path().join(f);
            std::fs::create_dir_all(to.parent().unwrap_or(tmp.path()))
                .map_err(|e| e.to_string())?;
            std::fs::copy(&from, &to).map_err(|e| format!("{}: {e}", from.display()))?;
        }
    }
    let recording = tmp.path().join("recording.new.jsonl");
    let env = specc::Env::plain()
        .with_models(Arc::new(AnswerBook::new(book)))
        .with_sandbox_helper(specc_tests::specc_binary());
    let spec = tmp.path().join("spec.md");
    let args = [
        "specc".to_owned(),
        "build".to_owned(),
        spec.display().to_string(),
        "--record".to_owned(),
        recording.display().to_string(),
    ];
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = specc::run(args, &env, &mut out, &mut err);
    print!("{}", String::from_utf8_lossy(&err));
    print!("{}", String::from_utf8_lossy(&out));
    if code != 0 {
        return Err(format!(
            "the build exited {code}; the recording was not replaced"
        ));
    }
    std::fs::copy(&recording, dir.join("recording.jsonl")).map_err(|e| e.to_string())?;
    println!("wrote {}", dir.join("recording.jsonl").display());
    Ok(())
}
