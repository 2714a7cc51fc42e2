//! `specc trace` on the bundled example, built (design: driver.trace): every MUST
//! requirement is covered by a task, by code and by a passing test; with one test's
//! reference removed, `--fail-under 100` fails and names the requirement; JSON and Markdown
//! carry the same rows.

use serde_json::Value;

use crate::support::specc;

use crate::support::copy_dir;

/// The example, copied and built in `specs/textstats` of a temporary directory (a directory
/// named like a test directory, which must not make its code count as tests): the temporary
/// directory, the project and the spec's path.
fn built_example() -> (tempfile::TempDir, std::path::PathBuf, String) {
    let tmp = tempfile::tempdir().expect("tmp");
    let project = tmp.path().join("specs/textstats");
    std::fs::create_dir_all(&project).expect("project");
    let example = crate::support::root().join("examples/textstats");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(example.join(f), project.join(f)).expect("copy");
    }
    for d in ["hidden", "field-guide"] {
        copy_dir(&example.join(d), &project.join(d));
    }
    let env = specc::Env::plain().with_sandbox_helper(specc_tests::specc_binary());
    let spec = project.join("spec.md").display().to_string();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(["specc", "build", spec.as_str()], &env, &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    (tmp, project, spec)
}

#[test]
fn every_must_of_the_example_is_traced_and_a_removed_test_fails_the_gate() {
    let (_tmp, project, spec) = built_example();
    let gate = specc(&["trace", &spec, "--fail-under", "100"]);
    assert_eq!(gate.code, 0, "{}\n{}", gate.stdout, gate.stderr);
    assert!(
        gate.stdout.contains(
            "MUST requirements: 7; covered by a task 7 (100%), by code 7 (100%), by a passing test 7 (100%)"
        ),
        "{}",
        gate.stdout
    );
    let json = specc(&["trace", &spec, "--format", "json"]);
    let v: Value = serde_json::from_str(&json.stdout).expect("json");
    let r4 = v["requirements"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == "R-4"))
        .expect("R-4")
        .clone();
    assert_eq!(r4["level"], "MUST");
    assert_eq!(r4["tasks"][0]["id"], "render");
    assert_eq!(r4["tasks"][0]["landed"], true);
    assert!(
        r4["code"][0]["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("out/src/render.rs")),
        "{r4}"
    );
    assert_eq!(r4["tests"][0]["status"]["status"], "passed", "{r4}");
    // R-6 (SHOULD) is covered by no task; the summary counts only what binds.
    assert_eq!(v["summary"]["binding"], 7);
    let markdown = specc(&["trace", &spec, "--format", "markdown"]);
    assert!(
        markdown
            .stdout
            .starts_with("| requirement | level | tasks | code | tests |"),
        "{}",
        markdown.stdout
    );

    // A person removes render's test reference: R-4 has no test left, and the gate names it.
    let render = project.join("out/src/render.rs");
    let text = std::fs::read_to_string(&render).expect("render.rs");
    assert!(text.contains("    // req: R-4\n"), "{text}");
    std::fs::write(&render, text.replace("    // req: R-4\n", "")).expect("write");
    let gate = specc(&["trace", &spec, "--fail-under", "100"]);
    assert_eq!(gate.code, 1, "{}\n{}", gate.stdout, gate.stderr);
    assert!(
        gate.stderr.contains(
            "are tested by a passing test, under 100%: not tested by a passing test: R-4"
        ),
        "{}",
        gate.stderr
    );
    assert!(
        gate.stdout.contains("by a passing test 6 (85.7%)"),
        "{}",
        gate.stdout
    );
    // The code in a subdirectory of the repository: the statuses come from the same history.
    let sub = project.join("out/src").display().to_string();
    let json = specc(&["trace", &spec, "--tree", &sub, "--format", "json"]);
    let v: Value = serde_json::from_str(&json.stdout).expect("json");
    // (R-8's code is the README, outside src/.)
    assert_eq!(v["summary"]["by_code"], 6, "{}", json.stdout);
    let r1 = &v["requirements"][0];
    assert_eq!(r1["tests"][0]["status"]["status"], "passed", "{r1}");
    // A --tree that is not there is a usage error, not an empty trace.
    let missing = specc(&["trace", &spec, "--tree", "/no/such/tree"]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
    // A test changed since specc landed it did not pass any run specc knows of.
    let count = project.join("out/src/count.rs");
    let text = std::fs::read_to_string(&count).expect("count.rs");
    std::fs::write(&count, format!("{text}\n// a person's note\n")).expect("write");
    let json = specc(&["trace", &spec, "--format", "json"]);
    let v: Value = serde_json::from_str(&json.stdout).expect("json");
    let r2 = v["requirements"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == "R-2"))
        .expect("R-2")
        .clone();
    let unit = r2["tests"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["spec_check"] == false))
        .expect("the unit test");
    assert_eq!(unit["status"]["status"], "not_run", "{unit}");
}
