//! The providers specc.toml names, built: an HTTP provider with its key from the
//! environment and its timeouts, or a replay of a recording.
//! design: llm.config

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::config::ProviderKind;
use crate::error::LlmError;
use crate::http::Timeouts;
use crate::provider::Provider;
use crate::replay::Replay;
use crate::secret::Secret;
use crate::{Anthropic, OpenAiCompatible};

pub(crate) fn build(
    name: &str,
    p: &crate::config::ProviderConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Provider>, LlmError> {
    let key = match &p.api_key_env {
        Some(var) => Some(
            env(var)
                .filter(|v| !v.is_empty())
                .map(Secret::new)
                .ok_or_else(|| {
                    LlmError::Config(format!(
                        "provider `{name}`: the environment variable {var} (api_key_env) is not set"
                    ))
                })?,
        ),
        None => None,
    };
    let d = Timeouts::default();
    let secs = |v: Option<f64>, default: Duration, what: &str| match v {
        None => Ok(default),
        Some(s) => Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                LlmError::Config(format!(
                    "provider `{name}`: timeouts.{what} must be a positive number of seconds"
                ))
            }),
    };
    let timeouts = match p.timeouts {
        None => d,
        Some(t) => Timeouts {
            connect: secs(t.connect_secs, d.connect, "connect_secs")?,
            response: secs(t.response_secs, d.response, "response_secs")?,
            idle: secs(t.idle_secs, d.idle, "idle_secs")?,
            total: secs(t.total_secs, d.total, "total_secs")?,
        },
    };
    let url = |default: &str| p.base_url.clone().unwrap_or_else(|| default.to_owned());
    Ok(match p.kind {
        ProviderKind::OpenaiCompatible => Arc::new(OpenAiCompatible::new(
            name,
            url("https://api.openai.com/v1"),
            key,
            timeouts,
        )?),
        ProviderKind::Anthropic => Arc::new(Anthropic::new(
            name,
            url("https://api.anthropic.com"),
            key,
            timeouts,
        )?),
        ProviderKind::Replay => {
            let path = p.recording.as_deref().ok_or_else(|| {
                LlmError::Config(format!(
                    "provider `{name}`: replay needs `recording = \"file.jsonl\"`"
                ))
            })?;
            Arc::new(Replay::open(name, Path::new(path))?)
        }
    })
}
