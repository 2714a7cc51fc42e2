//! specc.toml as a user mistypes it: a table or key specc does not read is refused with the
//! name it probably means, by every command that reads the file, with exit status 2.

use crate::support::specc;

fn project(toml: &str) -> tempfile::TempDir {
    crate::support::project_with("# t\n\n- [R-1] It MUST work.\n", toml)
}

#[test]
fn a_misspelt_table_or_key_is_refused_with_a_did_you_mean() {
    for (toml, says) in [
        (
            "[budjet]\ndollars = 5\n",
            "unknown table `[budjet]`: did you mean `[budget]`?",
        ),
        ("[budget]\ndollar = 5\n", "did you mean `dollars`?"),
        ("[limits]\ndepht = 3\n", "did you mean `depth`?"),
        ("dollars = 5\n", "unknown key `dollars` outside any table"),
    ] {
        let dir = project(toml);
        let spec = dir.path().join("spec.md").display().to_string();
        let plan = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
        assert_eq!(plan.code, 2, "{toml}: {}", plan.stderr);
        assert!(
            plan.stderr.contains("E0006") && plan.stderr.contains(says),
            "{toml}: {}",
            plan.stderr
        );
        let build = specc(&["build", &spec]);
        assert_eq!(build.code, 2, "{toml}: {}", build.stderr);
        assert!(build.stderr.contains(says), "{toml}: {}", build.stderr);
        assert!(!dir.path().join("out").exists(), "nothing built");
    }
}

#[test]
fn a_state_directory_that_cannot_be_written_is_exit_2() {
    let dir = project("");
    // `.specc` is a file: the planner cache and ledger cannot be made.
    std::fs::write(dir.path().join(".specc"), "in the way").expect("file");
    let spec = dir.path().join("spec.md").display().to_string();
    let plan = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
    assert_eq!(plan.code, 2, "{}", plan.stderr);
    assert!(plan.stderr.contains("E0004"), "{}", plan.stderr);
}

#[test]
fn a_damaged_planner_cache_is_set_aside_and_reported_not_read_as_empty() {
    let dir = project("");
    let spec = dir.path().join("spec.md").display().to_string();
    std::fs::create_dir_all(dir.path().join(".specc")).expect("state");
    let cache = dir.path().join(".specc/plan-cache.json");
    std::fs::write(&cache, "{\"answers\": {\"cut short").expect("damaged");
    let plan = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(
        plan.stderr.contains("W0007") && plan.stderr.contains("is damaged"),
        "{}",
        plan.stderr
    );
    let aside: Vec<_> = std::fs::read_dir(dir.path().join(".specc"))
        .expect("state")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("plan-cache.json.damaged-")
        })
        .collect();
    assert_eq!(aside.len(), 1, "the damaged cache is kept");
    assert_eq!(
        std::fs::read_to_string(aside[0].path()).expect("aside"),
        "{\"answers\": {\"cut short"
    );
    let fresh: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cache).expect("new cache")).expect("json");
    assert!(fresh["answers"].is_object(), "{fresh}");
    // Planning again reads it: no warning.
    let again = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
    assert!(!again.stderr.contains("W0007"), "{}", again.stderr);
}

#[test]
fn a_planner_cache_that_cannot_be_saved_is_reported() {
    let dir = project("");
    let spec = dir.path().join("spec.md").display().to_string();
    // A directory where the cache goes: it can be neither read nor replaced.
    std::fs::create_dir_all(dir.path().join(".specc/plan-cache.json/x")).expect("in the way");
    let plan = specc(&["plan", &spec, "--emit", "tasks", "--provider", "outline"]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(
        plan.stderr.contains("W0007") && plan.stderr.contains("was not saved"),
        "{}",
        plan.stderr
    );
}

#[test]
fn a_recording_that_cannot_be_written_is_a_warning_and_the_answers_count() {
    let dir = project("");
    let spec = dir.path().join("spec.md").display().to_string();
    // /dev/full opens and refuses every write (ENOSPC).
    let plan = specc(&[
        "plan",
        &spec,
        "--emit",
        "tasks",
        "--provider",
        "outline",
        "--record",
        "/dev/full",
    ]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    assert!(
        plan.stderr.contains("W0008") && plan.stderr.contains("/dev/full"),
        "{}",
        plan.stderr
    );
    assert!(
        plan.stdout.contains("1 planner call"),
        "the plan was made: {}",
        plan.stdout
    );
    let ledger = specc_llm::Ledger::open_existing(&dir.path().join(".specc/state.db")).expect("db");
    let rows = ledger.rows().expect("rows");
    assert_eq!(rows.len(), 1);
    assert_eq!(
        rows[0].outcome, "ok",
        "the paid answer is in the ledger as a success"
    );
}

/// An OpenAI-compatible server on 127.0.0.1 that answers every request with one planner
/// answer (a `submit_plan` call), for as long as the test runs.
fn live_planner() -> String {
    let plan = serde_json::json!({"decisions": [], "children": [
        {"key": "work", "kind": "work", "title": "Work", "covers_requirements": ["R-1"],
         "instructions": "Make it work.", "write_scope": ["src/lib.rs"]}]});
    let body = serde_json::json!({
        "id": "x", "model": "live-planner",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "submit_plan", "arguments": plan.to_string()}}]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20}
    })
    .to_string();
    loopback_server("200 OK", body)
}

