//! The plain data a provider takes and returns. Nothing here knows HTTP or a vendor's JSON.

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Author {
    System,
    User,
    Assistant,
    /// The result of a tool call, answering `tool_call_id`.
    Tool,
}

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub author: Author,
    pub text: String,
    /// Tool calls the assistant made in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Author::Tool`: the call this answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Message {
        Message::new(Author::System, text)
    }

    pub fn user(text: impl Into<String>) -> Message {
        Message::new(Author::User, text)
    }

    pub fn new(author: Author, text: impl Into<String>) -> Message {
        Message {
            author,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// A tool the model may call: a name, what it does, and a JSON schema for its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Whether and which tool the model must call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum ToolChoice {
    #[default]
    Auto,
    None,
    /// Must call some tool.
    Required,
    /// Must call this tool.
    Named(String),
}

/// The shape of the answer's text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "schema")]
pub enum ResponseFormat {
    #[default]
    Text,
    /// Any JSON object.
    Json,
    /// JSON matching this schema.
    JsonSchema(serde_json::Value),
}

/// One request to a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub model: String,
    pub messages: Vec<Message>,
    /// Shared: an agent sends the same definitions on every turn (design: perf.orchestration).
    #[serde(default, skip_serializing_if = "no_tools")]
    pub tools: std::sync::Arc<[Tool]>,
    #[serde(default)]
    pub tool_choice: ToolChoice,
    #[serde(default)]
    pub response_format: ResponseFormat,
    /// The most output tokens the answer may use (also what the budget reserves).
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// A sampling seed, for servers that take one (OpenAI-compatible ones): with a zero
    /// temperature, the same answer every time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Stream the answer (accepted only once the stream completes).
    #[serde(default)]
    pub stream: bool,
}

impl Request {
    pub fn new(model: impl Into<String>, messages: Vec<Message>, max_tokens: u32) -> Request {
        Request {
            model: model.into(),
            messages,
            tools: std::sync::Arc::default(),
            tool_choice: ToolChoice::Auto,
            response_format: ResponseFormat::Text,
            max_tokens,
            temperature: None,
            seed: None,
            stream: false,
        }
    }
}

fn no_tools(tools: &std::sync::Arc<[Tool]>) -> bool {
    tools.is_empty()
}

/// A call the model made. `arguments` is parsed JSON: a call whose arguments do not parse is
/// never returned as a call (it is `LlmError::MalformedToolCall`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}

/// Tokens a call used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not served from the provider's cache.
    pub input: u64,
    /// Input tokens served from the cache (billed at the cached price).
    pub cached_input: u64,
    pub output: u64,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    /// Hit `max_tokens`.
    Length,
    ToolCalls,
    ContentFilter,
    Other(String),
}

/// A complete answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish: FinishReason,
    /// The model the provider says answered.
    pub model: String,
    /// The provider reported no usage (some servers omit it from streams): `usage` is an
    /// estimate from the text, about four characters a token, and the ledger says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub usage_estimated: bool,
}

impl Response {
    /// A complete plain-text answer of `model` with the given usage (a provider that
    /// answers itself, like the outline planner, adds its tool calls to it).
    pub fn text(model: impl Into<String>, text: &str, usage: Usage) -> Response {
        Response {
            text: text.to_owned(),
            tool_calls: Vec::new(),
            usage,
            finish: FinishReason::Stop,
            model: model.into(),
            usage_estimated: false,
        }
    }
}
