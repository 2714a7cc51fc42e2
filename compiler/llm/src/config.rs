//! `specc.toml`: providers, roles, prices, budget and retry policy.
//! design: llm.config
//!
//! ```toml
//! [providers.local]
//! kind = "openai-compatible"          # or "anthropic", "replay"
//! base_url = "http://127.0.0.1:8088/v1"
//! api_key_env = "LOCAL_API_KEY"      # optional; the key itself is never in this file
//! concurrency = 4
//!
//! [roles.planner]
//! provider = "local"
//! model = "smollm2"
//! max_tokens = 4096
//! concurrency = 2                    # optional: calls of this role in flight
//!
//! [prices.smollm2]                   # dollars per million tokens
//! input = 0.1
//! cached_input = 0.01
//! output = 0.2
//!
//! [budget]
//! dollars = 25.0
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use crate::error::LlmError;
use crate::ledger::Price;
use crate::retry::RetryPolicy;

/// The roles a call is made for. `escalation` is the stronger model a failed work task gets
/// last (design: runtime.escalation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Planner,
    Worker,
    Reviewer,
    Merger,
    Escalation,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Planner,
        Role::Worker,
        Role::Reviewer,
        Role::Merger,
        Role::Escalation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Worker => "worker",
            Role::Reviewer => "reviewer",
            Role::Merger => "merger",
            Role::Escalation => "escalation",
        }
    }
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    #[serde(default)]
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// At most this many calls in flight to this provider.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// For `replay`: the recording file.
    #[serde(default)]
    pub recording: Option<String>,
    #[serde(default)]
    pub timeouts: Option<TimeoutConfig>,
}

fn default_concurrency() -> usize {
    8
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    OpenaiCompatible,
    Anthropic,
    Replay,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimeoutConfig {
    pub connect_secs: Option<f64>,
    pub response_secs: Option<f64>,
    pub idle_secs: Option<f64>,
    pub total_secs: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    pub provider: String,
    pub model: String,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// At most this many calls of this role in flight, whatever their provider allows
    /// (none: only the provider's limit).
    #[serde(default)]
    pub concurrency: Option<usize>,
}

/// A role's `max_tokens` when specc.toml does not give one (and the planner's when there is
/// no specc.toml): one value in every mode, so a live recording replays.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

fn default_max_tokens() -> u32 {
    DEFAULT_MAX_TOKENS
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PriceConfig {
    pub input: f64,
    #[serde(default)]
    pub cached_input: Option<f64>,
    pub output: f64,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    pub dollars: Option<f64>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RetryConfig {
    pub max_attempts: Option<u32>,
    pub base_ms: Option<u64>,
    pub max_ms: Option<u64>,
}

/// The model-related part of specc.toml.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct LlmConfig {
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderConfig>,
    #[serde(default)]
    pub roles: BTreeMap<String, RoleConfig>,
    #[serde(default)]
    pub prices: BTreeMap<String, PriceConfig>,
    #[serde(default)]
    pub budget: BudgetConfig,
    #[serde(default)]
    pub retry: Option<RetryConfig>,
}

impl LlmConfig {
    /// Parses the TOML text and checks that every role names a known provider, and that
    /// role names are the four roles.
    pub fn parse(text: &str) -> Result<LlmConfig, LlmError> {
        let config: LlmConfig =
            toml::from_str(text).map_err(|e| LlmError::Config(e.to_string()))?;
        for (role, r) in &config.roles {
            if !Role::ALL.iter().any(|known| known.as_str() == role) {
                return Err(LlmError::Config(format!(
                    "unknown role `{role}`: the roles are planner, worker, reviewer, merger and escalation"
                )));
            }
            if !config.providers.contains_key(&r.provider) {
                return Err(LlmError::Config(format!(
                    "role `{role}` names provider `{}`, which [providers] does not define",
                    r.provider
                )));
            }
        }
        Ok(config)
    }

    /// Reads and parses `specc.toml`; a relative `recording` path is taken relative to the
    /// file's directory.
    pub fn load(path: &std::path::Path) -> Result<LlmConfig, LlmError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))?;
        LlmConfig::parse_at(&text, path)
    }

    /// [`LlmConfig::parse`] for the text of the file at `path`, already read: a relative
    /// `recording` path is taken relative to the file's directory.
    pub fn parse_at(text: &str, path: &std::path::Path) -> Result<LlmConfig, LlmError> {
        let mut config = LlmConfig::parse(text)?;
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        for p in config.providers.values_mut() {
            if let Some(rec) = &p.recording
                && std::path::Path::new(rec).is_relative()
            {
                p.recording = Some(dir.join(rec).display().to_string());
            }
        }
        Ok(config)
    }

    pub fn role(&self, role: Role) -> Option<&RoleConfig> {
        self.roles.get(role.as_str())
    }

    /// The price of `model`; an unpriced model costs nothing (and `specc cost` says so).
    pub fn price(&self, model: &str) -> Price {
        self.prices.get(model).map_or(Price::default(), |p| Price {
            input: p.input,
            cached_input: p.cached_input.unwrap_or(p.input),
            output: p.output,
        })
    }

    pub fn retry_policy(&self) -> RetryPolicy {
        let d = RetryPolicy::default();
        match self.retry {
            None => d,
            Some(r) => RetryPolicy {
                max_attempts: r.max_attempts.unwrap_or(d.max_attempts).max(1),
                base: r.base_ms.map_or(d.base, Duration::from_millis),
                max: r.max_ms.map_or(d.max, Duration::from_millis),
            },
        }
    }
}
