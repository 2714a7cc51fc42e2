//! The data-driven harness over fixtures/check: each directory is one tree to check. Its
//! `expected.txt` lists the diagnostics (`CODE path:line`, path relative to the case, primary
//! label first; a diagnostic without a place is `CODE path`), its optional `args.txt` the
//! extra arguments (`{case}` stands for the case's directory). Both renderings are
//! snapshotted. Adding a case is adding a directory.

use std::path::Path;

use crate::support::{root, specc};

#[test]
fn check_fixtures() {
    let base = root().join("fixtures/check");
    let mut cases: Vec<_> = std::fs::read_dir(&base)
        .expect("fixtures/check exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    assert!(cases.len() >= 15, "{} cases", cases.len());
    for name in &cases {
        run_case(&base.join(name), name);
    }
}

fn run_case(dir: &Path, name: &str) {
    // Relative to the test's working directory (the `tests/` package), so that what specc
    // prints, and where miette wraps it, does not depend on where the checkout lives.
    let case = format!("../fixtures/check/{name}");
    let mut args = vec!["check".to_owned(), case.clone()];
    if let Ok(extra) = std::fs::read_to_string(dir.join("args.txt")) {
        args.extend(extra.split_whitespace().map(|a| a.replace("{case}", &case)));
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let human = specc(&argv);
    let mut json_argv = argv.clone();
    json_argv.extend(["--message-format", "json"]);
    let json = specc(&json_argv);

    let prefix = format!("{case}/");
    let found: Vec<String> = crate::support::json_diagnostics(&json.stdout)
        .iter()
        .map(|d| {
            let code = d["code"].as_str().unwrap_or("?");
            match d["file"].as_str() {
                Some(file) => format!("{code} {}:{}", file.trim_start_matches(&prefix), d["line"]),
                None => {
                    // A skipped path names itself in the message.
                    let message = d["message"].as_str().unwrap_or_default();
                    let path = message.split('`').nth(1).unwrap_or_default();
                    format!("{code} {}", path.trim_start_matches(&prefix))
                }
            }
        })
        .collect();
    let expected: Vec<String> = std::fs::read_to_string(dir.join("expected.txt"))
        .unwrap_or_else(|_| panic!("{name}/expected.txt exists"))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect();
    assert_eq!(found, expected, "{name}: diagnostics (CODE path:line)");

    let errors = expected.iter().any(|l| l.starts_with('E'));
    assert_eq!(
        human.code,
        i32::from(errors),
        "{name}: exit status\n{}",
        human.stderr
    );
    assert_eq!(
        json.code, human.code,
        "{name}: exit status with JSON messages"
    );
    let last = json.stdout.lines().last().unwrap_or_default();
    let summary: serde_json::Value =
        serde_json::from_str(last).expect("a JSON summary on stdout, last");
    assert_eq!(
        summary["errors"].as_u64(),
        Some(found.iter().filter(|l| l.starts_with('E')).count() as u64)
    );

    insta::assert_snapshot!(
        format!("check-{name}"),
        format!("{}\n{}", human.stdout, human.stderr)
    );
    assert_eq!(json.stderr, "", "{name}: stderr is for people");
    insta::assert_snapshot!(format!("check-{name}-json"), json.stdout);
}
