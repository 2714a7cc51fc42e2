//! What a build lends each of its tasks: the model client, the journal, the repository,
//! the runner every command goes through, the checkout slots, what each task intends, the
//! pins of `specc check`, the policy of its attempts and where its events go.
//! design: runtime.escalation

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use specc_llm::Client;
use specc_sandbox::{CommandLimits, Runner};
use specc_state::Journal;
use specc_vcs::Repo;

use crate::attempt::SpecIndex;
use crate::checkouts::Slots;
use crate::events::Event;
use crate::landing::{Intents, Pins, ReviewConfig, Settled};
use crate::scheduling::Landings;

/// What the build lends a task.
pub struct Services<'a> {
    pub client: &'a Client,
    pub journal: &'a Journal,
    pub repo: &'a Repo,
    pub runner: Arc<dyn Runner>,
    pub run: &'a str,
    /// `.specc/work/`: the checkout slots, and the commands' logs.
    pub work: PathBuf,
    /// The checkout slots under `work`.
    pub slots: &'a Slots,
    /// What each task intends: what the merge agent is told of both sides.
    pub intents: &'a Intents,
    /// `specc check` and `specc pin` on a checkout (the driver's), for deliberate breaks'
    /// revisits and the `pin` tool; `None`: no revisits.
    pub pins: Option<Arc<dyn Pins>>,
    pub policy: &'a AttemptPolicy,
    pub events: &'a dyn Fn(Event),
    /// The build's working attempts, less those at the VCS (design: runtime.scheduler).
    pub landings: Landings,
    /// The decisions settled while builds ran (design: runtime.contested-decisions).
    pub settled: Arc<Settled>,
    /// The spec and the plan's decisions, for the workers' `read_spec` and
    /// `read_decision` (empty for a worker given no spec).
    pub spec: Arc<SpecIndex>,
}

/// The stores a build's tasks work in, and the run they belong to.
pub struct Stores<'a> {
    pub client: &'a Client,
    pub journal: &'a Journal,
    pub repo: &'a Repo,
    pub run: &'a str,
}

impl<'a> Services<'a> {
    /// What a build lends its tasks: its stores, the runner, the checkout slots (whose
    /// directory holds the commands' logs too), what each task intends, the attempts'
    /// policy and where events go. No revisits (`pins`), settled decisions or spec index
    /// until given with the `with_` methods.
    pub fn new(
        stores: Stores<'a>,
        runner: Arc<dyn Runner>,
        slots: &'a Slots,
        intents: &'a Intents,
        policy: &'a AttemptPolicy,
        events: &'a dyn Fn(Event),
    ) -> Services<'a> {
        Services {
            client: stores.client,
            journal: stores.journal,
            repo: stores.repo,
            runner,
            run: stores.run,
            work: slots.work().to_path_buf(),
            slots,
            intents,
            pins: None,
            policy,
            events,
            landings: Landings::default(),
            settled: Arc::default(),
            spec: Arc::default(),
        }
    }

    /// `specc check` and `specc pin` on a checkout, for deliberate breaks' revisits and
    /// the `pin` tool.
    pub fn with_pins(mut self, pins: Arc<dyn Pins>) -> Services<'a> {
        self.pins = Some(pins);
        self
    }

    /// The decisions settled in earlier builds.
    pub fn with_settled(mut self, settled: Arc<Settled>) -> Services<'a> {
        self.settled = settled;
        self
    }

    /// The spec and the plan's decisions, for `read_spec` and `read_decision`.
    pub fn with_spec(mut self, spec: Arc<SpecIndex>) -> Services<'a> {
        self.spec = spec;
        self
    }
}

/// The limits and the ladder of a build's attempts.
#[derive(Clone, Debug)]
pub struct AttemptPolicy {
    pub attempt: AttemptLimits,
    /// For `run` commands and acceptance checks.
    pub commands: CommandLimits,
    pub guide_lines: usize,
    /// The last rung of a failing task's ladder, after its re-plan.
    pub escalation: Escalation,
    /// What becomes of a submission that conflicts with work landed meanwhile.
    pub on_conflict: OnConflict,
    /// How landed tasks are reviewed (`[review]`; no lenses, no review).
    pub review: ReviewConfig,
    pub worker_max_tokens: u32,
    /// The commands an acceptance command of a re-plan may start with: those the sandbox
    /// finds (empty: the syntax only; design: passes.plan-acceptance).
    pub known_commands: specc_passes::plan::Commands,
}

/// The last rung of the escalation ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escalation {
    /// None: after its re-plan, a task that still fails has failed.
    None,
    /// The `escalation` role's model (specc.toml names one) tries once more.
    StrongerModel,
}

/// What becomes of a conflicted submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnConflict {
    /// The task runs again on the new head, shown the conflict.
    Rerun,
    /// The merge agent (the `merger` role, which specc.toml names) reconciles both sides;
    /// what it sends back runs again.
    MergeAgent,
}

/// What the orchestrator allows one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptLimits {
    /// Model calls.
    pub max_steps: u32,
    /// Input and output tokens over all calls.
    pub max_tokens: u64,
    pub wall: Duration,
}
