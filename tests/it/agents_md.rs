//! AGENTS.md (design: project.agents-md): `specc init` writes one for the spec project, and
//! a build commits one into its output, naming the spec and the output as a person beside
//! the spec runs specc; `[build] agents_md = false` leaves it out.

use serde_json::json;

use crate::build::{TOML, build_with, done, two_leaves, write};
use crate::support::specc;

#[test]
fn init_writes_the_projects_agents_md() {
    let dir = tempfile::tempdir().expect("tmp");
    let at = dir.path().join("p");
    let o = specc(&["init", &at.display().to_string()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let text = std::fs::read_to_string(at.join("AGENTS.md")).expect("AGENTS.md");
    insta::assert_snapshot!("init-agents-md", text);
}

fn leaves() -> serde_json::Value {
    json!({
        "a": [[[write("a.txt", "alpha\n")], [done()]]],
        "b": [[[write("b.txt", "beta\n")], [done()]]],
    })
}

#[test]
fn a_build_commits_agents_md_into_its_output_unless_told_not_to() {
    let b = build_with(TOML, two_leaves(&[]), leaves());
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    let text = b.file("AGENTS.md").expect("out/AGENTS.md");
    insta::assert_snapshot!("output-agents-md", text);
    // Committed, by specc, like the rest of the build: not a person's change.
    let (ok, log) = crate::build::git(
        &b.dir.path().join("out"),
        &["log", "--format=%s", "-1", "--", "AGENTS.md"],
    );
    assert!(ok && log.starts_with("specc: AGENTS.md"), "{log}");
    let (_, status) = crate::build::git(&b.dir.path().join("out"), &["status", "--porcelain"]);
    assert_eq!(status, "", "out/ is clean");

    let off = format!("{TOML}\n[build]\nagents_md = false\n");
    let b = build_with(&off, two_leaves(&[]), leaves());
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    assert!(
        b.file("AGENTS.md").is_none(),
        "agents_md = false writes none"
    );
}
