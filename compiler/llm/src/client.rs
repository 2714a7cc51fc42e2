//! The client agents call: role → provider and model, concurrency per role and per
//! provider, retries,
//! the budget, and a ledger row for every attempt.
//! design: llm.faults

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::config::{LlmConfig, Role};
use crate::error::LlmError;
use crate::ledger::Ledger;
use crate::provider::Provider;
use crate::replay::Recorder;
use crate::retry::RetryPolicy;
use crate::types::{Request, Response};

pub(crate) struct Slot {
    pub(crate) provider: Result<Arc<dyn Provider>, LlmError>,
    pub(crate) limit: Arc<Semaphore>,
}

pub struct Client {
    pub(crate) config: LlmConfig,
    pub(crate) slots: HashMap<String, Slot>,
    /// The roles with a `concurrency` of their own.
    pub(crate) role_limits: HashMap<Role, Arc<Semaphore>>,
    pub(crate) ledger: Option<Arc<Ledger>>,
    pub(crate) run: String,
    pub(crate) policy: RetryPolicy,
    /// Exchanges `--record` could not write.
    pub(crate) record_failures: crate::RecordFailures,
    /// Set: no more calls (design: runtime.graceful-stop).
    pub(crate) halt: crate::Halt,
    /// A budget and ledger shared through a service (a worker's serve), if any.
    pub(crate) gate: Option<Arc<dyn crate::BudgetGate>>,
    /// Screens every request for secrets before it leaves (design: secrets.redaction).
    pub(crate) redactor: Option<Arc<dyn crate::Redact>>,
    /// Calls waiting for a permit and calls out, for `specc build --gauges`.
    pub(crate) calls: Arc<CallGauges>,
}

/// How many calls wait for their role's or provider's permit, and how many are out (hold
/// the permit: sent, retrying or being recorded).
#[derive(Debug, Default)]
pub struct CallGauges {
    pub(crate) waiting: std::sync::atomic::AtomicUsize,
    pub(crate) out: std::sync::atomic::AtomicUsize,
}

impl CallGauges {
    /// `(waiting, out)` now.
    pub fn read(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.waiting.load(Relaxed), self.out.load(Relaxed))
    }
}

/// One count held while it lives.
pub(crate) struct Counted<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Counted<'a> {
    pub(crate) fn new(n: &'a std::sync::atomic::AtomicUsize) -> Counted<'a> {
        n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Counted(n)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
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
            let provider = crate::providers::build(name, p, env).map(|provider| match record {
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
            redactor: None,
            calls: Arc::default(),
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

    /// Screens every request with `r` before it is fingerprinted, recorded or sent.
    pub fn with_redactor(mut self, r: Arc<dyn crate::Redact>) -> Client {
        self.redactor = Some(r);
        self
    }

    /// Calls waiting and calls out, now.
    pub fn call_gauges(&self) -> &CallGauges {
        &self.calls
    }

    /// The redactor requests go through, for what else leaves the process (the journal).
    pub fn redactor(&self) -> Option<&Arc<dyn crate::Redact>> {
        self.redactor.as_ref()
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
    ///
    /// When `journal` ran, the answer's commit is asked for at once but not waited for: the
    /// caller waits for [`Client::durable`] before what the answer caused leaves it for
    /// good (a landing), where the wait costs least: after the caller gave back its job
    /// (design: llm.answer-durability).
    pub async fn call_journaled(
        &self,
        role: Role,
        task: &str,
        request: Request,
        journal: Option<&AnswerHook<'_>>,
    ) -> Result<(Response, bool), LlmError> {
        self.call_inner(role, None, task, request, journal).await
    }

    /// Returns once every answer recorded so far is committed (at once without a ledger).
    pub async fn durable(&self) -> Result<(), specc_state::StateError> {
        match &self.ledger {
            Some(l) => l.state_db().durable().await,
            None => Ok(()),
        }
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
}

/// What writes an answer to the state database in the transaction that records its call
/// ([`Client::call_journaled`]).
pub type AnswerHook<'a> = dyn Fn(&Response) -> specc_state::Write + Sync + 'a;
