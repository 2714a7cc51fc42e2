//! One call of a [`Client`]: bound to the role's provider and model, queued for the role
//! and the provider, its worst case reserved in the budget (and held against a shared
//! budget, for a worker), then attempted until it succeeds or fails for good, every attempt
//! recorded in the ledger (with the caller's journal write, in the same transaction, for
//! the answer) and the reservation settled with the row that ends the call.
//! design: llm.faults
//! design: llm.ledger

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, SemaphorePermit};
use tracing::Instrument as _;

use crate::client::{AnswerHook, Client};
use crate::config::Role;
use crate::error::LlmError;
use crate::gate::Held;
use crate::ledger::{CallRow, Ledger, Price};
use crate::provider::Provider;
use crate::types::{Request, Response, Usage};

/// What a call is bound to: the provider, its slot's limit, the request as it goes out and
/// the model's price.
struct Bound<'c> {
    provider: Arc<dyn Provider>,
    limit: &'c Semaphore,
    request: Request,
    price: Price,
}

/// What a call holds of the budget, given back however the call ends (returned, failed or
/// dropped by a caller's timeout) unless settled with the row that ends it.
struct Holds<'c> {
    reservation: Option<Reservation>,
    shared: Option<Held<'c>>,
}

/// One attempt's result, for its row.
struct Attempt<'a> {
    role: Role,
    task: &'a str,
    number: u32,
    latency: Duration,
    outcome: &'a Result<Response, LlmError>,
    /// The call is over with this attempt (answered, or failed for good).
    last: bool,
}

impl Client {
    /// Makes a call for `role` (with `model` if given) on behalf of `task`, retrying what is
    /// worth retrying; `journal` writes the answer in its ledger row's transaction. Returns
    /// whether `journal` ran.
    pub(crate) async fn call_inner(
        &self,
        role: Role,
        model: Option<&str>,
        task: &str,
        request: Request,
        journal: Option<&AnswerHook<'_>>,
    ) -> Result<(Response, bool), LlmError> {
        let mut request = request;
        if let Some(r) = &self.redactor {
            crate::redact::screen(r.as_ref(), &mut request);
        }
        let bound = self.bind(role, model, request)?;
        // Queue for the role, then for the provider, so that waiting calls hold no budget
        // (nor a provider slot another role could use).
        let waiting = crate::client::Counted::new(&self.calls.waiting);
        let _role_permit = self.queue_for_role(role).await?;
        let _permit = bound
            .limit
            .acquire()
            .await
            .map_err(|_| LlmError::Config("provider closed".into()))?;
        drop(waiting);
        let _out = crate::client::Counted::new(&self.calls.out);
        // Checked once the call would go out: one queued behind the limits is refused too.
        if let Some(why) = self.halt.reason() {
            return Err(LlmError::Halted(why));
        }
        let mut holds = self.hold(task, &bound).await?;
        let mut number = 1;
        loop {
            let started = Instant::now();
            // For the build's trace (design: runtime.traces); off unless a trace is exported.
            let span = tracing::info_span!(
                "model call",
                role = role.as_str(),
                task,
                provider = bound.provider.name(),
                model = %bound.request.model,
                attempt = number,
                outcome = tracing::field::Empty,
                input_tokens = tracing::field::Empty,
                output_tokens = tracing::field::Empty,
                dollars = tracing::field::Empty,
            );
            let outcome = bound
                .provider
                .complete(&bound.request)
                .instrument(span.clone())
                .await;
            traced(&span, &bound, &outcome);
            // The span is the call: recording it and a retry's wait are not.
            drop(span);
            let retry = match &outcome {
                Ok(_) => None,
                Err(e) => self.policy.delay(number, e),
            };
            let attempt = Attempt {
                role,
                task,
                number,
                latency: started.elapsed(),
                outcome: &outcome,
                last: retry.is_none(),
            };
            let journaled = self.record(&bound, &attempt, journal, &mut holds).await;
            match (outcome, retry) {
                (Ok(r), _) => break Ok((r, journaled)),
                (Err(e), None) => break Err(e),
                (Err(e), Some(wait)) => {
                    tracing::warn!(provider = bound.provider.name(), attempt = number, wait_ms = wait.as_millis() as u64, error = %e, "retrying");
                    tokio::time::sleep(wait).await;
                    // A halt while waiting: no new request goes out.
                    if let Some(why) = self.halt.reason() {
                        break Err(LlmError::Halted(why));
                    }
                    number += 1;
                }
            }
        }
    }

