//! One case per plan diagnostic, through `specc plan --emit tasks` as a user runs it.
//! Each case under `fixtures/planner/cases/` holds a spec, a `script.json` of planner answers
//! by intent node id (served in order, the last one repeated; `merge` is the coordinator's),
//! the recording made from that script, `expected.txt` (the exit status, then one line per
//! expected diagnostic: its code and what its text must contain), and optionally a
//! `specc.toml` with `[limits]`. The test replays the recording through the CLI, checks the
//! exit status and codes, and snapshots what the user sees.
//!
//! Regenerate the recordings after changing a script or the planner protocol:
//! `scripts/regenerate-fixtures.sh`.

use std::path::PathBuf;

use crate::support::{root, specc};

fn cases() -> Vec<PathBuf> {
    specc_tests::planner_cases()
}

#[test]
fn every_plan_diagnostic_has_a_case() {
    let cases = cases();
    let mut seen = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let dir = tempfile::tempdir().expect("dir");
        for f in ["spec.md", "specc.toml"] {
            if case.join(f).exists() {
                std::fs::copy(case.join(f), dir.path().join(f)).expect("copy");
            }
        }
        let spec = dir.path().join("spec.md").display().to_string();
        let rec = case.join("recording.jsonl").display().to_string();
        let out = specc(&[
            "plan",
            &spec,
            "--emit",
            "tasks",
            "--provider",
            "replay",
            "--recording",
            &rec,
        ]);
        let expected = std::fs::read_to_string(case.join("expected.txt")).expect("expected");
        let mut lines = expected.lines();
        let exit: i32 = lines
            .next()
            .and_then(|l| l.strip_prefix("exit "))
            .and_then(|n| n.parse().ok())
            .expect("`exit N` first");
        assert_eq!(out.code, exit, "{name}: {}", out.stderr);
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let (code, text) = line.split_once(' ').unwrap_or((line, ""));
            assert!(
                // Rendered as a diagnostic of its own: the code heads it on its own line.
                out.stderr.lines().any(|l| l.trim() == code),
                "{name}: no {code}:\n{}",
                out.stderr
            );
            // Messages wrap at the terminal's width: compare words.
            let words = |s: &str| {
                s.split_whitespace()
                    .filter(|w| *w != "|")
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            assert!(
                words(&out.stderr).contains(&words(text)),
                "{name}: no `{text}`:\n{}",
                out.stderr
            );
            seen.push(code.to_owned());
        }
        let temp = format!("{}/", dir.path().display());
        let shown = format!("{}\n---\n{}", out.stdout, out.stderr).replace(&temp, "");
        insta::assert_snapshot!(format!("plan-case-{name}"), shown);
    }
    for code in [
        "E0301", "E0302", "W0303", "E0304", "E0305", "E0306", "E0307", "E0308", "W0310", "E0312",
    ] {
        // E0301 is seen by the planner (quoted in its repairs) and then resolved by the
        // coordinator, whose W0310 the user sees.
        let shown = if code == "E0301" { "W0310" } else { code };
        assert!(seen.iter().any(|c| c == shown), "no case for {code}");
    }
    let merged = std::fs::read_to_string(
        root().join("fixtures/planner/cases/owned-elsewhere-merged/recording.jsonl"),
    )
    .expect("recording");
    assert!(
        merged.contains("E0301"),
        "the repairs quote the ownership error"
    );
}
