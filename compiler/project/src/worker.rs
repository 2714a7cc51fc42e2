//! What a `specc worker` opens of its own before it claims work: its specc.toml, its state
//! directory, the sandbox (refused when weaker and models are live), a replica of the
//! serve's repository, its ledger and journal, and a model client whose calls are held
//! against the serve's budget. The serve itself is reached through `upstream`, which the
//! caller makes (the driver's HTTP client).
//! design: state.deployment

use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_llm::{Client, Ledger};
use specc_runtime::AttemptPolicy;
use specc_sandbox::Runner;
use specc_state::Journal;
use specc_vcs::Repo;

use crate::config::{self, ConfigError, Source};
use crate::{Overrides, session};

/// Why a worker could not start.
#[derive(Debug)]
pub enum StartError {
    Config(ConfigError),
    /// Its state directory could not be made.
    State {
        dir: PathBuf,
        error: std::io::Error,
    },
    /// No async runtime could be made.
    Runtime(std::io::Error),
    /// Live models' commands, and no full sandbox (what is missing).
    Weaker(String),
    /// Its replica of the repository could not be opened.
    Replica {
        dir: PathBuf,
        error: std::io::Error,
    },
    /// Its ledger (the state database) could not be opened.
    Ledger(specc_llm::LlmError),
    Journal(specc_state::JournalError),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Config(e) => write!(f, "{e}"),
            StartError::State { dir, error } => write!(f, "{}: {error}", dir.display()),
            StartError::Runtime(e) => write!(f, "no async runtime: {e}"),
            StartError::Weaker(missing) => write!(
                f,
                "the full sandbox is not available here ({missing}), and this worker would run live models' commands"
            ),
            StartError::Replica { dir, error } => {
                write!(f, "the replica in {}: {error}", dir.display())
            }
            StartError::Ledger(e) => write!(f, "the worker's state database: {e}"),
            StartError::Journal(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StartError {}

/// The serve as a worker's replica and budget see it.
pub trait Serve: specc_vcs::Upstream + specc_llm::BudgetGate {}
impl<T: specc_vcs::Upstream + specc_llm::BudgetGate> Serve for T {}

/// What a worker runs tasks with.
pub struct Opened {
    pub replica: Repo,
    pub journal: Journal,
    pub client: Client,
    pub runner: Arc<dyn Runner>,
    pub slots: specc_runtime::Slots,
    pub policy: AttemptPolicy,
}

/// Where a worker starts: the spec's directory, its config and recording sources, and its
/// own state directory.
pub struct Start<'a> {
    pub spec: &'a Path,
    pub source: &'a Source,
    pub state: &'a Path,
    /// The serve's run, under which its calls are recorded.
    pub run: &'a str,
    pub record: Option<&'a Path>,
}

/// Opens what a worker runs tasks with, under `at.state`.
pub fn open<U: Serve + 'static>(
    at: &Start<'_>,
    overrides: &Overrides,
    upstream: Arc<U>,
) -> Result<Opened, StartError> {
    let dir = crate::spec_dir(Some(at.spec));
    let state = at.state;
    let cfg = config::load(at.source, &dir, state).map_err(StartError::Config)?;
    std::fs::create_dir_all(state.join("vcs")).map_err(|error| StartError::State {
        dir: state.to_path_buf(),
        error,
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(StartError::Runtime)?;
    let (runner, missing) = session::runner(&cfg, overrides.sandbox_helper.as_deref(), &rt);
    drop(rt);
    if runner.confinement() == specc_sandbox::Confinement::Weaker
        && session::live(&cfg, overrides)
        && !cfg.allow_weaker
    {
        return Err(StartError::Weaker(missing));
    }
    let replica = Repo::replica(
        &state.join("vcs").join("log"),
        specc_vcs::Options::default(),
        upstream.clone(),
    )
    .map_err(|error| StartError::Replica {
        dir: state.to_path_buf(),
        error,
    })?;
    let ledger = Ledger::open(&state.join("state.db"))
        .map(Arc::new)
        .map_err(StartError::Ledger)?;
    // Secrets are screened out of its requests and its journal as in a build (design:
    // secrets.redaction).
    let secrets = crate::secrets::redactor(&cfg.secrets_allow);
    let journal = Journal::on(ledger.state_db())
        .map_err(StartError::Journal)?
        .screened(crate::secrets::screen(&secrets));
    // Its calls are the build's: recorded under its run here, and held against the serve's
    // budget and recorded in its ledger under the claim of their task.
    let client = crate::client::build(&cfg.llm, at.record, overrides.models.as_ref())
        .with_ledger(ledger, at.run)
        .with_gate(upstream)
        .with_redactor(Arc::new(crate::secrets::Secrets(secrets)));
    Ok(Opened {
        replica,
        journal,
        client,
        runner,
        slots: specc_runtime::Slots::new(state.join("work")),
        policy: crate::policy::policy(&cfg),
    })
}