    /// The provider and model that serve `role` (with `model` instead of the role's, if
    /// given), and the request as it goes out: the role's model, the smaller max_tokens.
    fn bind(
        &self,
        role: Role,
        model: Option<&str>,
        mut request: Request,
    ) -> Result<Bound<'_>, LlmError> {
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
        Ok(Bound {
            provider,
            limit: &slot.limit,
            price: self.config.price(&binding.model),
            request,
        })
    }

    /// A place in the role's queue, if the role has a `concurrency` of its own.
    async fn queue_for_role(&self, role: Role) -> Result<Option<SemaphorePermit<'_>>, LlmError> {
        match self.role_limits.get(&role) {
            Some(limit) => limit
                .acquire()
                .await
                .map(Some)
                .map_err(|_| LlmError::Config("role closed".into())),
            None => Ok(None),
        }
    }

    /// Reserves the most the call can cost in this process's ledger (whose cap is the
    /// gate's when there is a gate: it is over every process's calls), then holds it
    /// against the shared budget.
    async fn hold(&self, task: &str, bound: &Bound<'_>) -> Result<Holds<'_>, LlmError> {
        let worst = bound.price.dollars(Usage {
            input: crate::estimate::input_estimate(&bound.request),
            cached_input: 0,
            output: u64::from(bound.request.max_tokens),
        });
        let reservation = match &self.ledger {
            Some(l) => {
                let cap = self.config.budget.dollars.filter(|_| self.gate.is_none());
                Some(Reservation {
                    ledger: l.clone(),
                    held: Some(l.reserve(&self.run, worst, cap)?),
                })
            }
            None => None,
        };
        let shared = match &self.gate {
            Some(g) => Some(Held {
                gate: g.as_ref(),
                id: Some(g.hold(task, worst).await?),
            }),
            None => None,
        };
        Ok(Holds {
            reservation,
            shared,
        })
    }

    /// Logs and records one attempt: its ledger row (with `journal`'s write of the answer,
    /// and the release of the call's reservation when it is the last), committed before the
    /// answer is used, then the shared budget's record. A ledger that cannot write must not
    /// turn a paid answer into an error: it is logged loudly instead. Returns whether
    /// `journal` ran.
    async fn record(
        &self,
        bound: &Bound<'_>,
        a: &Attempt<'_>,
        journal: Option<&AnswerHook<'_>>,
        holds: &mut Holds<'_>,
    ) -> bool {
        let (usage, label) = match a.outcome {
            Ok(r) if r.usage_estimated => (r.usage, "ok_estimated_usage"),
            Ok(r) => (r.usage, "ok"),
            Err(e) => (Usage::default(), e.outcome()),
        };
        tracing::info!(
            role = a.role.as_str(),
            task = a.task,
            provider = bound.provider.name(),
            model = %bound.request.model,
            attempt = a.number,
            outcome = label,
            latency_ms = a.latency.as_millis() as u64,
            input = usage.input,
            output = usage.output,
            "model call"
        );
        let Some(ledger) = &self.ledger else {
            return false;
        };
        let row = CallRow {
            run: self.run.clone(),
            task: a.task.to_owned(),
            role: a.role.as_str().to_owned(),
            provider: bound.provider.name().to_owned(),
            model: bound.request.model.clone(),
            usage,
            dollars: bound.price.dollars(usage),
            latency: a.latency,
            attempt: a.number,
            outcome: label.to_owned(),
        };
        let also = match (a.outcome, journal) {
            (Ok(r), Some(j)) => Some(j(r)),
            _ => None,
        };
        // Taken out of the guard just before it is queued with the row, before anything
        // awaits: the guard's drop must not settle it again.
        let release = match a.last {
            true => holds.reservation.as_mut().and_then(|r| r.held.take()),
            false => None,
        };
        // Queued with the others of this moment, and committed before the answer is used: a
        // crash cannot lose a paid answer once the caller has it. An answer the caller
        // journals is committed at once too, but the caller waits for that only before its
        // work lands ([`crate::Client::durable`]; design: llm.answer-durability).
        let journals = also.is_some();
        let recorded = match ledger.record_with(&row, also, release) {
            Ok(()) if journals => {
                ledger.state_db().commit_soon();
                Ok(())
            }
            Ok(()) => ledger.durable().await,
            Err(e) => Err(e),
        };
        if let Some(g) = &self.gate {
            let settled = match a.last {
                true => holds.shared.as_mut().and_then(|h| h.id.take()),
                false => None,
            };
            g.record(&row, settled).await;
        }
        match recorded {
            Ok(()) => journal.is_some(),
            Err(e) => {
                tracing::error!(error = %e, "the ledger could not record a model call");
                false
            }
        }
    }
}

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

/// A model call's span gets how it ended, its tokens and what it cost.
fn traced(span: &tracing::Span, bound: &Bound<'_>, outcome: &Result<Response, LlmError>) {
    if span.is_disabled() {
        return;
    }
    let (usage, label) = match outcome {
        Ok(r) => (r.usage, "ok"),
        Err(e) => (Usage::default(), e.outcome()),
    };
    span.record("outcome", label);
    span.record("input_tokens", usage.input + usage.cached_input);
    span.record("output_tokens", usage.output);
    span.record("dollars", bound.price.dollars(usage));
}