/// A server on 127.0.0.1 answering every request, once read whole (by its Content-Length),
/// with `status` and the JSON `body`, for as long as the test runs; its `/v1` URL.
fn loopback_server(status: &'static str, body: String) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(mut sock) = sock else { return };
            let mut got = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = sock.read(&mut buf) {
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                if let Some(end) = text.find("\r\n\r\n") {
                    let len = text[..end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if got.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            let head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = sock.write_all(head.as_bytes());
            let _ = sock.write_all(body.as_bytes());
        }
    });
    url
}

#[test]
fn a_plan_recorded_live_replays() {
    let url = live_planner();
    // No max_tokens for the role: the default, in live and replay modes alike.
    let dir = project(&format!(
        "[providers.live]\nkind = \"openai-compatible\"\nbase_url = \"{url}\"\n\
         [roles.planner]\nprovider = \"live\"\nmodel = \"live-planner\"\n"
    ));
    let spec = dir.path().join("spec.md").display().to_string();
    let rec = dir.path().join("plan.jsonl").display().to_string();
    let live = specc(&["plan", &spec, "--emit", "tasks", "--record", &rec]);
    assert_eq!(live.code, 0, "{}", live.stderr);
    assert!(live.stdout.contains("work"), "{}", live.stdout);
    // A fresh state, so nothing comes from the planner cache: every answer from the file.
    std::fs::remove_dir_all(dir.path().join(".specc")).expect("state");
    let replayed = specc(&[
        "plan",
        &spec,
        "--emit",
        "tasks",
        "--provider",
        "replay",
        "--recording",
        &rec,
    ]);
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert_eq!(
        replayed.stdout, live.stdout,
        "the same plan, from the recording"
    );
}

/// A spec whose Alpha section carries an `awk test` block: it passes once `a.txt` exists.
const AWK_SPEC: &str = "# Pair\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n\
```awk test\nBEGIN { if (system(\"test -f a.txt\") != 0) exit 1 }\n```\n\n\
## Beta\n\n- [R-2] Beta MUST exist.\n";

#[test]
fn specc_toml_declares_runners_for_test_blocks_in_other_languages() {
    let dir = project("");
    std::fs::write(dir.path().join("spec.md"), AWK_SPEC).expect("spec");
    let spec = dir.path().join("spec.md").display().to_string();
    let unknown = specc(&["plan", &spec]);
    assert_eq!(unknown.code, 1);
    assert!(
        unknown.stderr.contains("E0105") && unknown.stderr.contains("`awk`"),
        "{}",
        unknown.stderr
    );
    std::fs::write(
        dir.path().join("specc.toml"),
        "[runners]\nawk = \"awk -f {file}\"\n",
    )
    .expect("toml");
    let known = specc(&["plan", &spec]);
    assert_eq!(known.code, 0, "{}", known.stderr);
    assert!(!known.stderr.contains("E0105"), "{}", known.stderr);
}

#[test]
fn a_declared_runner_gates_the_task_that_covers_its_section() {
    let toml = format!(
        "{}\n[runners]\nawk = \"awk -f {{file}}\"\n",
        crate::build::TOML
    );
    let dir = crate::build::project(&toml);
    std::fs::write(dir.path().join("spec.md"), AWK_SPEC).expect("spec");
    let write = crate::build::write;
    let done = crate::build::done;
    let b = crate::build::build_in(
        dir,
        crate::build::two_leaves(&[]),
        serde_json::json!({
            // The first attempt calls `done` before writing a.txt: the awk check fails.
            "a": [[[done()], [write("a.txt", "alpha\n")], [done()]]],
            "b": [[[write("b.txt", "beta\n")], [done()]]]
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    let checks: Vec<String> = b
        .steps()
        .into_iter()
        .filter(|(t, k, _)| t == "a" && k == "acceptance")
        .map(|(_, _, body)| body)
        .collect();
    let awk = |exit: i32| {
        format!(
            "\"name\":\"spec alpha check 1\",\"result\":{{\"exit\":{{\"kind\":\"code\",\"value\":{exit}}}"
        )
    };
    assert_eq!(checks.len(), 2, "{checks:?}");
    assert!(
        checks[0].contains(&awk(1)),
        "the awk check failed before a.txt existed: {checks:?}"
    );
    assert!(checks[1].contains(&awk(0)), "and passed after: {checks:?}");
    assert!(!b.err.contains("W0405"), "the runner is known: {}", b.err);
}

#[test]
fn a_refused_key_stops_planning_with_e0316_and_exit_2() {
    // A server on loopback that refuses every key.
    let url = loopback_server(
        "401 Unauthorized",
        "{\"error\":{\"message\":\"bad key\"}}".to_owned(),
    );
    let dir = project(&format!(
        "[providers.live]\nkind = \"openai-compatible\"\nbase_url = \"{url}\"\n\
         [roles.planner]\nprovider = \"live\"\nmodel = \"m\"\n"
    ));
    let spec = dir.path().join("spec.md").display().to_string();
    let plan = specc(&["plan", &spec, "--emit", "tasks"]);
    assert_eq!(plan.code, 2, "{}", plan.stderr);
    assert!(
        plan.stderr.contains("E0316") && plan.stderr.contains("check the provider's key"),
        "{}",
        plan.stderr
    );
    assert!(
        !plan.stderr.contains("E0309"),
        "not an invalid plan: {}",
        plan.stderr
    );
}
