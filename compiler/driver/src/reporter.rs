//! Where a command's diagnostics go and how they look: the `Reporter` every command
//! reports through (its error limit, its counts, its exit status), and the warning a
//! recording that could not be written gives.
//! design: driver.error-limit

use std::io::Write;

use specc_ir::Diagnostic;

use crate::cli::{ERROR_LIMIT, MessageFormat};
use crate::render::{DiagnosticFormat, Renderer};
use crate::source::Files;
use crate::{Env, exit};

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
