//! Responses that never end or end too soon, from a raw server on 127.0.0.1: a stream of
//! keep-alives only (the total deadline ends it), a stream that never stops growing (the size
//! cap ends it), and a 200 whose JSON body is cut with no `Content-Length` to say so (a cut,
//! not a protocol error). Each is a fault: retried, and the retry's answer is used.

mod support;

use std::time::Duration;

use specc_llm::{Client, Ledger, LlmConfig, RetryPolicy, Role};
use support::{chat_ok, chat_stream, request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What one connection gets.
#[derive(Clone)]
enum Reply {
    /// An event stream of comments, every 50 ms, until the client hangs up.
    KeepAlives,
    /// An event stream of 1 MiB text deltas without end.
    Endless,
    /// A JSON body cut short, no `Content-Length`, then a hang-up.
    CutJson(String),
    /// A whole JSON body.
    Json(String),
    /// A whole event stream.
    Stream(String),
}

async fn write_chunk(sock: &mut TcpStream, body: &[u8]) -> std::io::Result<()> {
    sock.write_all(format!("{:x}\r\n", body.len()).as_bytes())
        .await?;
    sock.write_all(body).await?;
    sock.write_all(b"\r\n").await
}

async fn serve(mut sock: TcpStream, reply: Reply) -> std::io::Result<()> {
    let mut buf = vec![0u8; 65536];
    let _ = sock.read(&mut buf).await?;
    let stream_head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    match reply {
        Reply::KeepAlives => {
            sock.write_all(stream_head.as_bytes()).await?;
            loop {
                write_chunk(&mut sock, b": keep-alive\n\n").await?;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Reply::Endless => {
            sock.write_all(stream_head.as_bytes()).await?;
            let delta = serde_json::json!({"model": "m", "choices": [{"index": 0,
                "delta": {"content": "x".repeat(1 << 20)}, "finish_reason": null}]});
            let event = format!("data: {delta}\n\n");
            loop {
                write_chunk(&mut sock, event.as_bytes()).await?;
            }
        }
        Reply::CutJson(body) => {
            let head =
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await
        }
        Reply::Json(body) => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(body.as_bytes()).await
        }
        Reply::Stream(body) => {
            sock.write_all(stream_head.as_bytes()).await?;
            write_chunk(&mut sock, body.as_bytes()).await?;
            sock.write_all(b"0\r\n\r\n").await
        }
    }
}

/// A server answering its connections with `replies` in order.
async fn server(replies: Vec<Reply>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        for reply in replies {
            let Ok((sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(serve(sock, reply));
        }
    });
    url
}

/// A client of the server at `url` with a total deadline of `total` seconds, and its ledger.
fn client(url: &str, dir: &std::path::Path, total: u32) -> (Client, std::sync::Arc<Ledger>) {
    let toml = format!(
        "[providers.p]\nkind = \"openai-compatible\"\nbase_url = \"{url}/v1\"\n\
         timeouts = {{ connect_secs = 2, response_secs = 5, idle_secs = 5, total_secs = {total} }}\n\
         [roles.worker]\nprovider = \"p\"\nmodel = \"m\"\nmax_tokens = 100\n"
    );
    let config = LlmConfig::parse(&toml).expect("config");
    let ledger = std::sync::Arc::new(Ledger::open(&dir.join("state.db")).expect("ledger"));
    let client = Client::from_config(config, &|_| None, None)
        .with_ledger(ledger.clone(), "run")
        .with_retry(RetryPolicy {
            max_attempts: 3,
            base: Duration::from_millis(10),
            max: Duration::from_millis(20),
        });
    (client, ledger)
}

fn outcomes(ledger: &Ledger) -> Vec<String> {
    ledger
        .rows()
        .expect("rows")
        .into_iter()
        .map(|r| r.outcome)
        .collect()
}

#[tokio::test]
async fn a_stream_of_keep_alives_only_ends_at_its_total_deadline_and_is_retried() {
    let url = server(vec![
        Reply::KeepAlives,
        Reply::Stream(chat_stream("after the wait", true)),
    ])
    .await;
    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client(&url, dir.path(), 1);
    let r = c
        .call(Role::Worker, "t", request(true))
        .await
        .expect("answered");
    assert_eq!(r.text, "after the wait");
    assert_eq!(outcomes(&ledger), ["timeout", "ok"]);
}

#[tokio::test]
async fn a_stream_that_never_stops_growing_is_abandoned_at_the_cap_and_retried() {
    let url = server(vec![
        Reply::Endless,
        Reply::Stream(chat_stream("small", true)),
    ])
    .await;
    let dir = tempfile::tempdir().expect("dir");
    // Room to read 64 MiB on a busy machine: the cap, not the deadline, must end it.
    let (c, ledger) = client(&url, dir.path(), 120);
    let r = c
        .call(Role::Worker, "t", request(true))
        .await
        .expect("answered");
    assert_eq!(r.text, "small");
    assert_eq!(outcomes(&ledger), ["oversize", "ok"]);
}

#[tokio::test]
async fn a_json_body_cut_without_a_content_length_is_a_cut_and_retried() {
    let whole = chat_ok("whole").to_string();
    let cut = whole[..whole.len() / 2].to_owned();
    let url = server(vec![Reply::CutJson(cut), Reply::Json(whole)]).await;
    let dir = tempfile::tempdir().expect("dir");
    let (c, ledger) = client(&url, dir.path(), 120);
    let r = c
        .call(Role::Worker, "t", request(false))
        .await
        .expect("answered");
    assert_eq!(r.text, "whole");
    assert_eq!(outcomes(&ledger), ["stream_cut", "ok"]);
}
