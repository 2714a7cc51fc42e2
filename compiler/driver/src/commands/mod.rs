//! One module per command; `dispatch` picks one.

mod build;
mod check;
mod cost;
mod explain;
pub use explain::explanation;
mod pin;
mod plan;
mod plan_tasks;
mod planning;
mod sandbox;
mod status;

use std::io::Write;

use specc_ir::Diagnostic;

use crate::cli::{Cli, Command, MessageFormat};
use crate::render::{DiagnosticFormat, Renderer};
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn dispatch(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match cli.command {
        Command::Plan(args) => plan::run(&args, env, out, err),
        Command::Build(args) => build::run(&args, env, out, err),
        Command::Check(args) => check::run(&args, env, out, err),
        Command::Pin(args) => pin::run(&args, env, out, err),
        Command::Cost(args) => cost::run(&args, env, out, err),
        Command::Status(args) => status::run(&args, env, out, err),
        Command::Explain(args) => explain::run(&args, out, err),
        Command::Sandbox(args) => sandbox::run(&args, env, out, err),
        Command::SandboxHelper { args } => specc_runtime::sandbox::helper::main(&args),
    }
}

/// Where diagnostics go and how they look, for one command run.
pub(crate) struct Reporter {
    renderer: Renderer,
    errors: usize,
    warnings: usize,
}

impl Reporter {
    pub(crate) fn new(format: MessageFormat, env: &Env) -> Reporter {
        let format = match format {
            MessageFormat::Json => DiagnosticFormat::Json,
            MessageFormat::Human if env.no_color || !env.stderr_is_terminal => {
                DiagnosticFormat::Plain
            }
            MessageFormat::Human => DiagnosticFormat::Color,
        };
        Reporter {
            renderer: Renderer::new(format, env.width.unwrap_or(100)),
            errors: 0,
            warnings: 0,
        }
    }

    pub(crate) fn report(&mut self, files: &Files, d: &Diagnostic, err: &mut dyn Write) {
        if d.is_error() {
            self.errors += 1;
        } else if d.severity == specc_ir::Severity::Warning {
            self.warnings += 1;
        }
        let _ = self.renderer.render(files, d, err);
    }

    /// Errors and warnings reported since the last [`Reporter::reset`].
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.errors, self.warnings)
    }

    /// Starts counting afresh (`--watch` reports each re-check on its own).
    pub(crate) fn reset(&mut self) {
        self.errors = 0;
        self.warnings = 0;
    }

    pub(crate) fn is_json(&self) -> bool {
        self.renderer.is_json()
    }

    /// The exit status for a run that completed: 1 if any error was reported.
    pub(crate) fn status(&self) -> i32 {
        if self.errors > 0 {
            exit::ERRORS
        } else {
            exit::OK
        }
    }
}
