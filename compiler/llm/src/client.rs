//! The client agents call: role → provider and model, concurrency per role and per
//! provider, retries,
//! the budget, and a ledger row for every attempt.
//! design: llm.faults

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::config::{LlmConfig, ProviderKind, Role};
use crate::error::LlmError;
use crate::http::Timeouts;
use crate::ledger::{CallRow, Ledger};
use crate::provider::Provider;
use crate::replay::{Recorder, Replay};
use crate::retry::RetryPolicy;
use crate::secret::Secret;
use crate::types::{Request, Response, Usage};
use crate::{Anthropic, OpenAiCompatible};

struct Slot {
    provider: Result<Arc<dyn Provider>, LlmError>,
    limit: Arc<Semaphore>,
}

pub struct Client {
    config: LlmConfig,
    slots: HashMap<String, Slot>,
    /// The roles with a `concurrency` of their own.
    role_limits: HashMap<Role, Arc<Semaphore>>,
    ledger: Option<Arc<Ledger>>,
    run: String,
    policy: RetryPolicy,
    /// Exchanges `--record` could not write.
    record_failures: crate::RecordFailures,
    /// Set: no more calls (design: runtime.graceful-stop).
    halt: crate::Halt,
    /// A budget and ledger shared through a service (a worker's serve), if any.
    gate: Option<Arc<dyn crate::BudgetGate>>,
}

impl Client {
    /// Builds every provider the configuration names. `env` looks up environment variables
    /// (API keys); with `record`, every successful exchange is appended to that file.
    pub fn from_config(
        config: LlmConfig,
        env: &dyn Fn(&str) -> Option<String>,
        record: Option<&Path>,
    ) -> Client {
        let mut slots = HashMap::new();
        let record_failures = crate::RecordFailures::default();
        for (name, p) in &config.providers {
            let provider = build(name, p, env).map(|provider| match record {
                Some(path) => Arc::new(Recorder::sharing(provider, path, record_failures.clone()))
                    as Arc<dyn Provider>,
                None => provider,
            });
            slots.insert(
                name.clone(),
                Slot {
                    provider,
                    limit: Arc::new(Semaphore::new(p.concurrency.max(1))),
                },
            );
        }
        let policy = config.retry_policy();
        let role_limits = Role::ALL
            .into_iter()
            .filter_map(|role| {
                let n = config.role(role)?.concurrency?;
                Some((role, Arc::new(Semaphore::new(n.max(1)))))
            })
            .collect();
        Client {
            config,
            slots,
            role_limits,
            ledger: None,
            run: "default".to_owned(),
            policy,
            record_failures,
            halt: crate::Halt::default(),
            gate: None,
        }
    }

    /// The switch that stops this client's calls: later calls fail with
    /// [`LlmError::Halted`]; calls already out finish.
    pub fn halt_switch(&self) -> crate::Halt {
        self.halt.clone()
    }

    /// Why this client's calls were stopped, if they were.
    pub fn halted(&self) -> Option<String> {
        self.halt.reason()
    }

    /// The exchanges `--record` could not write (a recorder wrapping a provider added with
    /// [`Client::with_provider`] counts here if made with [`Client::recorder`]).
    pub fn record_failures(&self) -> Option<(usize, String)> {
        self.record_failures.get()
    }

    /// A recorder of `inner` into `path` whose failed writes this client counts.
    pub fn recorder(&self, inner: Arc<dyn Provider>, path: &Path) -> Recorder {
        Recorder::sharing(inner, path, self.record_failures.clone())
    }

    /// Replaces (or adds) provider `name`: tests plug in a scripted fake this way.
    pub fn with_provider(
        mut self,
        name: &str,
        provider: Arc<dyn Provider>,
        concurrency: usize,
    ) -> Client {
        self.slots.insert(
            name.to_owned(),
            Slot {
                provider: Ok(provider),
                limit: Arc::new(Semaphore::new(concurrency.max(1))),
            },
        );
        self
    }

    /// The provider and model that serve `role`, as `call` will use them.
    pub fn binding(&self, role: Role) -> Option<&crate::config::RoleConfig> {
        self.config.role(role)
    }

    /// Records every attempt in `ledger` under run id `run`, and enforces the budget there.
    pub fn with_ledger(mut self, ledger: Arc<Ledger>, run: &str) -> Client {
        self.ledger = Some(ledger);
        self.run = run.to_owned();
        self
    }

