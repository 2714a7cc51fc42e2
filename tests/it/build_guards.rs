//! What `specc build` refuses and undoes: links and special files through the tools, changes
//! outside the write scope before the checks run, an `out/` a person changed, a second build
//! on one state directory, and key variables in a command's environment.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use specc_sandbox::{CommandSpec, Exit, ProcessRunner, Runner};

use crate::build::{TOML, build_in, build_with, child, done, git, project, two_leaves, write};

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

fn run(command: &str) -> Value {
    call("run", json!({"command": command}))
}

pub(crate) fn tool_texts(b: &crate::build::Built, task: &str) -> Vec<String> {
    b.steps()
        .into_iter()
        .filter(|(t, k, _)| t == task && k == "tool")
        .map(|(_, _, body)| body)
        .collect()
}

#[test]
fn links_and_special_files_are_refused_by_the_tools() {
    let dir = project(TOML);
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "keep\n").expect("outside");
    let link = format!(
        "ln -s {} a.txt && mkdir -p field-guide && ln -sf {} field-guide/index.md && mkfifo pipe",
        outside.display(),
        outside.display()
    );
    let b = build_in(
        dir,
        two_leaves(&[]),
        json!({"a": [[[run(&link)],
                      [call("read", json!({"path": "a.txt"}))],
                      [call("note", json!({"text": "through the link"}))],
                      [call("read", json!({"path": "pipe"}))],
                      [call("give_up", json!({"reason": "links everywhere"}))]]],
               "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    let texts = tool_texts(&b, "a");
    assert!(texts[1].contains("`a.txt` is a symbolic link"), "{texts:?}");
    assert!(
        texts[2].contains("`field-guide` is a symbolic link")
            || texts[2].contains("`field-guide/index.md` is a symbolic link"),
        "{texts:?}"
    );
    assert!(
        texts[3].contains("`pipe` is not a regular file"),
        "{texts:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&outside).expect("outside"),
        "keep\n"
    );
}

#[test]
fn changes_outside_the_scope_are_undone_before_the_checks_run() {
    // The check passes only if b.txt exists, which `a` may not write: a command writes it,
    // specc undoes that, and the check sees what would land.
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f a.txt && test -f b.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &["a"]),
        ]},
        "replan:a": {"instructions": "only a.txt"},
    });
    let attempt = json!([
        [write("a.txt", "alpha\n"), run("echo x > b.txt")],
        [done()],
        [call("give_up", json!({"reason": "the check needs b.txt"}))]
    ]);
    let b = build_with(TOML, planner, json!({"a": [attempt.clone(), attempt]}));
    assert_eq!(b.code, 1, "{}", b.out);
    let texts = tool_texts(&b, "a");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("undone before the checks ran: b.txt")),
        "{texts:?}"
    );
    assert!(b.file("b.txt").is_none());
}

#[test]
fn an_out_directory_a_person_made_is_not_overwritten() {
    let dir = project(TOML);
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).expect("out");
    assert!(git(&out, &["init", "-q"]).0);
    std::fs::write(out.join("notes.txt"), "mine\n").expect("mine");
    let b = build_in(dir, two_leaves(&[]), json!({}));
    assert_eq!(b.code, 1, "{}", b.err);
    assert!(
        b.err.contains("E0403") && b.err.contains("notes.txt"),
        "{}",
        b.err
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).expect("kept"),
        "mine\n"
    );
    assert!(b.book.seen().is_empty(), "no model was asked");
}

#[test]
fn a_second_build_on_one_state_directory_is_refused() {
    let dir = project(TOML);
    std::fs::create_dir_all(dir.path().join(".specc")).expect("state");
    let held = std::fs::File::create(dir.path().join(".specc/lock")).expect("lock file");
    held.lock().expect("lock");
    let b = build_in(dir, two_leaves(&[]), json!({}));
    assert_eq!(b.code, 2, "{}", b.err);
    assert!(
        b.err.contains("another specc build is running"),
        "{}",
        b.err
    );
    drop(held);
}

