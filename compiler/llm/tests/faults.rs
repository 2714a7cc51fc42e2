//! The fault matrix, against wiremock on 127.0.0.1: what is retried, how often, how long it
//! waits, what is parked, what is never retried, and what the ledger records.

mod support;

use std::time::{Duration, Instant};

use specc_llm::{LlmError, Role};
use support::{chat_ok, chat_stream, client, request};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn server() -> MockServer {
    MockServer::start().await
}

fn chat() -> wiremock::MockBuilder {
    Mock::given(method("POST")).and(path("/v1/chat/completions"))
}

/// A client of the `openai-compatible` provider at the mock server `s`, with its ledger; the
/// directory holding the ledger lives as long as the first element.
fn mock_client(
    s: &MockServer,
    extra: &str,
) -> (
    tempfile::TempDir,
    specc_llm::Client,
    std::sync::Arc<specc_llm::Ledger>,
) {
    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client(
        "openai-compatible",
        &format!("{}/v1", s.uri()),
        dir.path(),
        extra,
    );
    (dir, c, ledger)
}

async fn requests(s: &MockServer) -> usize {
    s.received_requests().await.map_or(0, |r| r.len())
}

#[tokio::test]
async fn rate_limited_with_retry_after_2_is_retried_once_at_least_2_s_later() {
    let s = server().await;
    chat()
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "2")
                .set_body_string("rate limited"),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    chat()
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_ok("hi")))
        .mount(&s)
        .await;
    let (_dir, c, ledger) = mock_client(&s, "");
    let started = Instant::now();
    let r = c
        .call(Role::Worker, "t1", request(false))
        .await
        .expect("succeeds on the retry");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.text, "hi");
    assert_eq!(requests(&s).await, 2, "exactly one retry");
    let rows = ledger.rows().expect("rows");
    let outcomes: Vec<&str> = rows.iter().map(|r| r.outcome.as_str()).collect();
    assert_eq!(outcomes, ["retryable_status", "ok"]);
    assert_eq!(
        (
            rows[1].usage.input,
            rows[1].usage.cached_input,
            rows[1].usage.output
        ),
        (10, 2, 5)
    );
    let dollars = (10.0 * 1.0 + 2.0 * 0.1 + 5.0 * 2.0) / 1e6;
    assert!(
        (rows[1].dollars - dollars).abs() < 1e-12,
        "{}",
        rows[1].dollars
    );
    assert_eq!(
        ledger.reservations().expect("n"),
        0,
        "the reservation is settled"
    );
}

#[tokio::test]
async fn retry_after_600_parks_the_call_without_retrying() {
    let s = server().await;
    chat()
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "600"))
        .mount(&s)
        .await;
    let (_dir, c, _) = mock_client(&s, "");
    let e = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect_err("parked");
    assert_eq!(
        e,
        LlmError::Parked {
            retry_after: Duration::from_secs(600)
        }
    );
    assert_eq!(requests(&s).await, 1);
}

#[tokio::test]
async fn retry_after_ms_is_honoured() {
    let s = server().await;
    chat()
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after-ms", "300"))
        .up_to_n_times(1)
        .mount(&s)
        .await;
    chat()
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_ok("ok")))
        .mount(&s)
        .await;
    let (_dir, c, _) = mock_client(&s, "");
    let started = Instant::now();
    c.call(Role::Worker, "t", request(false)).await.expect("ok");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(requests(&s).await, 2);
}

#[tokio::test]
async fn statuses_that_may_pass_later_are_retried() {
    for status in [408u16, 409, 500, 502, 503, 529] {
        let s = server().await;
        chat()
            .respond_with(ResponseTemplate::new(status))
            .up_to_n_times(2)
            .mount(&s)
            .await;
        chat()
            .respond_with(ResponseTemplate::new(200).set_body_json(chat_ok("ok")))
            .mount(&s)
            .await;
        let (_dir, c, _) = mock_client(&s, "");
        c.call(Role::Worker, "t", request(false))
            .await
            .unwrap_or_else(|e| panic!("{status}: {e}"));
        assert_eq!(requests(&s).await, 3, "{status}: two retries");
    }
}

#[tokio::test]
async fn retries_stop_after_the_last_attempt() {
    let s = server().await;
    chat()
        .respond_with(ResponseTemplate::new(500))
        .mount(&s)
        .await;
    let (_dir, c, ledger) = mock_client(&s, "");
    let e = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect_err("fails");
    assert!(
        matches!(e, LlmError::Retryable { status: 500, .. }),
        "{e:?}"
    );
    assert_eq!(requests(&s).await, 4, "max_attempts = 4");
    assert_eq!(ledger.rows().expect("rows").len(), 4, "one row per attempt");
}

