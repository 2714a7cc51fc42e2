//! `anthropic`: the Messages API, with tools and SSE streaming, and cached-input usage.
//! `ResponseFormat` has no counterpart in this API; a JSON answer is asked for in the prompt,
//! or, better, through a tool forced by name.

use serde_json::{Value, json};

use crate::error::LlmError;
use crate::http::{self, Endpoint, Timeouts};
use crate::provider::{BoxFuture, Provider};
use crate::secret::Secret;
use crate::types::{Author, FinishReason, Request, Response, ToolCall, ToolChoice, Usage};

const VERSION: &str = "2023-06-01";

pub struct Anthropic {
    /// The base URL ends before `/v1/messages`, e.g. `https://api.anthropic.com`.
    endpoint: Endpoint,
}

impl Anthropic {
    pub fn new(
        name: impl Into<String>,
        base_url: impl Into<String>,
        key: Option<Secret>,
        timeouts: Timeouts,
    ) -> Result<Anthropic, LlmError> {
        Ok(Anthropic {
            endpoint: Endpoint::new(name.into(), base_url.into(), key, timeouts)?,
        })
    }

    async fn attempt(&self, request: &Request) -> Result<Response, LlmError> {
        let e = &self.endpoint;
        let mut builder = e
            .client
            .post(format!("{}/v1/messages", e.base_url))
            .header("anthropic-version", VERSION)
            .json(&body(request));
        if let Some(key) = &e.key {
            builder = builder.header("x-api-key", key.expose());
        }
        let response = http::send(builder, e.timeouts, e.key.as_ref()).await?;
        if request.stream {
            let mut acc = Stream::default();
            http::events(response, e.timeouts, e.key.as_ref(), |event| {
                acc.event(event.name.as_deref(), &event.data)
            })
            .await?;
            acc.finish(&request.model)
        } else {
            let bytes = http::body(response, e.timeouts).await?;
            let value: Value = http::json(&bytes)?;
            parse(&value, &request.model)
        }
    }
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        Box::pin(self.attempt(request))
    }
}

/// Marks a message's last content block as a cache breakpoint (a text content becomes one
/// text block); an empty text is left alone, as the API refuses to cache it.
fn mark_for_cache(m: &mut Value) {
    let content = &mut m["content"];
    if let Some(text) = content.as_str() {
        if text.is_empty() {
            return;
        }
        *content = json!([{"type": "text", "text": text}]);
    }
    if let Some(block) = content.as_array_mut().and_then(|b| b.last_mut()) {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
}

pub(crate) fn body(r: &Request) -> Value {
    let system: Vec<&str> = r
        .messages
        .iter()
        .filter(|m| m.author == Author::System)
        .map(|m| m.text.as_str())
        .collect();
    let messages: Vec<Value> = r
        .messages
        .iter()
        .filter(|m| m.author != Author::System)
        .map(|m| match m.author {
            Author::Tool => json!({"role": "user", "content": [{
                "type": "tool_result",
                "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                "content": m.text,
            }]}),
            Author::Assistant if !m.tool_calls.is_empty() => {
                let mut blocks = Vec::new();
                if !m.text.is_empty() {
                    blocks.push(json!({"type": "text", "text": m.text}));
                }
                for c in &m.tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
                }
                json!({"role": "assistant", "content": blocks})
            }
            Author::Assistant => json!({"role": "assistant", "content": m.text}),
            _ => json!({"role": "user", "content": m.text}),
        })
        .collect();
    let mut messages = messages;
    // Cache breakpoints (design: llm.prompt-cache): the tools, the system prompt, the
    // conversation's first message (the task, stable for its whole conversation) and its
    // last (so the next call of the conversation reads all of this one from the cache).
    let last = messages.len().wrapping_sub(1);
    for i in [0, last] {
        if let Some(m) = messages.get_mut(i) {
            mark_for_cache(m);
        }
    }
    let mut body = json!({
        "model": r.model,
        "max_tokens": r.max_tokens,
        "messages": messages,
        "stream": r.stream,
    });
    if !system.is_empty() {
        body["system"] = json!([{"type": "text", "text": system.join("\n\n"),
                                 "cache_control": {"type": "ephemeral"}}]);
    }
    if let Some(t) = r.temperature {
        body["temperature"] = json!(t);
    }
    if !r.tools.is_empty() {
        body["tools"] = r
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        if let Some(tool) = body["tools"].as_array_mut().and_then(|t| t.last_mut()) {
            tool["cache_control"] = json!({"type": "ephemeral"});
        }
        match &r.tool_choice {
            ToolChoice::Auto => body["tool_choice"] = json!({"type": "auto"}),
            ToolChoice::None => body["tool_choice"] = json!({"type": "none"}),
            ToolChoice::Required => body["tool_choice"] = json!({"type": "any"}),
            ToolChoice::Named(name) => body["tool_choice"] = json!({"type": "tool", "name": name}),
        }
    }
    body
}