#[test]
fn a_command_gets_the_allow_list_and_no_key_variable() {
    let dir = tempfile::tempdir().expect("dir");
    let runner = ProcessRunner {
        secret_vars: vec!["PATH".to_owned()],
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let result = rt.block_on(runner.run(CommandSpec {
        script: "env".to_owned(),
        dir: dir.path().to_path_buf(),
        read_only: Vec::new(),
        timeout: Duration::from_secs(10),
        output_cap: 1 << 16,
        env: vec![("OPENAI_API_KEY".to_owned(), "sk-no".to_owned())],
        log: dir.path().join("logs/env.log"),
        home: None,
    }));
    assert_eq!(result.exit, Exit::Code(0));
    let text = result.stdout.text();
    let names: Vec<&str> = text.lines().filter_map(|l| l.split('=').next()).collect();
    // The allow-list, what the runner sets, and what the shell adds itself.
    let own = ["HOME", "TMPDIR", "PWD", "SHLVL", "_", "OLDPWD"];
    let allowed: Vec<&str> = specc_sandbox::ALLOWED_VARS
        .iter()
        .chain(own.iter())
        .filter(|v| **v != "PATH")
        .copied()
        .collect();
    for n in &names {
        assert!(allowed.contains(n), "{n} reached the command: {names:?}");
    }
    assert!(
        !names.contains(&"PATH"),
        "a variable named secret is dropped"
    );
    let home = PathBuf::from(
        text.lines()
            .find_map(|l| l.strip_prefix("HOME="))
            .expect("HOME"),
    );
    assert!(
        home.starts_with(dir.path()),
        "a private HOME: {}",
        home.display()
    );
}

const LIVE: &str = r#"
[providers.local]
kind = "openai-compatible"
base_url = "http://127.0.0.1:9/v1"

[roles.planner]
provider = "local"
model = "planner"

[roles.worker]
provider = "local"
model = "worker"
"#;

fn build_live(toml: &str) -> (i32, String) {
    let dir = project(toml);
    // No helper binary: only the interim runner, weaker than the sandbox.
    let env = specc::Env::plain();
    let spec = dir.path().join("spec.md").display().to_string();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(["specc", "build", spec.as_str()], &env, &mut out, &mut err);
    (code, String::from_utf8_lossy(&err).into_owned())
}

#[test]
fn live_models_are_refused_a_weaker_sandbox_unless_allowed() {
    let (code, err) = build_live(LIVE);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("E0404") && err.contains("no sandbox helper"),
        "{err}"
    );
    // Allowed explicitly: one warning, then the build goes on (and fails to reach the
    // model at 127.0.0.1:9, which is not listening).
    let (code, err) = build_live(&format!("{LIVE}\n[sandbox]\nallow_weaker = true\n"));
    assert_eq!(err.matches("W0407").count(), 1, "{err}");
    assert_eq!(code, 1, "{err}");
}

/// W0413 says when more attempts run at once than the workers' provider (or role) lets
/// calls out, and names the table to raise (design: perf.width).
#[test]
fn more_jobs_than_the_workers_provider_allows_is_warned_once() {
    let live = LIVE.replace(
        "base_url = \"http://127.0.0.1:9/v1\"",
        "base_url = \"http://127.0.0.1:9/v1\"\nconcurrency = 2",
    );
    let weaker = "\n[sandbox]\nallow_weaker = true\n";
    // The diagnostic's words, without the renderer's line breaks and margins.
    let words = |err: &str| {
        err.split_whitespace()
            .filter(|w| *w != "|")
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (_, err) = build_live(&format!("{live}{weaker}\n[build]\njobs = 8\n"));
    let err = words(&err);
    assert_eq!(err.matches("warning: 8 jobs").count(), 1, "{err}");
    assert!(
        err.contains("8 jobs, but the workers' provider lets 2 model calls out at once")
            && err.contains("`concurrency` in [providers.local]"),
        "{err}"
    );
    // The role is the narrower limit: the warning names it.
    let role = live.replace("model = \"worker\"", "model = \"worker\"\nconcurrency = 1");
    let (_, err) = build_live(&format!("{role}{weaker}\n[build]\njobs = 8\n"));
    let err = words(&err);
    assert!(
        err.contains("the worker role lets 1 model call out at once")
            && err.contains("[roles.worker]"),
        "{err}"
    );
    // As many jobs as calls: nothing to say.
    let (_, err) = build_live(&format!("{live}{weaker}\n[build]\njobs = 2\n"));
    assert!(!err.contains("W0413"), "{err}");
}
