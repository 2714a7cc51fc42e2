//! Streams and providers end to end on loopback: idle and broken streams (a raw TCP server
//! that stalls or hangs up), tool calls streamed in pieces, Anthropic's event stream with
//! cached-input usage, record and replay, and the sentinel key nowhere it must not be.

mod support;

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use specc_llm::{
    Anthropic, LlmError, Message, Provider, Recorder, Replay, Request, Role, Secret, Timeouts,
    Tool, ToolChoice,
};
use support::{SENTINEL, chat_stream, client, request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A server on 127.0.0.1 that answers each connection with the next of `scripts`: HTTP
/// headers for an event stream, then `body`, then (if `stall`) silence, else a hang-up.
async fn raw_server(scripts: Vec<(String, bool)>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        for (body, stall) in scripts {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut buf = vec![0u8; 65536];
            let _ = sock.read(&mut buf).await;
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
            let _ = sock.write_all(head.as_bytes()).await;
            let chunk = format!("{:x}\r\n{body}\r\n", body.len());
            let _ = sock.write_all(chunk.as_bytes()).await;
            if stall {
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    drop(sock);
                });
            } else {
                drop(sock); // hang up mid-stream: no final chunk
            }
        }
    });
    url
}

#[tokio::test]
async fn an_idle_stream_times_out_and_a_dropped_one_is_cut_both_retried() {
    let url = raw_server(vec![
        (chat_stream("stalls", false), true),
        (chat_stream("hangs up", false), false),
        (chat_stream("complete", true) + "0\r\n\r\n", false),
    ])
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client("openai-compatible", &format!("{url}/v1"), dir.path(), "");
    let r = c
        .call(Role::Worker, "t", request(true))
        .await
        .expect("third attempt completes");
    assert_eq!(r.text, "complete");
    let outcomes: Vec<String> = ledger
        .rows()
        .expect("rows")
        .into_iter()
        .map(|r| r.outcome)
        .collect();
    assert_eq!(outcomes, ["timeout", "stream_cut", "ok"]);
}

#[tokio::test]
async fn streamed_tool_calls_are_assembled_and_checked() {
    let s = MockServer::start().await;
    let ev = |v: serde_json::Value| format!("data: {v}\n\n");
    let body = [
        ev(serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "write_plan", "arguments": "{\"chil"}}]}}]})),
        ev(serde_json::json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "dren\": [1, 2]}"}}]}}]})),
        ev(serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 7, "completion_tokens": 9}})),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header(
            "authorization",
            format!("Bearer {SENTINEL}").as_str(),
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(body),
        )
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().expect("dir");
    let (c, _) = client(
        "openai-compatible",
        &format!("{}/v1", s.uri()),
        dir.path(),
        "",
    );
    let mut req = request(true);
    req.tools = vec![Tool {
        name: "write_plan".into(),
        description: "Write the plan.".into(),
        parameters: serde_json::json!({"type": "object"}),
    }]
    .into();
    req.tool_choice = ToolChoice::Named("write_plan".into());
    let r = c.call(Role::Worker, "t", req).await.expect("ok");
    assert_eq!(r.tool_calls.len(), 1);
    assert_eq!(
        r.tool_calls[0].arguments,
        serde_json::json!({"children": [1, 2]})
    );
    assert_eq!(r.usage.output, 9);
    let sent: serde_json::Value =
        serde_json::from_slice(&s.received_requests().await.expect("recorded")[0].body)
            .expect("json");
    assert_eq!(sent["tool_choice"]["function"]["name"], "write_plan");
    assert_eq!(sent["stream_options"]["include_usage"], true);
}

fn anthropic_stream(tool_json: &[&str], stop: bool) -> String {
    let ev = |name: &str, v: serde_json::Value| format!("event: {name}\ndata: {v}\n\n");
    let mut s = ev(
        "message_start",
        serde_json::json!({"type": "message_start", "message": {"model": "claude-x", "usage": {"input_tokens": 20, "cache_read_input_tokens": 100, "output_tokens": 1}}}),
    );
    s += &ev(
        "content_block_start",
        serde_json::json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    s += &ev(
        "content_block_delta",
        serde_json::json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Planning."}}),
    );
    s += &ev(
        "content_block_start",
        serde_json::json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "tu1", "name": "write_plan", "input": {}}}),
    );
    for part in tool_json {
        s += &ev(
            "content_block_delta",
            serde_json::json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": part}}),
        );
    }
    s += "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    s += &ev(
        "message_delta",
        serde_json::json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}),
    );
    if stop {
        s += &ev("message_stop", serde_json::json!({"type": "message_stop"}));
    }
    s
}

