//! `specc check`'s output: every diagnostic, then one summary line.

use crate::check::Report;
use crate::reporter::Reporter;
use crate::source::Files;
use std::io::Write;

/// Renders every diagnostic, then one summary line on stdout (a JSON object with
/// `--message-format json`).
pub(super) fn print(
    reporter: &mut Reporter,
    files: &Files,
    report: &Report,
    out: &mut dyn Write,
    err: &mut dyn Write,
) {
    for d in &report.diagnostics {
        reporter.report(files, d, err);
    }
    reporter.flush_suppressed(err);
    let (errors, warnings) = reporter.counts();
    let _ = if reporter.is_json() {
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "sources": report.sources,
                "design_docs": report.docs,
                "decisions": report.decisions,
                "references": report.references,
                "requirement_references": report.requirement_references,
                "errors": errors,
                "warnings": warnings,
            })
        )
    } else {
        let n = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        // Requirement references are counted only where there are some.
        let requirements = if report.requirement_references > 0 {
            format!(
                " and {}",
                n(report.requirement_references, "requirement reference")
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "checked {} and {}: {} to {}{requirements}; {}, {}",
            n(report.sources, "source file"),
            n(report.docs, "design document"),
            n(report.references, "reference"),
            n(report.decisions, "decision"),
            n(errors, "error"),
            n(warnings, "warning"),
        )
    };
}