#[tokio::test]
async fn faults_that_retrying_cannot_fix_are_sent_once() {
    type Expect = fn(&LlmError) -> bool;
    let cases: [(u16, &str, Expect); 6] = [
        (401, "bad key", |e| {
            matches!(e, LlmError::Auth { status: 401 })
        }),
        (403, "forbidden", |e| {
            matches!(e, LlmError::Auth { status: 403 })
        }),
        (
            400,
            r#"{"error":{"code":"context_length_exceeded","message":"maximum context length is 8192 tokens"}}"#,
            |e| matches!(e, LlmError::ContextLength(_)),
        ),
        (400, r#"{"error":{"message":"invalid field"}}"#, |e| {
            matches!(e, LlmError::Rejected { status: 400, .. })
        }),
        (
            429,
            r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#,
            |e| matches!(e, LlmError::Quota(_)),
        ),
        (
            429,
            r#"{"error":{"message":"monthly spend limit reached"}}"#,
            |e| matches!(e, LlmError::Quota(_)),
        ),
    ];
    for (status, body, expected) in cases {
        let s = server().await;
        chat()
            .respond_with(ResponseTemplate::new(status).set_body_string(body))
            .mount(&s)
            .await;
        let (_dir, c, _) = mock_client(&s, "");
        let e = c
            .call(Role::Worker, "t", request(false))
            .await
            .expect_err("fails");
        assert!(expected(&e), "{status} {body}: {e:?}");
        assert_eq!(
            requests(&s).await,
            1,
            "{status} {body}: exactly one request"
        );
    }
}

#[tokio::test]
async fn a_slow_response_times_out_and_is_retried() {
    let s = server().await;
    chat()
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_ok("late"))
                .set_delay(Duration::from_secs(3)),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    chat()
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_ok("ok")))
        .mount(&s)
        .await;
    let (_dir, c, ledger) = mock_client(&s, "");
    let r = c.call(Role::Worker, "t", request(false)).await.expect("ok");
    assert_eq!(r.text, "ok");
    assert_eq!(ledger.rows().expect("rows")[0].outcome, "timeout");
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client(
        "openai-compatible",
        &format!("http://127.0.0.1:{port}/v1"),
        dir.path(),
        "",
    );
    let e = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect_err("nothing listens");
    assert!(matches!(e, LlmError::Connect(_)), "{e:?}");
    assert_eq!(ledger.rows().expect("rows").len(), 4);
}

#[tokio::test]
async fn a_stream_cut_before_its_final_event_is_retried_and_nothing_partial_is_kept() {
    let s = server().await;
    chat()
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(chat_stream("partial answer", false)),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    chat()
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(chat_stream("whole answer", true)),
        )
        .mount(&s)
        .await;
    let (_dir, c, ledger) = mock_client(&s, "");
    let r = c.call(Role::Worker, "t", request(true)).await.expect("ok");
    assert_eq!(r.text, "whole answer");
    assert_eq!(requests(&s).await, 2);
    let rows = ledger.rows().expect("rows");
    assert_eq!(rows[0].outcome, "stream_cut");
    assert_eq!(
        (rows[0].usage.output, rows[0].dollars),
        (0, 0.0),
        "nothing partial is recorded"
    );
    assert_eq!(rows[1].usage.output, 5);
}

#[tokio::test]
async fn an_sse_error_event_is_retried() {
    let s = server().await;
    let error = "data: {\"error\":{\"message\":\"overloaded\"}}\n\n";
    chat()
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(error),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    chat()
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/event-stream")
                .set_body_string(chat_stream("fine", true)),
        )
        .mount(&s)
        .await;
    let (_dir, c, ledger) = mock_client(&s, "");
    assert_eq!(
        c.call(Role::Worker, "t", request(true))
            .await
            .expect("ok")
            .text,
        "fine"
    );
    assert_eq!(ledger.rows().expect("rows")[0].outcome, "stream_error");
}

#[tokio::test]
async fn malformed_tool_arguments_are_a_typed_error_never_a_call() {
    let s = server().await;
    let body = serde_json::json!({
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "write_plan", "arguments": "{\"children\": [1, 2"}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4}
    });
    chat()
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&s)
        .await;
    let (_dir, c, _) = mock_client(&s, "");
    let e = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect_err("typed error");
    match e {
        LlmError::MalformedToolCall { name, .. } => assert_eq!(name, "write_plan"),
        other => panic!("{other:?}"),
    }
    assert_eq!(requests(&s).await, 1, "not retried");
}

