//! Against a real OpenAI-compatible server at `SPECC_REAL_MODEL_URL` (scripts/real-model-smoke.sh
//! starts llama-cpp-python with SmolLM2-135M): a plain call, a streamed call and a tool call
//! forced by name, each recorded in the ledger. Skipped, with the reason printed, when the
//! variable is unset.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::sync::Arc;

use specc_llm::{Client, Ledger, LlmConfig, Message, Request, Role, Tool, ToolChoice};

#[tokio::test]
async fn a_real_server_answers_plain_streamed_and_forced_tool_calls() {
    let Ok(url) = std::env::var("SPECC_REAL_MODEL_URL") else {
        eprintln!("skipped: SPECC_REAL_MODEL_URL is not set (scripts/real-model-smoke.sh sets it)");
        return;
    };
    let toml = format!(
        r#"
[providers.local]
kind = "openai-compatible"
base_url = "{url}"
concurrency = 1
timeouts = {{ response_secs = 300, idle_secs = 120 }}

[roles.planner]
provider = "local"
model = "smollm2"
max_tokens = 256

[roles.worker]
provider = "local"
model = "smollm2"
max_tokens = 32

[prices.smollm2]
input = 0.10
output = 0.20
"#
    );
    let dir = tempfile::tempdir().expect("dir");
    let ledger = Arc::new(Ledger::open(&dir.path().join("state.db")).expect("ledger"));
    let client = Client::from_config(LlmConfig::parse(&toml).expect("config"), &|_| None, None)
        .with_ledger(ledger.clone(), "smoke");
    // Deterministic: temperature 0 and a seed, and room enough that a tool call's arguments
    // are not cut by max_tokens.
    let ask = |text: &str| {
        let mut r = Request::new("smollm2", vec![Message::user(text)], 32);
        r.temperature = Some(0.0);
        r.seed = Some(7);
        r
    };

    let plain = client
        .call(Role::Worker, "plain", ask("Say hello."))
        .await
        .expect("plain call");
    println!(
        "plain:    {:?} ({:?}, finish {:?})",
        plain.text, plain.usage, plain.finish
    );
    assert!(!plain.text.is_empty() && plain.usage.output > 0);

    let mut streamed = ask("Count to three.");
    streamed.stream = true;
    let streamed = client
        .call(Role::Worker, "streamed", streamed)
        .await
        .expect("streamed call");
    println!(
        "streamed: {:?} ({:?}, finish {:?})",
        streamed.text, streamed.usage, streamed.finish
    );
    assert!(!streamed.text.is_empty());

    let mut tool = Request::new("smollm2", vec![Message::user("Record the answer 42.")], 256);
    tool.temperature = Some(0.0);
    tool.seed = Some(7);
    tool.tools = vec![Tool {
        name: "record_answer".into(),
        description: "Record an answer.".into(),
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"]
        }),
    }]
    .into();
    tool.tool_choice = ToolChoice::Named("record_answer".into());
    let called = client
        .call(Role::Planner, "tool", tool)
        .await
        .expect("tool call");
    println!("tool:     {:?} ({:?})", called.tool_calls, called.usage);
    assert_eq!(called.tool_calls.len(), 1);
    assert_eq!(called.tool_calls[0].name, "record_answer");
    assert!(called.tool_calls[0].arguments.is_object());

    let rows = ledger.rows().expect("rows");
    for r in &rows {
        println!(
            "ledger:   run={} task={} role={} provider={} model={} input={} cached={} output={} dollars={:.8} latency={}ms attempt={} outcome={}",
            r.run,
            r.task,
            r.role,
            r.provider,
            r.model,
            r.usage.input,
            r.usage.cached_input,
            r.usage.output,
            r.dollars,
            r.latency.as_millis(),
            r.attempt,
            r.outcome
        );
    }
    let ok: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r.outcome.starts_with("ok"))
        .map(|r| (r.task.as_str(), r.role.as_str()))
        .collect();
    assert_eq!(
        ok,
        [
            ("plain", "worker"),
            ("streamed", "worker"),
            ("tool", "planner")
        ]
    );
    assert!(
        rows.iter()
            .all(|r| r.provider == "local" && r.model == "smollm2")
    );
}
