//! The HTTP side shared by the real providers: timeouts, status classification, reading a
//! body or an event stream. One call here is one attempt; retrying is `retry.rs`'s job.
//! design: llm.faults

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::HeaderMap;

use crate::error::LlmError;
use crate::secret::Secret;
use crate::sse;

/// How long to wait, per attempt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeouts {
    /// To open the connection.
    pub connect: Duration,
    /// For the response headers (and, without streaming, the whole body).
    pub response: Duration,
    /// Between two chunks of a stream.
    pub idle: Duration,
    /// For a whole stream, however lively: keep-alives reset `idle`, never this.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(10),
            response: Duration::from_secs(600),
            idle: Duration::from_secs(60),
            total: Duration::from_secs(1800),
        }
    }
}

/// The most bytes of one response (a body, or a whole stream) read: past it the response is
/// abandoned as a fault, so a server that never stops cannot fill memory.
pub(crate) const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// Waits longer than this are not waited: the call is parked.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// What every HTTP provider holds: its name, where it is, its key, its timeouts and a client.
pub(crate) struct Endpoint {
    pub(crate) name: String,
    /// Without a trailing `/`.
    pub(crate) base_url: String,
    pub(crate) key: Option<Secret>,
    pub(crate) timeouts: Timeouts,
    pub(crate) client: reqwest::Client,
}

impl Endpoint {
    pub(crate) fn new(
        name: String,
        base_url: String,
        key: Option<Secret>,
        timeouts: Timeouts,
    ) -> Result<Endpoint, LlmError> {
        let client = reqwest::Client::builder()
            .connect_timeout(timeouts.connect)
            .build()
            .map_err(|e| LlmError::Config(format!("HTTP client: {e}")))?;
        Ok(Endpoint {
            name,
            base_url: base_url.trim_end_matches('/').to_owned(),
            key,
            timeouts,
            client,
        })
    }
}

/// Sends one request; a non-success status becomes its typed error.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    timeouts: Timeouts,
    key: Option<&Secret>,
) -> Result<reqwest::Response, LlmError> {
    let response = match tokio::time::timeout(timeouts.response, request.send()).await {
        Err(_) => return Err(LlmError::Timeout("the response")),
        Ok(Err(e)) if e.is_timeout() => return Err(LlmError::Timeout("the connection")),
        Ok(Err(e)) => return Err(LlmError::Connect(scrub(&without_url(&e), key))),
        Ok(Ok(r)) => r,
    };
    let status = response.status().as_u16();
    if response.status().is_success() {
        return Ok(response);
    }
    let headers = response.headers().clone();
    let body = match tokio::time::timeout(timeouts.idle, response.text()).await {
        Ok(Ok(body)) => body,
        _ => String::new(),
    };
    Err(classify(status, &headers, &scrub(&body, key)))
}

/// reqwest's error text names the URL, which is harmless, but keep messages short.
fn without_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(source) = std::error::Error::source(e) {
        s = format!("{s}: {source}");
    }
    s
}

/// Removes the key from text that came back from the provider (some echo part of it), then
/// shortens it.
pub(crate) fn scrub(text: &str, key: Option<&Secret>) -> String {
    let mut s = text.to_owned();
    if let Some(key) = key.map(Secret::expose).filter(|k| k.len() >= 8) {
        s = s.replace(key, "[redacted]");
        // A prefix of the key (`sk-abc…`) is still the key's.
        let mut half = key.len() / 2;
        while !key.is_char_boundary(half) {
            half -= 1;
        }
        s = s.replace(&key[..half], "[redacted]");
    }
    s.chars().take(2000).collect()
}

/// The typed error for an HTTP status.
pub(crate) fn classify(status: u16, headers: &HeaderMap, body: &str) -> LlmError {
    let lower = body.to_ascii_lowercase();
    let retry_after = retry_after(headers);
    let wait_or_park = |body: &str| match retry_after {
        Some(wait) if wait > MAX_RETRY_AFTER => LlmError::Parked { retry_after: wait },
        _ => LlmError::Retryable {
            status,
            retry_after,
            body: body.to_owned(),
        },
    };
    match status {
        400 | 413 | 422
            if [
                "context_length",
                "context length",
                "maximum context",
                "too many tokens",
                "prompt is too long",
                "context window",
                "exceed context limit",
                "input length",
            ]
            .iter()
            .any(|m| lower.contains(m)) =>
        {
            LlmError::ContextLength(body.to_owned())
        }
        401 | 403 => LlmError::Auth { status },
        429 if [
            "insufficient_quota",
            "exceeded your current quota",
            "billing",
            "spend limit",
            "spending limit",
            "credit balance",
        ]
        .iter()
        .any(|m| lower.contains(m)) =>
        {
            LlmError::Quota(body.to_owned())
        }
        408 | 409 | 429 | 500..=599 => wait_or_park(body),
        _ => LlmError::Rejected {
            status,
            body: body.to_owned(),
        },
    }
}

/// `retry-after-ms` (milliseconds), else `Retry-After` in seconds or as an HTTP date.
/// Nonsense (negative, infinite, unparsable) counts as absent.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let secs = |s: f64| Duration::try_from_secs_f64(s).ok();
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return secs(ms / 1000.0);
    }
    let value = get("retry-after")?;
    if let Ok(s) = value.parse::<f64>() {
        return secs(s);
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(std::time::SystemTime::now())
            .unwrap_or_default(),
    )
}