#[tokio::test]
async fn the_budget_cap_refuses_a_call_before_it_is_sent() {
    let s = server().await;
    chat()
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_ok("ok")))
        .mount(&s)
        .await;
    // max_tokens 100 at $2/M is $0.0002 of output: a cap below that refuses at once.
    let (_dir, c, ledger) = mock_client(&s, "[budget]\ndollars = 0.0001\n");
    let e = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect_err("over budget");
    assert!(matches!(e, LlmError::Budget { .. }), "{e:?}");
    assert_eq!(requests(&s).await, 0);
    assert_eq!(ledger.reservations().expect("n"), 0);
}

#[tokio::test]
async fn reservations_hold_across_concurrent_calls_and_restarts() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("state.db");
    let a = specc_llm::Ledger::open(&path).expect("open");
    // Two reservations of 0.6 against a cap of 1.0: the second is refused while the first
    // is open, even from another connection (another process, or after a restart).
    let first = a.reserve("run", 0.6, Some(1.0)).expect("first fits");
    let b = specc_llm::Ledger::open(&path).expect("second connection");
    assert!(matches!(
        b.reserve("run", 0.6, Some(1.0)),
        Err(LlmError::Budget { .. })
    ));
    // A process that ends with a call out keeps that call's worst case reserved.
    let _out = first;
    drop(a);
    let c = specc_llm::Ledger::open(&path).expect("reopened");
    assert!(
        matches!(
            c.reserve("run", 0.6, Some(1.0)),
            Err(LlmError::Budget { .. })
        ),
        "survives a restart"
    );
    // Released, it is room again: for its own process at once, for the others once that
    // process gives its lease back (design: llm.budget-lease).
    let d = specc_llm::Ledger::open(&dir.path().join("other.db")).expect("other");
    let r = d.reserve("run", 0.6, Some(1.0)).expect("fits");
    let e = specc_llm::Ledger::open(&dir.path().join("other.db")).expect("other again");
    assert!(e.reserve("run", 0.6, Some(1.0)).is_err());
    d.release(r).expect("release");
    let mine = d
        .reserve("run", 0.6, Some(1.0))
        .expect("its own room again");
    d.release(mine).expect("release");
    assert!(e.reserve("run", 0.6, Some(1.0)).is_err(), "still d's lease");
    drop(d);
    e.reserve("run", 0.6, Some(1.0))
        .expect("fits once released");
}

#[tokio::test]
async fn a_call_dropped_by_its_caller_releases_its_reservation() {
    let s = server().await;
    chat()
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_ok("late"))
                .set_delay(Duration::from_secs(1)),
        )
        .mount(&s)
        .await;
    let (dir, c, ledger) = mock_client(&s, "[budget]\ndollars = 1.0\n");
    let call = c.call(Role::Worker, "t", request(false));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err(),
        "the caller gave up"
    );
    assert_eq!(
        ledger.reservations().expect("n"),
        0,
        "nothing stays reserved"
    );
    // And after failures, too.
    let (c, ledger) = client(
        "openai-compatible",
        "http://127.0.0.1:9/v1",
        dir.path(),
        "[budget]\ndollars = 1.0\n",
    );
    c.call(Role::Worker, "t", request(false))
        .await
        .expect_err("nothing listens on port 9");
    assert_eq!(ledger.reservations().expect("n"), 0);
}

#[test]
fn retry_after_headers_in_every_form() {
    use std::time::SystemTime;
    let wait = |name: &str, value: &str| {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).expect("name"),
            value.parse().expect("value"),
        );
        specc_llm::retry_after(&h)
    };
    assert_eq!(wait("retry-after", "2"), Some(Duration::from_secs(2)));
    assert_eq!(
        wait("retry-after-ms", "250"),
        Some(Duration::from_millis(250))
    );
    assert_eq!(
        wait("retry-after", "1e400"),
        None,
        "infinite is nonsense, not a panic"
    );
    assert_eq!(wait("retry-after", "-5"), None);
    let later = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(300));
    let parsed = wait("retry-after", &later).expect("an HTTP date");
    assert!(
        parsed > specc_llm::MAX_RETRY_AFTER,
        "{parsed:?}: a date five minutes out parks"
    );
}
