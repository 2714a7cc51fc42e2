//! specc-llm: talking to models, for hours, unattended.
//!
//! * [`types`]: the plain data of a call (messages, tools, response, usage).
//! * [`Provider`]: one attempt at one request. Implementations: [`OpenAiCompatible`],
//!   [`Anthropic`], [`Replay`] (with [`Recorder`] to make recordings) and [`Scripted`].
//! * [`Client`]: roles, concurrency, retries with backoff, the budget and the [`Ledger`].
//! * [`cost`]: the per-role and per-model summary `specc cost` prints.

mod anthropic;
mod budget;
mod call;
mod client;
pub mod config;
pub mod cost;
mod error;
mod estimate;
mod gate;
mod halt;
mod http;
mod ledger;
mod openai;
mod provider;
mod providers;
mod redact;
mod replay;
mod retry;
#[cfg(feature = "testing")]
mod scripted;
mod secret;
mod sse;
pub mod types;

pub use anthropic::Anthropic;
pub use budget::Reservation;
pub use client::{AnswerHook, CallGauges, Client};
pub use config::{LlmConfig, ProviderKind, Role};
pub use error::LlmError;
pub use gate::BudgetGate;
pub use halt::Halt;
pub use http::{MAX_RETRY_AFTER, Timeouts, retry_after};
pub use ledger::{CallRow, LEDGER, Ledger, Price};
pub use openai::OpenAiCompatible;
pub use provider::{BoxFuture, Provider};
pub use redact::Redact;
pub use replay::{RecordFailures, Recorder, Recording, Replay, fingerprint, loose_fingerprint};
pub use retry::RetryPolicy;
#[cfg(feature = "testing")]
pub use scripted::Scripted;
pub use secret::Secret;
pub use types::{Message, Request, Response, Tool, ToolCall, ToolChoice, Usage};