#[tokio::test]
async fn anthropic_streams_tool_use_with_cached_usage_and_retries_cut_streams() {
    let s = MockServer::start().await;
    let messages = || {
        Mock::given(method("POST"))
            .and(path("/v1/messages"))
            .and(header("x-api-key", SENTINEL))
            .and(header("anthropic-version", "2023-06-01"))
    };
    messages()
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(anthropic_stream(&["{\"a\": "], false)),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    messages()
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(anthropic_stream(&["{\"a\": ", "1}"], true)),
        )
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client("anthropic", &s.uri(), dir.path(), "");
    let mut req = request(true);
    req.messages.insert(0, Message::system("You plan."));
    req.tools = vec![specc_llm::Tool {
        name: "write_plan".to_owned(),
        description: "Write the plan.".to_owned(),
        parameters: serde_json::json!({"type": "object"}),
    }]
    .into();
    let r = c.call(Role::Worker, "t", req).await.expect("ok");
    assert_eq!(r.text, "Planning.");
    assert_eq!(r.tool_calls[0].name, "write_plan");
    assert_eq!(r.tool_calls[0].arguments, serde_json::json!({"a": 1}));
    assert_eq!(
        (r.usage.input, r.usage.cached_input, r.usage.output),
        (20, 100, 42)
    );
    let rows = ledger.rows().expect("rows");
    let outcomes: Vec<&str> = rows.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["stream_cut", "ok"]);
    // The cached input is in the ledger, priced at `cached_input` ($0.1/M against $1/M):
    // 20 × 1 + 100 × 0.1 + 42 × 2 = 114 millionths of a dollar.
    let ok = &rows[1];
    assert_eq!(ok.usage.cached_input, 100);
    assert!((ok.dollars - 114e-6).abs() < 1e-12, "{}", ok.dollars);
    let sent: serde_json::Value =
        serde_json::from_slice(&s.received_requests().await.expect("recorded")[0].body)
            .expect("json");
    // Cache breakpoints (design: llm.prompt-cache): the system prompt, the last tool, the
    // first and the last message.
    let ephemeral = serde_json::json!({"type": "ephemeral"});
    assert_eq!(sent["system"][0]["text"], "You plan.");
    assert_eq!(sent["system"][0]["cache_control"], ephemeral);
    let tools = sent["tools"].as_array().expect("tools");
    assert_eq!(tools.last().expect("a tool")["cache_control"], ephemeral);
    let messages = sent["messages"].as_array().expect("messages");
    for m in [messages.first(), messages.last()] {
        let blocks = m.expect("a message")["content"].as_array().expect("blocks");
        assert_eq!(
            blocks.last().expect("a block")["cache_control"],
            ephemeral,
            "{sent}"
        );
    }
}

#[tokio::test]
async fn anthropic_overloaded_is_retried_and_a_plain_answer_parses() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(
            ResponseTemplate::new(529)
                .set_body_string(r#"{"type":"error","error":{"type":"overloaded_error"}}"#),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "model": "claude-x", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": "Hello."}],
            "usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 0}
        })))
        .mount(&s)
        .await;
    let p = Anthropic::new(
        "a",
        s.uri(),
        Some(Secret::new(SENTINEL.into())),
        Timeouts::default(),
    )
    .expect("client");
    let first = p.complete(&request(false)).await.expect_err("529");
    assert!(first.is_retryable(), "{first:?}");
    let r = p.complete(&request(false)).await.expect("ok");
    assert_eq!(r.text, "Hello.");
}

#[tokio::test]
async fn record_then_replay_offline_and_a_miss_names_the_request() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(support::chat_ok("recorded answer")))
        .mount(&s)
        .await;
    let dir = tempfile::tempdir().expect("dir");
    let live = specc_llm::OpenAiCompatible::new(
        "live",
        format!("{}/v1", s.uri()),
        Some(Secret::new(SENTINEL.into())),
        Timeouts::default(),
    )
    .expect("client");
    let file = dir.path().join("rec.jsonl");
    let recorder = Recorder::new(Arc::new(live), &file);
    let req = request(false);
    recorder.complete(&req).await.expect("live");
    drop(s); // the server is gone: replay is offline

    let replay = Replay::open("replay", &file).expect("open");
    assert_eq!(replay.len(), 1);
    assert_eq!(
        replay.complete(&req).await.expect("hit").text,
        "recorded answer"
    );
    let other = Request::new("m", vec![Message::user("Something never recorded")], 100);
    match replay.complete(&other).await {
        Err(LlmError::ReplayMiss {
            fingerprint,
            request,
        }) => {
            assert_eq!(fingerprint, specc_llm::fingerprint(&other));
            assert!(request.contains("Something never recorded"), "{request}");
        }
        r => panic!("{r:?}"),
    }
    let recording = std::fs::read_to_string(&file).expect("read");
    assert!(!recording.contains(SENTINEL), "no key in recordings");
}

/// A `Write` the log subscriber appends to.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut v) = self.0.lock() {
            v.extend_from_slice(b);
        }
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn the_sentinel_key_is_never_in_logs_the_ledger_or_errors() {
    let s = MockServer::start().await;
    // A provider that echoes the key back in its error, as some do.
    let echo = format!(r#"{{"error":{{"message":"Incorrect API key provided: {SENTINEL}"}}}}"#);
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_string(echo.clone()))
        .up_to_n_times(1)
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_string(echo))
        .up_to_n_times(1)
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(support::chat_ok("ok")))
        .mount(&s)
        .await;

    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client(
        "openai-compatible",
        &format!("{}/v1", s.uri()),
        dir.path(),
        "",
    );
    let e = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect_err("401");
    let shown = format!("{e} {e:?}");
    c.call(Role::Worker, "t", request(false))
        .await
        .expect("500 then ok");
    drop(ledger);
    drop(c);

    let logged = String::from_utf8_lossy(&logs.0.lock().expect("lock")).into_owned();
    assert!(logged.contains("model call"), "logging is on: {logged}");
    assert!(
        !logged.contains(SENTINEL) && !logged.contains(&SENTINEL[..16]),
        "{logged}"
    );
    assert!(!shown.contains(SENTINEL), "{shown}");
    let mut db = Vec::new();
    for entry in std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(Result::ok)
    {
        db.extend(std::fs::read(entry.path()).unwrap_or_default());
    }
    assert!(!db.is_empty());
    assert!(
        !String::from_utf8_lossy(&db).contains(SENTINEL),
        "no key in the state database"
    );
    let _ = std::io::stdout().flush();
}
