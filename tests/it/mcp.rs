//! `specc mcp` driven by a real client, the official Python SDK (PyPI `mcp`, which `.ci/run`
//! installs), over stdio on a copy of the example: initialize, list tools, preview, build
//! with `--allow-spend` following its progress, status and show of a landed task, trace; a
//! spending tool refused without `--allow-spend`; a bad argument answered with a protocol
//! error (design: driver.mcp). The expectations are in `tests/mcp/client.py`.

#[test]
fn a_python_mcp_client_previews_builds_follows_and_reads_the_example() {
    let tmp = tempfile::tempdir().expect("tmp");
    let project = crate::support::example_copy(tmp.path());
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
