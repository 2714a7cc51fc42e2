//! The README cannot go stale: its "Your own spec" commands run here against the scripted
//! OpenAI-compatible server on a loopback port (hand-written answers: the plumbing, not a
//! model), with the test's specc on PATH; every other command it shows is run by `.ci/run`.

use std::io::BufRead as _;
use std::process::{Command, Stdio};

/// The README's `sh` blocks, each as its lines, with the heading it stands under.
fn blocks(readme: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let (mut heading, mut block): (String, Option<Vec<String>>) = (String::new(), None);
    for line in readme.lines() {
        match (&mut block, line) {
            (None, l) if l.starts_with("## ") => heading = l.to_owned(),
            (None, "```sh") => block = Some(Vec::new()),
            (Some(b), "```") => {
                out.push((heading.clone(), std::mem::take(b)));
                block = None;
            }
            (Some(b), l) => b.push(l.to_owned()),
            _ => {}
        }
    }
    out
}

fn readme() -> String {
    std::fs::read_to_string(crate::support::root().join("README.md")).expect("README")
}

#[test]
fn the_readmes_walkthrough_runs_as_written_against_a_local_server() {
    let root = crate::support::root();
    let walk = blocks(&readme())
        .into_iter()
        .find(|(h, _)| h == "## Your own spec")
        .map(|(_, b)| b)
        .expect("the walkthrough");
    assert!(
        walk[0].starts_with("cargo build --release -p specc"),
        "{walk:?}"
    );
    let mut server = Command::new("python3")
        .arg(root.join("scripts/fake-openai-server.py"))
        .arg("0")
        .arg(root.join("tests/readme/hello-book.json"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("the scripted server");
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("its port");
    let port = line.trim().trim_start_matches("listening ").to_owned();
    let dir = tempfile::tempdir().expect("tmp");
    let bin = specc_tests::specc_binary();
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The first line builds specc for a reader; here the test's binary stands in for it.
    let script = walk[1..]
        .iter()
        .map(|l| l.replace("127.0.0.1:8080", &format!("127.0.0.1:{port}")))
        .collect::<Vec<_>>()
        .join("\n");
    let o = Command::new("sh")
        .arg("-ec")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .expect("sh");
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        o.status.success(),
        "{script}\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("estimate"), "the preview: {stdout}");
    assert!(stdout.contains("task greeter"), "specc show: {stdout}");
    assert!(dir.path().join("my-tool/out/hello/__main__.py").is_file());
    assert!(dir.path().join("report.html").is_file());
}

#[test]
fn every_other_readme_command_is_run_by_ci() {
    let ci = std::fs::read_to_string(crate::support::root().join(".ci/run"))
        .expect(".ci/run")
        .replace(" --quiet", "")
        .replace(" --locked", "");
    assert!(
        ci.contains("tests/readme/walkthrough.sh"),
        "CI runs the walkthrough as written"
    );
    for (heading, lines) in blocks(&readme()) {
        if heading == "## Your own spec" {
            continue;
        }
        for l in lines.iter().filter(|l| !l.trim().is_empty()) {
            assert!(
                ci.contains(l.trim()),
                "`{l}` ({heading}) is run by no test or CI step"
            );
        }
    }
}
