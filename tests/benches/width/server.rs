//! The width benchmark's models: an OpenAI-compatible chat-completions server on 127.0.0.1
//! (HTTP/1.1, kept-alive connections, non-streamed answers), on a thread of its own. The
//! planner is answered at once with the whole plan; a worker's call after its latency (a
//! fixed function of the seed, the leaf and the step): `write` at its first step, `done`
//! after.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use specc_tests::plans::file as path;

use super::Setup;

/// What the server was asked, for one build.
pub(crate) struct Served {
    setup: Setup,
    plan: String,
    pub(crate) calls: AtomicUsize,
    /// Worker calls whose leaf could not be read from the request: their latency would not
    /// be the ideal's, so the run is void.
    pub(crate) unmatched: AtomicUsize,
    /// The first worker call's arrival and the last worker answer's departure.
    window: Mutex<(Option<Instant>, Option<Instant>)>,
}

impl Served {
    pub(crate) fn new(setup: Setup, plan: Value) -> Served {
        Served {
            setup,
            plan: plan.to_string(),
            calls: AtomicUsize::new(0),
            unmatched: AtomicUsize::new(0),
            window: Mutex::new((None, None)),
        }
    }

    pub(crate) fn reset(&self) {
        self.calls.store(0, Ordering::Relaxed);
        self.unmatched.store(0, Ordering::Relaxed);
        *self.window.lock().expect("window") = (None, None);
    }

    /// From the first worker call to the last answer.
    pub(crate) fn span(&self) -> std::time::Duration {
        match *self.window.lock().expect("window") {
            (Some(a), Some(b)) => b.duration_since(a),
            _ => std::time::Duration::ZERO,
        }
    }

    async fn answer(&self, body: &[u8]) -> Value {
        let request: Value = serde_json::from_slice(body).unwrap_or_default();
        let prompt = body.len() as u64 / 4;
        if request["model"] == "planner" {
            return completion(specc_plan::planner::TOOL, &self.plan, prompt);
        }
        let arrived = Instant::now();
        {
            let mut w = self.window.lock().expect("window");
            w.0.get_or_insert(arrived);
        }
        self.calls.fetch_add(1, Ordering::Relaxed);
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let step = messages.iter().filter(|m| m["role"] == "assistant").count();
        // The leaf, from its instructions: "Write f/g000/t-00042.txt."
        let leaf = messages
            .iter()
            .filter(|m| m["role"] == "user")
            .find_map(|m| {
                let text = m["content"].as_str()?;
                let from = text.find("Write f/g")?;
                let at = from + text[from..].find("/t-")?;
                text.get(at + 3..at + 8)?.parse::<usize>().ok()
            })
            .unwrap_or_else(|| {
                self.unmatched.fetch_add(1, Ordering::Relaxed);
                0
            });
        tokio::time::sleep(self.setup.latency(leaf, step.min(1))).await;
        let answer = if step == 0 {
            completion(
                "write",
                &json!({"path": path(leaf), "content": format!("leaf {leaf}\n")}).to_string(),
                prompt,
            )
        } else {
            completion("done", &json!({"summary": "written"}).to_string(), prompt)
        };
        self.window.lock().expect("window").1 = Some(Instant::now());
        answer
    }
}

/// A chat completion calling `tool` with `arguments` (JSON text).
fn completion(tool: &str, arguments: &str, prompt: u64) -> Value {
    json!({
        "id": "bench",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null,
            "tool_calls": [{"id": "call", "type": "function",
                "function": {"name": tool, "arguments": arguments}}]}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": arguments.len() / 4},
    })
}

/// Starts the server; its base URL (`http://127.0.0.1:PORT/v1`).
pub(crate) fn start(served: Arc<Served>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::Builder::new()
        .name("width-models".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                loop {
                    let Ok((sock, _)) = listener.accept().await else {
                        continue;
                    };
                    let served = served.clone();
                    tokio::spawn(async move { connection(sock, &served).await });
                }
            });
        })
        .expect("server thread");
    url
}

/// Serves one kept-alive connection until the client closes it.
async fn connection(mut sock: tokio::net::TcpStream, served: &Served) {
    let mut got: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        // The head, then the body by its Content-Length.
        let (end, len) = loop {
            if let Some(end) = find(&got, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                let len = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                break (end + 4, len);
            }
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        };
        while got.len() < end + len {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
        let body: Vec<u8> = got[end..end + len].to_vec();
        got.drain(..end + len);
        let answer = served.answer(&body).await.to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            answer.len()
        );
        if sock.write_all(head.as_bytes()).await.is_err()
            || sock.write_all(answer.as_bytes()).await.is_err()
        {
            return;
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
