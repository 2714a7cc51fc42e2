//! What can go wrong with a model call, typed so that the retry loop and the caller can tell
//! a fault worth retrying from one that retrying cannot fix.
//! design: llm.faults

use std::time::Duration;

/// A failed model call (one attempt, or the whole call once retries are spent).
#[derive(Debug, Clone, PartialEq)]
pub enum LlmError {
    /// The connection could not be made, or broke before a response.
    Connect(String),
    /// No response (or no stream bytes) within the timeout.
    Timeout(&'static str),
    /// A stream ended before its final event, or a body before its JSON was complete (a
    /// connection closed early, with no `Content-Length` to tell): nothing of it is used.
    StreamCut,
    /// The stream sent an error event.
    StreamError(String),
    /// The response passed the most bytes specc reads of one (the limit).
    Oversize(usize),
    /// An HTTP status that may succeed later (408, 409, 429, 5xx, 529).
    Retryable {
        status: u16,
        retry_after: Option<Duration>,
        body: String,
    },
    /// The provider asked to wait longer than specc waits (over 120 s): the call is parked,
    /// not retried, and the scheduler decides when to try again.
    Parked { retry_after: Duration },
    /// The request is larger than the model's context.
    ContextLength(String),
    /// 401 or 403: the key is missing, wrong or not allowed.
    Auth { status: u16 },
    /// A 429 that is not a rate limit: the account is out of quota or over a spend limit.
    Quota(String),
    /// Any other 4xx: the request is wrong, and sending it again will not help.
    Rejected { status: u16, body: String },
    /// The model called a tool with arguments that are not JSON.
    MalformedToolCall {
        name: String,
        arguments: String,
        reason: String,
    },
    /// The response did not have the shape the provider's API documents.
    Protocol(String),
    /// The replay provider has no recording of this request.
    ReplayMiss {
        fingerprint: String,
        request: String,
    },
    /// The budget cap would be exceeded by this call's reservation.
    Budget {
        cap: f64,
        committed: f64,
        needed: f64,
    },
    /// The client was told to make no more calls (the build is stopping: a signal).
    Halted(String),
    /// The configuration names something that does not exist.
    Config(String),
    /// The state database failed.
    Ledger(specc_state::StateError),
}

impl LlmError {
    /// Calls stop here, and the build with them, resumable: the budget cap, or a halt.
    pub fn is_stop(&self) -> bool {
        matches!(self, LlmError::Budget { .. } | LlmError::Halted(_))
    }

    /// Whether another attempt may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::Connect(_)
                | LlmError::Timeout(_)
                | LlmError::StreamCut
                | LlmError::StreamError(_)
                | LlmError::Oversize(_)
                | LlmError::Retryable { .. }
        )
    }

    /// A short word for the ledger's `outcome` column.
    pub fn outcome(&self) -> &'static str {
        match self {
            LlmError::Connect(_) => "connect_error",
            LlmError::Timeout(_) => "timeout",
            LlmError::StreamCut => "stream_cut",
            LlmError::StreamError(_) => "stream_error",
            LlmError::Oversize(_) => "oversize",
            LlmError::Retryable { .. } => "retryable_status",
            LlmError::Parked { .. } => "parked",
            LlmError::ContextLength(_) => "context_length",
            LlmError::Auth { .. } => "auth",
            LlmError::Quota(_) => "quota",
            LlmError::Rejected { .. } => "rejected",
            LlmError::MalformedToolCall { .. } => "malformed_tool_call",
            LlmError::Protocol(_) => "protocol",
            LlmError::ReplayMiss { .. } => "replay_miss",
            LlmError::Budget { .. } => "budget",
            LlmError::Halted(_) => "halted",
            LlmError::Config(_) => "config",
            LlmError::Ledger(_) => "ledger",
        }
    }
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LlmError::Connect(e) => write!(f, "could not reach the provider: {e}"),
            LlmError::Timeout(what) => write!(f, "timed out waiting for {what}"),
            LlmError::StreamCut => write!(
                f,
                "the response ended before it was complete (a stream without its final event, or a cut body)"
            ),
            LlmError::StreamError(e) => write!(f, "the stream reported an error: {e}"),
            LlmError::Oversize(n) => {
                write!(f, "the response passed {} MiB and was abandoned", n >> 20)
            }
            LlmError::Retryable { status, body, .. } => write!(f, "HTTP {status}: {body}"),
            LlmError::Parked { retry_after } => write!(
                f,
                "the provider asked to wait {} s; the call is parked",
                retry_after.as_secs()
            ),
            LlmError::ContextLength(e) => write!(f, "the request exceeds the model's context: {e}"),
            LlmError::Auth { status } => write!(
                f,
                "HTTP {status}: the API key was refused (check the environment variable specc.toml names)"
            ),
            LlmError::Quota(e) => write!(f, "out of quota or over a spend limit: {e}"),
            LlmError::Rejected { status, body } => write!(f, "HTTP {status}: {body}"),
            LlmError::MalformedToolCall {
                name,
                arguments,
                reason,
            } => write!(
                f,
                "tool call `{name}` has arguments that are not JSON ({reason}): {arguments}"
            ),
            LlmError::Protocol(e) => write!(f, "unexpected response: {e}"),
            LlmError::ReplayMiss {
                fingerprint,
                request,
            } => write!(
                f,
                "no recorded response for request {fingerprint} ({request}); record it with --record"
            ),
            LlmError::Budget {
                cap,
                committed,
                needed,
            } => write!(
                f,
                "budget cap ${cap:.2} reached: ${committed:.4} spent or reserved, this call needs up to ${needed:.4}"
            ),
            LlmError::Halted(why) => write!(f, "no more model calls: {why}"),
            LlmError::Config(e) => write!(f, "configuration: {e}"),
            LlmError::Ledger(e) => write!(f, "state database: {e}"),
        }
    }
}

impl std::error::Error for LlmError {}
