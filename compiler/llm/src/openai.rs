//! `openai-compatible`: the chat-completions API at a base URL (OpenAI, vLLM, llama.cpp,
//! ollama, OpenRouter), with tools and SSE streaming.

use serde_json::{Value, json};

use crate::error::LlmError;
use crate::http::{self, Endpoint, Timeouts};
use crate::provider::{BoxFuture, Provider};
use crate::secret::Secret;
use crate::types::{
    Author, FinishReason, Request, Response, ResponseFormat, ToolCall, ToolChoice, Usage,
};

pub struct OpenAiCompatible {
    /// The base URL ends before `/chat/completions`, e.g. `https://api.openai.com/v1`.
    endpoint: Endpoint,
}

impl OpenAiCompatible {
    pub fn new(
        name: impl Into<String>,
        base_url: impl Into<String>,
        key: Option<Secret>,
        timeouts: Timeouts,
    ) -> Result<OpenAiCompatible, LlmError> {
        Ok(OpenAiCompatible {
            endpoint: Endpoint::new(name.into(), base_url.into(), key, timeouts)?,
        })
    }

    async fn attempt(&self, request: &Request) -> Result<Response, LlmError> {
        let e = &self.endpoint;
        let mut builder = e
            .client
            .post(format!("{}/chat/completions", e.base_url))
            .json(&body(request));
        if let Some(key) = &e.key {
            builder = builder.bearer_auth(key.expose());
        }
        let response = http::send(builder, e.timeouts, e.key.as_ref()).await?;
        if request.stream {
            let mut acc = Stream::default();
            http::events(response, e.timeouts, e.key.as_ref(), |event| {
                acc.event(&event.data)
            })
            .await?;
            acc.finish(request)
        } else {
            let bytes = http::body(response, e.timeouts).await?;
            let value: Value = http::json(&bytes)?;
            parse(&value, &request.model)
        }
    }
}

impl Provider for OpenAiCompatible {
    fn name(&self) -> &str {
        &self.endpoint.name
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        Box::pin(self.attempt(request))
    }
}

/// The request body.
pub(crate) fn body(r: &Request) -> Value {
    let messages: Vec<Value> = r
        .messages
        .iter()
        .map(|m| {
            let role = match m.author {
                Author::System => "system",
                Author::User => "user",
                Author::Assistant => "assistant",
                Author::Tool => "tool",
            };
            let mut v = json!({ "role": role, "content": m.text });
            if !m.tool_calls.is_empty() {
                v["tool_calls"] = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                    })
                    .collect();
            }
            if let Some(id) = &m.tool_call_id {
                v["tool_call_id"] = json!(id);
            }
            v
        })
        .collect();
    let mut body = json!({
        "model": r.model,
        "messages": messages,
        "max_tokens": r.max_tokens,
        "stream": r.stream,
    });
    if r.stream {
        body["stream_options"] = json!({ "include_usage": true });
    }
    if let Some(t) = r.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(seed) = r.seed {
        body["seed"] = json!(seed);
    }
    if !r.tools.is_empty() {
        body["tools"] = r
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tool_choice"] = match &r.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
        };
    }
    match &r.response_format {
        ResponseFormat::Text => {}
        ResponseFormat::Json => body["response_format"] = json!({"type": "json_object"}),
        ResponseFormat::JsonSchema(schema) => {
            body["response_format"] = json!({"type": "json_schema", "json_schema": {"name": "response", "schema": schema}});
        }
    }
    body
}

fn usage(v: &Value) -> Usage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let prompt = n(&v["prompt_tokens"]);
    let cached = n(&v["prompt_tokens_details"]["cached_tokens"]).min(prompt);
    Usage {
        input: prompt - cached,
        cached_input: cached,
        output: n(&v["completion_tokens"]),
    }
}