/// The whole body, each chunk within the idle timeout and all of it within the response
/// timeout.
pub(crate) async fn body(
    response: reqwest::Response,
    timeouts: Timeouts,
) -> Result<Vec<u8>, LlmError> {
    let read = async {
        let mut stream = response.bytes_stream();
        let mut out = Vec::new();
        loop {
            match tokio::time::timeout(timeouts.idle, stream.next()).await {
                Err(_) => return Err(LlmError::Timeout("the response body")),
                Ok(None) => return Ok(out),
                Ok(Some(Err(_))) => return Err(LlmError::StreamCut),
                Ok(Some(Ok(chunk))) => {
                    if out.len() + chunk.len() > MAX_RESPONSE_BYTES {
                        return Err(LlmError::Oversize(MAX_RESPONSE_BYTES));
                    }
                    out.extend_from_slice(&chunk);
                }
            }
        }
    };
    tokio::time::timeout(timeouts.response, read)
        .await
        .unwrap_or(Err(LlmError::Timeout("the response body")))
}

/// A whole response body as JSON. A body that ends inside its JSON was cut (the connection
/// closed early, and without a `Content-Length` nothing else says so): a fault worth another
/// attempt, not a protocol error.
pub(crate) fn json(bytes: &[u8]) -> Result<serde_json::Value, LlmError> {
    serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            LlmError::StreamCut
        } else {
            LlmError::Protocol(format!("response is not JSON: {e}"))
        }
    })
}

/// Errors carrying text the provider sent are scrubbed of the key like HTTP error bodies.
pub(crate) fn scrub_error(e: LlmError, key: Option<&Secret>) -> LlmError {
    match e {
        LlmError::StreamError(text) => LlmError::StreamError(scrub(&text, key)),
        LlmError::Rejected { status, body } => LlmError::Rejected {
            status,
            body: scrub(&body, key),
        },
        other => other,
    }
}

/// Reads an event stream, handing each event to `on_event`, which says when the final event
/// has come; errors it returns are scrubbed of `key`. A stream that ends, breaks or idles before that is an error: nothing of it is
/// used.
pub(crate) async fn events(
    response: reqwest::Response,
    timeouts: Timeouts,
    key: Option<&Secret>,
    mut on_event: impl FnMut(sse::Event) -> Result<bool, LlmError>,
) -> Result<(), LlmError> {
    let mut stream = response.bytes_stream();
    let mut parser = sse::Parser::default();
    // A deadline past what the clock can hold is no deadline.
    let deadline = tokio::time::Instant::now()
        .checked_add(timeouts.total)
        .unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(100 * 365 * 86_400));
    let mut read = 0usize;
    loop {
        let next = tokio::time::timeout(timeouts.idle, stream.next());
        let chunk = match tokio::time::timeout_at(deadline, next).await {
            Err(_) => return Err(LlmError::Timeout("the whole stream (its total deadline)")),
            Ok(chunk) => chunk,
        };
        match chunk {
            Err(_) => return Err(LlmError::Timeout("the next stream event")),
            Ok(None) | Ok(Some(Err(_))) => return Err(LlmError::StreamCut),
            Ok(Some(Ok(chunk))) => {
                read += chunk.len();
                if read > MAX_RESPONSE_BYTES {
                    return Err(LlmError::Oversize(MAX_RESPONSE_BYTES));
                }
                for event in parser.feed(&chunk) {
                    // An error event's text came from the provider: scrub it like a body.
                    if on_event(event).map_err(|e| scrub_error(e, key))? {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Parses a tool call's arguments; anything but JSON is a typed error, never a call.
pub(crate) fn tool_arguments(name: &str, arguments: &str) -> Result<serde_json::Value, LlmError> {
    if arguments.trim().is_empty() {
        return Ok(serde_json::json!({}));
    }
    serde_json::from_str(arguments)
        .or_else(|e| {
            // Models (llama.cpp's grammar among them) often put a raw line break or tab
            // inside a string; JSON wants it escaped. That one repair, nothing more.
            let repaired = escape_raw_controls(arguments).ok_or(e)?;
            serde_json::from_str(&repaired)
        })
        .map_err(|e| LlmError::MalformedToolCall {
            name: name.to_owned(),
            arguments: arguments.chars().take(500).collect(),
            reason: e.to_string(),
        })
}

/// `text` with the control characters inside its JSON strings escaped, if it has any (the
/// strings are found by their quotes, honouring backslash escapes); `None` when there is
/// nothing to repair.
fn escape_raw_controls(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    for c in text.chars() {
        if in_string && !escaped && c.is_control() {
            changed = true;
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                other => out.push_str(&format!("\\u{:04x}", other as u32)),
            }
            continue;
        }
        out.push(c);
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::tool_arguments;

    #[test]
    fn a_raw_line_break_in_a_string_is_escaped_and_nothing_else_is_forgiven() {
        let v = tool_arguments("t", "{\"answer\": \"42\nis it\", \"n\": \"a\\\"b\tc\"}")
            .expect("repaired");
        assert_eq!(v["answer"], "42\nis it");
        assert_eq!(v["n"], "a\"b\tc");
        assert!(tool_arguments("t", "{\"path\": \"src/").is_err());
        assert!(tool_arguments("t", "{\"a\": 1,}").is_err());
    }
}