    /// Holds every call against `gate`'s shared budget too, and records its rows there
    /// (design: state.leases).
    pub fn with_gate(mut self, gate: Arc<dyn crate::BudgetGate>) -> Client {
        self.gate = Some(gate);
        self
    }

    pub fn with_retry(mut self, policy: RetryPolicy) -> Client {
        self.policy = policy;
        self
    }

    /// Makes a call for `role` on behalf of `task`, retrying what is worth retrying. The
    /// request's model is the role's; its max_tokens is the smaller of the two.
    pub async fn call(
        &self,
        role: Role,
        task: &str,
        request: Request,
    ) -> Result<Response, LlmError> {
        self.call_journaled(role, task, request, None)
            .await
            .map(|(r, _)| r)
    }

    /// [`Client::call`], and `journal` writes the answer to the state database in the same
    /// transaction as its ledger row, so a crash can never leave a paid answer unrecorded
    /// for the caller (it would be asked for again). Returns whether `journal` ran (not
    /// without a ledger, or when the ledger failed: the caller journals then).
    pub async fn call_journaled(
        &self,
        role: Role,
        task: &str,
        request: Request,
        journal: Option<&AnswerHook<'_>>,
    ) -> Result<(Response, bool), LlmError> {
        self.call_inner(role, None, task, request, journal).await
    }

    /// [`Client::call`] with another model of the role's provider (a reviewer lens's own
    /// model); `None` is the role's.
    pub async fn call_model(
        &self,
        role: Role,
        model: Option<&str>,
        task: &str,
        request: Request,
    ) -> Result<Response, LlmError> {
        self.call_inner(role, model, task, request, None)
            .await
            .map(|(r, _)| r)
    }

