//! Helpers for the fault tests: a client against a mock server, response bodies.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use specc_llm::{Client, Ledger, LlmConfig, Message, Request, RetryPolicy};

pub(crate) const SENTINEL: &str = "sk-sentinel-7f3a9c1e5d2b8a64";

/// A client whose `worker` role uses an `openai-compatible` (or `anthropic`) provider at
/// `url`, with the sentinel key, fast retries and a ledger in `dir`.
pub(crate) fn client(
    kind: &str,
    url: &str,
    dir: &std::path::Path,
    extra: &str,
) -> (Client, Arc<Ledger>) {
    let toml = format!(
        r#"
[providers.p]
kind = "{kind}"
base_url = "{url}"
api_key_env = "SPECC_TEST_KEY"
concurrency = 4
timeouts = {{ connect_secs = 2, response_secs = 2, idle_secs = 1 }}

[roles.worker]
provider = "p"
model = "m"
max_tokens = 100

[prices.m]
input = 1.0
cached_input = 0.1
output = 2.0
{extra}
"#
    );
    let config = LlmConfig::parse(&toml).expect("config");
    let env = |var: &str| (var == "SPECC_TEST_KEY").then(|| SENTINEL.to_owned());
    let ledger = Arc::new(Ledger::open(&dir.join("state.db")).expect("ledger"));
    let client = Client::from_config(config, &env, None)
        .with_ledger(ledger.clone(), "run-1")
        .with_retry(RetryPolicy {
            max_attempts: 4,
            base: Duration::from_millis(10),
            max: Duration::from_millis(50),
        });
    (client, ledger)
}

pub(crate) fn request(stream: bool) -> Request {
    let mut r = Request::new("m", vec![Message::user("Say hi.")], 100);
    r.stream = stream;
    r
}

pub(crate) fn chat_ok(text: &str) -> serde_json::Value {
    serde_json::json!({
        "id": "x", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 2}}
    })
}

/// An OpenAI-style SSE body: text in two deltas, usage, and (if `done`) the final `[DONE]`.
pub(crate) fn chat_stream(text: &str, done: bool) -> String {
    let (a, b) = text.split_at(text.len() / 2);
    let mut s = String::new();
    for part in [a, b] {
        s.push_str(&format!(
            "data: {}\n\n",
            serde_json::json!({"model": "m", "choices": [{"index": 0, "delta": {"content": part}, "finish_reason": null}]})
        ));
    }
    s.push_str(&format!(
        "data: {}\n\n",
        serde_json::json!({"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    ));
    s.push_str(&format!(
        "data: {}\n\n",
        serde_json::json!({"model": "m", "choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 5}})
    ));
    if done {
        s.push_str("data: [DONE]\n\n");
    }
    s
}
