//! Sends finished spans to the OTLP/HTTP endpoint as the protocol's JSON encoding
//! (`application/json`, ids in hex), in batches, from a thread of its own; the process
//! waits for the last batch at its end. A collector that cannot be reached is said once on
//! standard error; the build is never held up or failed by it.
//! design: runtime.traces

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value as Json, json};

use super::span::{Finished, Value};

/// Most spans in one request.
const BATCH: usize = 512;

/// How long a batch waits for more spans before it goes.
const LINGER: Duration = Duration::from_millis(500);

/// Where traces go and with what headers.
pub(super) struct Endpoint {
    url: String,
    headers: Vec<(String, String)>,
    service: String,
}

/// The endpoint the environment names: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
/// `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`; headers from the matching `…_HEADERS`
/// (`key=value,…`); the service from `OTEL_SERVICE_NAME` [default: specc].
pub(super) fn endpoint() -> Option<Endpoint> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let url = match var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        Some(u) => u,
        None => format!(
            "{}/v1/traces",
            var("OTEL_EXPORTER_OTLP_ENDPOINT")?.trim_end_matches('/')
        ),
    };
    let headers = var("OTEL_EXPORTER_OTLP_TRACES_HEADERS")
        .or_else(|| var("OTEL_EXPORTER_OTLP_HEADERS"))
        .map(|h| {
            h.split(',')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let service = var("OTEL_SERVICE_NAME").unwrap_or_else(|| "specc".to_owned());
    Some(Endpoint {
        url,
        headers,
        service,
    })
}

/// What the layer and the process's end send the shipping thread.
pub(crate) enum Message {
    Span(Finished),
    /// Ship what is left and stop: the process is ending.
    Finish,
}

/// The thread that ships spans. [`Exporter::finish`] sends what is left and waits.
pub struct Exporter {
    tx: mpsc::Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

impl Exporter {
    pub(super) fn start(
        endpoint: Endpoint,
        tx: mpsc::Sender<Message>,
        rx: mpsc::Receiver<Message>,
    ) -> Exporter {
        let thread = std::thread::Builder::new()
            .name("specc-otlp".into())
            .spawn(move || ship(endpoint, rx))
            .ok();
        Exporter { tx, thread }
    }

    /// Ships every span closed so far and waits for it (each request bounded by its
    /// timeout). Spans that close later are not exported.
    pub fn finish(mut self) {
        let _ = self.tx.send(Message::Finish);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn ship(endpoint: Endpoint, rx: mpsc::Receiver<Message>) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    let mut told = false;
    let mut open = true;
    while open {
        let mut batch = Vec::new();
        // Blocks for the first span, then lingers a little for more.
        match rx.recv() {
            Ok(Message::Span(s)) => batch.push(s),
            Ok(Message::Finish) | Err(_) => break,
        }
        // Lingers from the first span, not from each: a steady stream still ships.
        let deadline = std::time::Instant::now() + LINGER;
        while batch.len() < BATCH {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(Message::Span(s)) => batch.push(s),
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Ok(Message::Finish) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let body = encode(&endpoint.service, &batch).to_string();
        let mut req = client
            .post(&endpoint.url)
            .header("content-type", "application/json")
            .body(body);
        for (k, v) in &endpoint.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if told {
            // A collector that failed once is not waited for again (at exit, each request
            // could take its whole timeout).
            continue;
        }
        let sent = rt.block_on(async { req.send().await.and_then(|r| r.error_for_status()) });
        if let Err(e) = sent {
            told = true;
            tracing::warn!(url = %endpoint.url, error = %e, "the trace could not be sent; no more of it will be");
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// OTLP's JSON encoding of a batch: one resource (the service), one scope (specc).
pub(crate) fn encode(service: &str, spans: &[Finished]) -> Json {
    let spans: Vec<Json> = spans.iter().map(span).collect();
    json!({"resourceSpans": [{
        "resource": {"attributes": [attribute("service.name", &Value::Str(service.to_owned()))]},
        "scopeSpans": [{
            "scope": {"name": "specc", "version": env!("CARGO_PKG_VERSION")},
            "spans": spans,
        }],
    }]})
}

fn span(s: &Finished) -> Json {
    let failed = s.attributes.iter().any(|(k, v)| {
        (k == "specc.failed" && *v == Value::Bool(true))
            || (k == "specc.outcome"
                && matches!(v, Value::Str(o) if !matches!(o.as_str(), "ok" | "landed" | "ok_estimated_usage")))
    });
    let mut out = json!({
        "traceId": hex(&s.trace),
        "spanId": hex(&s.id),
        "name": s.name,
        // SPAN_KIND_INTERNAL; a model call is a client of its provider.
        "kind": if s.name == "model call" { 3 } else { 1 },
        "startTimeUnixNano": s.start_ns.to_string(),
        "endTimeUnixNano": s.end_ns.to_string(),
        "attributes": s.attributes.iter().map(|(k, v)| attribute(k, v)).collect::<Vec<_>>(),
        // STATUS_CODE_ERROR when it did not end well, else unset.
        "status": {"code": if failed { 2 } else { 0 }},
    });
    if let Some(p) = s.parent {
        out["parentSpanId"] = json!(hex(&p));
    }
    out
}

fn attribute(key: &str, v: &Value) -> Json {
    let value = match v {
        Value::Str(s) => json!({"stringValue": s}),
        // int64 is a string in OTLP's JSON.
        Value::Int(i) => json!({"intValue": i.to_string()}),
        Value::Float(f) => json!({"doubleValue": f}),
        Value::Bool(b) => json!({"boolValue": b}),
    };
    json!({"key": key, "value": value})
}
