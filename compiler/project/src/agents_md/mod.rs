//! AGENTS.md, the file coding agents read before they work in a directory: `specc init`
//! writes one for the spec project (how to edit the spec, preview, approve and build), and
//! a build commits one into its output (what `design:` and `req:` comments are, which
//! commands must pass, which files specc owns), unless `[build] agents_md = false`.
//! design: project.agents-md

use specc_vcs::{Change, Outcome, Submission};

/// Where it goes, in a spec project and in a build's output.
pub const PATH: &str = "AGENTS.md";

/// The spec project's AGENTS.md, as `specc init` writes it.
pub const PROJECT: &str = include_str!("project.md");

const OUTPUT: &str = include_str!("output.md");

/// The output's AGENTS.md for the spec at `spec` and the output at `out` (as a person runs
/// specc from the spec's directory), with the store's line budget.
pub fn output(spec: &str, out: &str, lines: usize) -> String {
    OUTPUT
        .replace("{SPEC}", spec)
        .replace("{OUT}", out)
        .replace("{LINES}", &lines.to_string())
}

/// Commits `text` as AGENTS.md on the store's head for run `run`, unless the head holds
/// nothing built yet or has it already. Whether it committed.
pub async fn commit(repo: &specc_vcs::Repo, run: &str, text: &str) -> bool {
    let Ok((head, now)) = repo.read_head(PATH).await else {
        return false;
    };
    if repo.stats().await.seq == 0 || now.as_ref().is_some_and(|f| *f.bytes == *text.as_bytes()) {
        return false;
    }
    let submission = Submission {
        base: head,
        changes: vec![Change {
            path: PATH.to_owned(),
            expected: now.map(|f| f.blob),
            new: Some(text.as_bytes().to_vec()),
            executable: false,
        }],
        message: "specc: AGENTS.md for coding agents working in this repository".to_owned(),
        task: "agents-md".to_owned(),
        idempotency_key: format!("agents-md/{run}"),
    };
    matches!(repo.submit(submission).await, Outcome::Committed { .. })
}
