//! `specc mcp` driven by a real client, the official Python SDK (PyPI `mcp`, which `.ci/run`
//! installs), over stdio on a copy of the example: initialize, list tools, preview, build
//! with `--allow-spend` following its progress, status and show of a landed task, trace; a
//! spending tool refused without `--allow-spend`; a bad argument answered with a protocol
//! error (design: driver.mcp). The expectations are in `tests/mcp/client.py`.

use crate::support::copy_dir;

#[test]
fn a_python_mcp_client_previews_builds_follows_and_reads_the_example() {
    let tmp = tempfile::tempdir().expect("tmp");
    let project = tmp.path().join("textstats");
    let example = crate::support::root().join("examples/textstats");
    std::fs::create_dir_all(&project).expect("project");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(example.join(f), project.join(f)).expect("copy");
    }
    for d in ["hidden", "field-guide"] {
        copy_dir(&example.join(d), &project.join(d));
    }
    let script = crate::support::root().join("tests/mcp/client.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(specc_tests::specc_binary())
        .arg(&project)
        .output()
        .expect("python3 runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "the MCP client's expectations failed (is PyPI's `mcp` installed?)\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all expectations held"), "{stdout}");
}