fn finish(reason: Option<&str>) -> FinishReason {
    match reason {
        Some("stop") | None => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// A non-streamed response.
pub(crate) fn parse(v: &Value, requested: &str) -> Result<Response, LlmError> {
    let choice = &v["choices"][0];
    if choice.is_null() {
        return Err(LlmError::Protocol("no choices in the response".into()));
    }
    let message = &choice["message"];
    let mut tool_calls = Vec::new();
    for c in message["tool_calls"].as_array().into_iter().flatten() {
        let name = c["function"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let arguments = c["function"]["arguments"].as_str().unwrap_or_default();
        tool_calls.push(ToolCall {
            id: c["id"].as_str().unwrap_or_default().to_owned(),
            arguments: http::tool_arguments(&name, arguments)?,
            name,
        });
    }
    Ok(Response {
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        tool_calls,
        usage: usage(&v["usage"]),
        finish: finish(choice["finish_reason"].as_str()),
        model: v["model"].as_str().unwrap_or(requested).to_owned(),
        usage_estimated: false,
    })
}

/// More tool calls than this in one answer is a broken stream, not a plan.
const MAX_TOOL_CALLS: usize = 256;

/// A streamed response being put together.
#[derive(Default)]
struct Stream {
    text: String,
    /// By index: id, name, arguments so far.
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    usage: Option<Usage>,
    model: Option<String>,
    done: bool,
}

impl Stream {
    fn event(&mut self, data: &str) -> Result<bool, LlmError> {
        if data.trim() == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Protocol(format!("stream chunk is not JSON: {e}")))?;
        if !v["error"].is_null() {
            return Err(LlmError::StreamError(v["error"].to_string()));
        }
        if let Some(m) = v["model"].as_str() {
            self.model = Some(m.to_owned());
        }
        if v["usage"].is_object() {
            self.usage = Some(usage(&v["usage"]));
        }
        for choice in v["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str() {
                self.text.push_str(t);
            }
            for c in delta["tool_calls"].as_array().into_iter().flatten() {
                let i = c["index"].as_u64().unwrap_or(0) as usize;
                if i >= MAX_TOOL_CALLS {
                    return Err(LlmError::Protocol(format!(
                        "tool call index {i} in a stream"
                    )));
                }
                if self.calls.len() <= i {
                    self.calls.resize(i + 1, Default::default());
                }
                let call = &mut self.calls[i];
                if let Some(id) = c["id"].as_str() {
                    call.0 = id.to_owned();
                }
                if let Some(n) = c["function"]["name"].as_str() {
                    call.1.push_str(n);
                }
                if let Some(a) = c["function"]["arguments"].as_str() {
                    call.2.push_str(a);
                }
            }
            if let Some(f) = choice["finish_reason"].as_str() {
                self.finish = Some(f.to_owned());
            }
        }
        Ok(false)
    }

    fn finish(self, request: &Request) -> Result<Response, LlmError> {
        if !self.done {
            return Err(LlmError::StreamCut);
        }
        let estimated = self.usage.is_none();
        let usage = self.usage.unwrap_or_else(|| {
            let out: usize = self.text.len()
                + self
                    .calls
                    .iter()
                    .map(|c| c.1.len() + c.2.len())
                    .sum::<usize>();
            let input: usize = request.messages.iter().map(|m| m.text.len() + 4).sum();
            Usage {
                input: input.div_ceil(4) as u64,
                cached_input: 0,
                output: out.div_ceil(4) as u64,
            }
        });
        let mut tool_calls = Vec::new();
        for (id, name, arguments) in self.calls {
            if name.is_empty() {
                return Err(LlmError::Protocol(
                    "a streamed tool call has no name".into(),
                ));
            }
            tool_calls.push(ToolCall {
                arguments: http::tool_arguments(&name, &arguments)?,
                id,
                name,
            });
        }
        Ok(Response {
            text: self.text,
            tool_calls,
            usage,
            finish: finish(self.finish.as_deref()),
            model: self.model.unwrap_or_else(|| request.model.clone()),
            usage_estimated: estimated,
        })
    }
}
