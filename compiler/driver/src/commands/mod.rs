//! One module per command; `dispatch` picks one.

mod adopt;
mod approval;
mod atomic;
mod build;
mod check;
mod cost;
mod drift;
mod eval;
mod explain;
mod init;
mod metrics;
pub use explain::explanation;
mod pin;
mod plan;
mod plan_edits;
mod plan_tasks;
mod planning;
mod preview;
mod report;
mod runners;
mod sandbox;
mod serve;
mod show;
mod state_url;
mod status;
mod trace;
mod worker;

use std::io::Write;

use specc_ir::Diagnostic;

use crate::cli::{Cli, Command, ERROR_LIMIT, MessageFormat};
use crate::render::{DiagnosticFormat, Renderer};
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn dispatch(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // JSON mode: every JSON object on stdout (diagnostics included), people's lines on stderr.
    let json = match &cli.command {
        Command::Plan(a) => a.messages.message_format,
        Command::Build(a) | Command::Approve(a) => a.messages.message_format,
        Command::Serve(a) => a.build.messages.message_format,
        Command::Check(a) => a.messages.message_format,
        Command::Pin(a) => a.messages.message_format,
        _ => MessageFormat::Human,
    } == MessageFormat::Json;
    if json {
        let streams = crate::json_streams::Streams::new(out, err);
        let (mut out, mut err) = (
            crate::json_streams::Out(&streams),
            crate::json_streams::Err(&streams),
        );
        let status = run_command(cli, env, &mut out, &mut err);
        let _ = err.flush();
        return status;
    }
    run_command(cli, env, out, err)
}

fn run_command(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match cli.command {
        Command::Init(args) => init::run(&args, env, out, err),
        Command::Adopt(args) => adopt::run(&args, env, out, err),
        Command::Plan(args) => plan::run(&args, env, out, err),
        Command::Build(args) => build::run(&args, env, out, err),
        Command::Approve(mut args) => {
            args.approve = Some(crate::cli::Approve::Saved);
            build::run(&args, env, out, err)
        }
        Command::Serve(args) => serve::run(&args, env, out, err),
        Command::Worker(args) => worker::run(&args, env, out, err),
        Command::Check(args) => check::run(&args, env, out, err),
        Command::Pin(args) => pin::run(&args, env, out, err),
        Command::Cost(args) => cost::run(&args, env, out, err),
        Command::Status(args) => status::run(&args, env, out, err),
        Command::Show(args) => show::run(&args, env, out, err),
        Command::Trace(args) => trace::run(&args, env, out, err),
        Command::Drift(args) => drift::run(&args, env, out, err),
        Command::Eval(args) => eval::run(&args, env, out, err),
        Command::Report(args) => report::run(&args, env, out, err),
        Command::Explain(args) => explain::run(&args, out, err),
        Command::Sandbox(args) => sandbox::run(&args, env, out, err),
        Command::SandboxHelper { args } => specc_sandbox::helper::main(&args),
    }
}

/// The directory that holds `spec` (the current one with no spec, or a bare file name):
/// where its specc.toml and `.specc/` are.
pub(crate) fn spec_dir(spec: Option<&std::path::Path>) -> std::path::PathBuf {
    spec.and_then(std::path::Path::parent)
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."))
        .to_path_buf()
}

/// W0008 when `--record` could not write some exchanges of `client`.
pub(crate) fn recording_warning(client: &specc_llm::Client) -> Option<Diagnostic> {
    let (n, why) = client.record_failures()?;
    Some(
        Diagnostic::new(
            specc_ir::codes::RECORDING_INCOMPLETE,
            format!(
                "{n} model exchange{} could not be written to the recording ({why}); the answers were used and are in the ledger",
                if n == 1 { "" } else { "s" }
            ),
        )
        .with_help("the recording will not replay this run whole: free space or fix the path, then record again"),
    )
}

/// Where diagnostics go and how they look, for one command run. At most `limit`
/// diagnostics of one code are shown (clang's `-ferror-limit`); the rest are counted, and
/// [`Reporter::flush_suppressed`] says how many in one line per code.
/// design: driver.error-limit
pub(crate) struct Reporter {
    renderer: Renderer,
    errors: usize,
    warnings: usize,
    /// Diagnostics shown per code; 0: no limit.
    limit: usize,
    shown: std::collections::HashMap<&'static str, usize>,
    suppressed: std::collections::BTreeMap<&'static str, usize>,
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
            limit: ERROR_LIMIT,
            shown: Default::default(),
            suppressed: Default::default(),
        }
    }

    /// Shows at most `limit` diagnostics of one code (0: all).
    pub(crate) fn with_limit(mut self, limit: usize) -> Reporter {
        self.limit = limit;
        self
    }

    pub(crate) fn report(&mut self, files: &Files, d: &Diagnostic, err: &mut dyn Write) {
        if d.is_error() {
            self.errors += 1;
        } else if d.severity == specc_ir::Severity::Warning {
            self.warnings += 1;
        }
        let shown = self.shown.entry(d.code).or_default();
        if self.limit > 0 && *shown >= self.limit {
            *self.suppressed.entry(d.code).or_default() += 1;
            return;
        }
        *shown += 1;
        let _ = self.renderer.render(files, d, err);
    }

    /// One line per code whose diagnostics passed the limit: how many more there were.
    pub(crate) fn flush_suppressed(&mut self, err: &mut dyn Write) {
        for (code, n) in std::mem::take(&mut self.suppressed) {
            let message = format!(
                "{n} more {code} diagnostic{} not shown (--error-limit {}; --error-limit 0 shows all)",
                if n == 1 { "" } else { "s" },
                self.limit
            );
            let _ = if self.is_json() {
                writeln!(
                    err,
                    "{}",
                    serde_json::json!({"type": "suppressed", "code": code, "count": n, "message": message})
                )
            } else {
                writeln!(err, "note: {message}")
            };
        }
    }

    /// Errors and warnings reported since the last [`Reporter::reset`], shown or not.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.errors, self.warnings)
    }

    /// Starts counting afresh (`--watch` reports each re-check on its own).
    pub(crate) fn reset(&mut self) {
        self.errors = 0;
        self.warnings = 0;
        self.shown.clear();
        self.suppressed.clear();
    }

    pub(crate) fn is_json(&self) -> bool {
        self.renderer.is_json()
    }

    /// The exit status for a run that completed: 1 if any error was reported. Says first
    /// how many diagnostics the limit kept back.
    pub(crate) fn finish(&mut self, err: &mut dyn Write) -> i32 {
        self.flush_suppressed(err);
        self.status()
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
