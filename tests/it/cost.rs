//! `specc cost` on a state database filled by a recorded run: the replay provider answers
//! every call from `fixtures/llm/recorded-run/recording.jsonl`, offline, and the ledger rows
//! it leaves are summarised by role and by model.

use std::sync::Arc;

use specc_llm::{Client, Ledger, LlmConfig, Message, Recorder, Request, Role, Scripted, Usage};

use crate::support::{root, specc};

/// The calls of the recorded run: role, task, prompt, and (for recording) answer and usage.
const CALLS: &[(Role, &str, &str, &str, Usage)] = &[
    (
        Role::Planner,
        "root",
        "Plan the key-value store.",
        "plan: storage, network, replication",
        Usage {
            input: 9_000,
            cached_input: 0,
            output: 1_800,
        },
    ),
    (
        Role::Planner,
        "storage",
        "Plan storage.",
        "plan: pages, log",
        Usage {
            input: 4_000,
            cached_input: 6_000,
            output: 900,
        },
    ),
    (
        Role::Worker,
        "storage/pages",
        "Implement fixed-size pages.",
        "done: pages.rs",
        Usage {
            input: 12_000,
            cached_input: 30_000,
            output: 5_000,
        },
    ),
    (
        Role::Worker,
        "storage/log",
        "Implement the write-ahead log.",
        "done: wal.rs",
        Usage {
            input: 15_000,
            cached_input: 20_000,
            output: 7_000,
        },
    ),
    (
        Role::Worker,
        "network/framing",
        "Implement framing.",
        "done: frame.rs",
        Usage {
            input: 8_000,
            cached_input: 0,
            output: 3_000,
        },
    ),
    (
        Role::Reviewer,
        "storage/log",
        "Review the write-ahead log.",
        "approved",
        Usage {
            input: 6_000,
            cached_input: 0,
            output: 400,
        },
    ),
];

fn config() -> LlmConfig {
    LlmConfig::load(&root().join("fixtures/llm/recorded-run/specc.toml")).expect("valid")
}

fn request(role: Role, prompt: &str) -> Request {
    let model = config()
        .role(role)
        .map(|r| r.model.clone())
        .unwrap_or_default();
    let max = config().role(role).map_or(0, |r| r.max_tokens);
    Request::new(
        model,
        vec![
            Message::system("You are specc's agent."),
            Message::user(prompt),
        ],
        max,
    )
}

#[tokio::test]
async fn specc_cost_summarises_a_recorded_run_by_role_and_model() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("state.db");
    let ledger = Arc::new(Ledger::open(&db).expect("ledger"));
    let client =
        Client::from_config(config(), &|_| None, None).with_ledger(ledger.clone(), "recorded");
    for (role, task, prompt, answer, _) in CALLS {
        let r = client
            .call(*role, task, request(*role, prompt))
            .await
            .expect("replayed");
        assert_eq!(r.text, *answer);
    }
    drop(client);
    drop(ledger);

    let state = db.display().to_string();
    let text = specc(&["cost", "--state", &state]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    insta::assert_snapshot!("cost-text", text.stdout);
    let json = specc(&["cost", "--state", &state, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(v["total"]["calls"], 6);
    let planner = v["by_role"]
        .as_array()
        .expect("roles")
        .iter()
        .find(|l| l["name"] == "planner")
        .expect("planner")
        .clone();
    // 9,000 + 4,000 input at $15/M, 6,000 cached at $1.5/M, 2,700 output at $75/M.
    let dollars = (13_000.0 * 15.0 + 6_000.0 * 1.5 + 2_700.0 * 75.0) / 1e6;
    assert!(
        (planner["dollars"].as_f64().unwrap_or(0.0) - dollars).abs() < 1e-9,
        "{planner}"
    );
    insta::assert_snapshot!("cost-json", json.stdout);
}

#[test]
fn specc_cost_without_a_database_is_a_usage_error() {
    let out = specc(&["cost", "--state", "/nonexistent/state.db"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no state database"), "{}", out.stderr);
}

/// Regenerates the recording: `cargo test -p specc-tests -- --ignored write_recorded_run`.
#[tokio::test]
#[ignore = "writes fixtures/llm/recorded-run/recording.jsonl"]
async fn write_recorded_run() {
    let path = root().join("fixtures/llm/recorded-run/recording.jsonl");
    let _ = std::fs::remove_file(&path);
    for (role, _, prompt, answer, usage) in CALLS {
        let scripted = Arc::new(Scripted::new(
            "recorded",
            vec![Ok(Scripted::text(answer, *usage))],
        ));
        let recorder = Recorder::new(scripted, &path);
        specc_llm::Provider::complete(&recorder, &request(*role, prompt))
            .await
            .expect("recorded");
    }
}