    async fn call_inner(
        &self,
        role: Role,
        model: Option<&str>,
        task: &str,
        mut request: Request,
        journal: Option<&AnswerHook<'_>>,
    ) -> Result<(Response, bool), LlmError> {
        let mut binding = self
            .config
            .role(role)
            .ok_or_else(|| LlmError::Config(format!("no [roles.{}] in specc.toml", role.as_str())))?
            .clone();
        if let Some(m) = model {
            binding.model = m.to_owned();
        }
        let slot = self
            .slots
            .get(&binding.provider)
            .ok_or_else(|| LlmError::Config(format!("no provider `{}`", binding.provider)))?;
        let provider = slot.provider.clone()?;
        request.model = binding.model.clone();
        request.max_tokens = request.max_tokens.min(binding.max_tokens).max(1);
        let price = self.config.price(&binding.model);

        // Queue for the role, then for the provider, so that waiting calls hold no budget
        // (nor a provider slot another role could use); then reserve the most this call can
        // cost. The guard releases the reservation however the call ends: returned,
        // failed, or dropped by a caller's timeout.
        let _role_permit = match self.role_limits.get(&role) {
            Some(limit) => Some(
                limit
                    .acquire()
                    .await
                    .map_err(|_| LlmError::Config("role closed".into()))?,
            ),
            None => None,
        };
        let _permit = slot
            .limit
            .acquire()
            .await
            .map_err(|_| LlmError::Config("provider closed".into()))?;
        // Checked once the call would go out: one queued behind the limits is refused too.
        if let Some(why) = self.halt.reason() {
            return Err(LlmError::Halted(why));
        }
        let worst = price.dollars(Usage {
            input: input_estimate(&request),
            cached_input: 0,
            output: u64::from(request.max_tokens),
        });
        let mut reservation = match &self.ledger {
            Some(l) => {
                // With a gate the cap is the gate's, over every process's calls; this
                // process's own ledger then only keeps its rows.
                let cap = self.config.budget.dollars.filter(|_| self.gate.is_none());
                let held = l.reserve(&self.run, worst, cap)?;
                Some(Reservation {
                    ledger: l.clone(),
                    held: Some(held),
                })
            }
            None => None,
        };
        // Then the shared budget's hold, given back however the call ends, like the above.
        let mut shared = match &self.gate {
            Some(g) => Some(crate::gate::Held {
                gate: g.as_ref(),
                id: Some(g.hold(task, worst).await?),
            }),
            None => None,
        };
        let mut attempt = 1;
        loop {
            let started = Instant::now();
            let outcome = provider.complete(&request).await;
            let latency = started.elapsed();
            let (usage, label) = match &outcome {
                Ok(r) if r.usage_estimated => (r.usage, "ok_estimated_usage"),
                Ok(r) => (r.usage, "ok"),
                Err(e) => (Usage::default(), e.outcome()),
            };
            tracing::info!(
                role = role.as_str(),
                task,
                provider = provider.name(),
                model = %request.model,
                attempt,
                outcome = label,
                latency_ms = latency.as_millis() as u64,
                input = usage.input,
                output = usage.output,
                "model call"
            );
            // Whether the call is settled (answered, or failed for good): then its
            // reservation is released in the transaction that records it.
            let retry = match &outcome {
                Ok(_) => None,
                Err(e) => self.policy.delay(attempt, e),
            };
            // A ledger that cannot write must not turn a paid answer into an error; it is
            // logged loudly instead.
            let also = match (&outcome, journal) {
                (Ok(r), Some(j)) => Some(j(r)),
                _ => None,
            };
            let row = self.row(
                role,
                task,
                provider.name(),
                &request.model,
                usage,
                price.dollars(usage),
                latency,
                attempt,
                label,
            );
            // Taken out of the guard just before it is queued with the row, before anything
            // awaits: the guard's drop must not settle it again.
            let release = match retry {
                None => reservation.as_mut().and_then(|r| r.held.take()),
                Some(_) => None,
            };
            // Queued with the others of this moment, and committed before the answer is
            // used: a crash cannot lose a paid answer once the caller has it.
            let recorded = match (&self.ledger, &row) {
                (Some(l), Some(row)) => match l.record_with(row, also, release) {
                    Ok(()) => l.durable().await,
                    Err(e) => Err(e),
                },
                _ => Err(LlmError::Ledger(specc_state::StateError::Open(
                    "no ledger to record the call".into(),
                ))),
            };
            if let (Some(g), Some(row)) = (&self.gate, &row) {
                let settled = match retry {
                    None => shared.as_mut().and_then(|h| h.id.take()),
                    Some(_) => None,
                };
                g.record(row, settled).await;
            }
            let journaled = match recorded {
                Ok(()) => journal.is_some(),
                Err(e) => {
                    if self.ledger.is_some() {
                        tracing::error!(error = %e, "the ledger could not record a model call");
                    }
                    false
                }
            };
            match outcome {
                Ok(r) => break Ok((r, journaled)),
                Err(e) => match retry {
                    Some(wait) => {
                        tracing::warn!(provider = provider.name(), attempt, wait_ms = wait.as_millis() as u64, error = %e, "retrying");
                        tokio::time::sleep(wait).await;
                        // A halt while waiting: no new request goes out.
                        if let Some(why) = self.halt.reason() {
                            break Err(LlmError::Halted(why));
                        }
                        attempt += 1;
                    }
                    None => break Err(e),
                },
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        &self,
        role: Role,
        task: &str,
        provider: &str,
        model: &str,
        usage: Usage,
        dollars: f64,
        latency: Duration,
        attempt: u32,
        outcome: &str,
    ) -> Option<CallRow> {
        self.ledger.as_ref()?;
        Some(CallRow {
            run: self.run.clone(),
            task: task.to_owned(),
            role: role.as_str().to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage,
            dollars,
            latency,
            attempt,
            outcome: outcome.to_owned(),
        })
    }
}

/// What writes an answer to the state database in the transaction that records its call
/// ([`Client::call_journaled`]).
pub type AnswerHook<'a> = dyn Fn(&Response) -> specc_state::Write + Sync + 'a;

/// A budget reservation, released when dropped unless it was released with its call's row.
struct Reservation {
    ledger: Arc<Ledger>,
    held: Option<crate::Reservation>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        if let Err(e) = self.ledger.release(held) {
            tracing::error!(error = %e, "a budget reservation could not be released");
        }
    }
}

/// The length of `v` as JSON text, counted without building the text.
fn json_len(v: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail; a Value always serialises.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// The input tokens a request may use at most, counted generously: three characters a token
/// over messages, tool calls, tool schemas and the response schema.
fn input_estimate(r: &Request) -> u64 {
    let messages: usize = r
        .messages
        .iter()
        .map(|m| {
            m.text.len()
                + 16
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + json_len(&c.arguments))
                    .sum::<usize>()
        })
        .sum();
    let tools: usize = r
        .tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + json_len(&t.parameters))
        .sum();
    let format = match &r.response_format {
        crate::types::ResponseFormat::JsonSchema(s) => json_len(s),
        _ => 0,
    };
    ((messages + tools + format) / 3) as u64
}

fn build(
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
