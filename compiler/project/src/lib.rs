//! specc-project: a specc project as a library, under the thin command line of `specc`
//! (cargo's `core` and `ops` are the model). What a command needs before it does its own
//! work lives here: specc.toml read and checked (`config`), the model client built from it
//! (`client`: the one place the environment's keys and a test's scripted models enter),
//! the secret screen every client and journal gets (`secrets`), and the build session that
//! `build`, `serve`, `worker` and `eval` open (`session`), whose failures are one typed
//! [`BuildError`] that the driver turns into a diagnostic at its edge.
//! design: project.library

pub mod adopt;
pub mod agents_md;
pub mod atomic;
pub mod bench;
pub mod build_plan;
pub mod client;
pub mod config;
pub mod drift;
mod error;
pub mod estimate;
pub mod eval;
pub mod execute;
pub mod hooks;
pub mod planning;
pub mod policy;
pub mod secrets;
pub mod session;
pub mod signals;
pub mod trace;
pub mod worker;

pub use error::BuildError;

use std::path::{Path, PathBuf};

/// A provider that answers every role's requests instead of specc.toml's providers: how
/// the tests and the example recorder drive a build with scripted answers.
#[derive(Clone)]
pub struct Models(pub std::sync::Arc<dyn specc_llm::Provider>);

impl std::fmt::Debug for Models {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Models({})", self.0.name())
    }
}

/// What the caller puts in place of what a project would otherwise find for itself.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Scripted models for every role (see [`Models`]); `None` uses specc.toml's.
    pub models: Option<Models>,
    /// The specc binary, whose `__sandbox` subcommand confines every command a model
    /// proposes; `None` gets the interim runner's partial confinement.
    pub sandbox_helper: Option<PathBuf>,
}

/// The directory that holds `spec` (the current one with no spec, or a bare file name):
/// where its specc.toml and `.specc/` are.
pub fn spec_dir(spec: Option<&Path>) -> PathBuf {
    spec.and_then(Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}
