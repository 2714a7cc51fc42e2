//! specc, the driver: the command line, the concrete salsa database, reading files, and
//! rendering diagnostics. It is the only crate of the front end that does I/O.
//!
//! [`run`] is the whole program with its environment passed in, so tests drive it in-process
//! with captured output.
//! design: driver.exit-status

pub mod check;
mod cli;
mod command_error;
mod commands;
mod json_streams;
pub use commands::explanation;
pub mod db;
mod render;
mod reporter;
mod source;
pub mod telemetry;

use std::ffi::OsString;
use std::io::Write;

pub use render::{DiagnosticFormat, Renderer};
pub use source::{Files, ReadError, read_source};

/// What the driver needs to know about its surroundings, read once by `main`.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// `NO_COLOR` is set and not empty.
    pub no_color: bool,
    pub stdout_is_terminal: bool,
    pub stderr_is_terminal: bool,
    /// A fixed render width (snapshots); `None` lets the renderer decide.
    pub width: Option<usize>,
    /// A provider that answers every role's requests instead of specc.toml's providers:
    /// how the tests and the example recorder (`cargo run -p specc-tests --example
    /// record-example`) drive `specc build` with scripted answers. `None` in the binary.
    pub models: Option<Models>,
    /// The specc binary, whose `__sandbox` subcommand confines every command a model
    /// proposes. The binary sets it to itself; a library caller without one gets the
    /// interim runner's partial confinement (and `specc build` refuses live models on it).
    pub sandbox_helper: Option<std::path::PathBuf>,
    /// `specc build` acts on SIGTERM and SIGINT (stopping cleanly). The binary sets it; a
    /// library caller (the tests) keeps the default actions, since the handlers, once
    /// installed, stay for the whole process (design: runtime.graceful-stop).
    pub signals: bool,
}

pub use specc_project::Models;

impl Env {
    /// No colour, diagnostics at a fixed width of 100: what snapshots and scripts read.
    pub fn plain() -> Env {
        Env {
            no_color: true,
            width: Some(100),
            ..Env::default()
        }
    }

    /// Every role answered by `provider` instead of specc.toml's providers.
    pub fn with_models(mut self, provider: std::sync::Arc<dyn specc_llm::Provider>) -> Env {
        self.models = Some(Models(provider));
        self
    }

    /// Commands confined by the sandbox through `helper` (the specc binary).
    pub fn with_sandbox_helper(mut self, helper: impl Into<std::path::PathBuf>) -> Env {
        self.sandbox_helper = Some(helper.into());
        self
    }

    /// What the project library takes from the caller instead of finding it itself.
    pub(crate) fn overrides(&self) -> specc_project::Overrides {
        specc_project::Overrides {
            models: self.models.clone(),
            sandbox_helper: self.sandbox_helper.clone(),
        }
    }
}

/// Exit statuses, as the design fixes them.
pub mod exit {
    /// No diagnostic of error severity.
    pub const OK: i32 = 0;
    /// At least one diagnostic of error severity.
    pub const ERRORS: i32 = 1;
    /// A usage or I/O error: the command could not do its job at all.
    pub const USAGE: i32 = 2;
}

/// Runs specc with `args` (program name first). Returns the exit status.
pub fn run<I, T>(args: I, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match <cli::Cli as clap::Parser>::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let text = if env.no_color || !env.stderr_is_terminal {
                e.render().to_string()
            } else {
                e.render().ansi().to_string()
            };
            if e.use_stderr() {
                let _ = write!(err, "{text}");
                return exit::USAGE;
            }
            let _ = write!(out, "{text}");
            return exit::OK;
        }
    };
    let result = commands::dispatch(cli, env, out, err);
    let _ = out.flush();
    let _ = err.flush();
    result
}