fn usage(v: &Value, into: &mut Usage) {
    let n = |k: &str| v[k].as_u64();
    if let Some(i) = n("input_tokens") {
        into.input = i + n("cache_creation_input_tokens").unwrap_or(0);
    }
    if let Some(c) = n("cache_read_input_tokens") {
        into.cached_input = c;
    }
    if let Some(o) = n("output_tokens") {
        into.output = o;
    }
}

fn finish(reason: Option<&str>) -> FinishReason {
    match reason {
        Some("end_turn") | Some("stop_sequence") | None => FinishReason::Stop,
        Some("max_tokens") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

pub(crate) fn parse(v: &Value, requested: &str) -> Result<Response, LlmError> {
    let blocks = v["content"]
        .as_array()
        .ok_or_else(|| LlmError::Protocol("no content in the response".into()))?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for b in blocks {
        match b["type"].as_str() {
            Some("text") => text.push_str(b["text"].as_str().unwrap_or_default()),
            Some("tool_use") => {
                let name = b["name"].as_str().unwrap_or_default().to_owned();
                if !b["input"].is_object() {
                    return Err(LlmError::MalformedToolCall {
                        name,
                        arguments: b["input"].to_string(),
                        reason: "input is not a JSON object".into(),
                    });
                }
                tool_calls.push(ToolCall {
                    id: b["id"].as_str().unwrap_or_default().to_owned(),
                    name,
                    arguments: b["input"].clone(),
                });
            }
            _ => {}
        }
    }
    let mut u = Usage::default();
    usage(&v["usage"], &mut u);
    Ok(Response {
        text,
        tool_calls,
        usage: u,
        finish: finish(v["stop_reason"].as_str()),
        model: v["model"].as_str().unwrap_or(requested).to_owned(),
        usage_estimated: false,
    })
}

#[derive(Default)]
struct Stream {
    text: String,
    /// Tool-use blocks by content index: id, name, JSON so far.
    calls: Vec<(usize, String, String, String)>,
    usage: Usage,
    stop: Option<String>,
    model: Option<String>,
    done: bool,
}

impl Stream {
    fn event(&mut self, name: Option<&str>, data: &str) -> Result<bool, LlmError> {
        let v: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Protocol(format!("stream event is not JSON: {e}")))?;
        let kind = name.or(v["type"].as_str()).unwrap_or_default();
        match kind {
            "message_start" => {
                let m = &v["message"];
                self.model = m["model"].as_str().map(str::to_owned);
                usage(&m["usage"], &mut self.usage);
            }
            "content_block_start" => {
                let b = &v["content_block"];
                if b["type"] == "tool_use" {
                    let i = v["index"].as_u64().unwrap_or(0) as usize;
                    let id = b["id"].as_str().unwrap_or_default().to_owned();
                    let name = b["name"].as_str().unwrap_or_default().to_owned();
                    self.calls.push((i, id, name, String::new()));
                }
            }
            "content_block_delta" => {
                let d = &v["delta"];
                if let Some(t) = d["text"].as_str() {
                    self.text.push_str(t);
                }
                if let Some(j) = d["partial_json"].as_str() {
                    let i = v["index"].as_u64().unwrap_or(0) as usize;
                    if let Some(call) = self.calls.iter_mut().find(|c| c.0 == i) {
                        call.3.push_str(j);
                    }
                }
            }
            "message_delta" => {
                if let Some(s) = v["delta"]["stop_reason"].as_str() {
                    self.stop = Some(s.to_owned());
                }
                usage(&v["usage"], &mut self.usage);
            }
            "message_stop" => {
                self.done = true;
                return Ok(true);
            }
            "error" => {
                // Overload, rate-limit and server errors may pass on a retry; a request the
                // API rejects will not.
                let kind = v["error"]["type"].as_str().unwrap_or_default();
                return Err(match kind {
                    "invalid_request_error"
                    | "authentication_error"
                    | "permission_error"
                    | "not_found_error"
                    | "request_too_large" => LlmError::Rejected {
                        status: 400,
                        body: v["error"].to_string(),
                    },
                    _ => LlmError::StreamError(v["error"].to_string()),
                });
            }
            _ => {} // ping, content_block_stop
        }
        Ok(false)
    }

    fn finish(self, requested: &str) -> Result<Response, LlmError> {
        if !self.done {
            return Err(LlmError::StreamCut);
        }
        let mut tool_calls = Vec::new();
        for (_, id, name, json) in self.calls {
            tool_calls.push(ToolCall {
                arguments: http::tool_arguments(&name, &json)?,
                id,
                name,
            });
        }
        Ok(Response {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish: finish(self.stop.as_deref()),
            model: self.model.unwrap_or_else(|| requested.to_owned()),
            usage_estimated: false,
        })
    }
}
