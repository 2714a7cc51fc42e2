//! The summary at the end of a build: tasks by state (and why each failed one failed),
//! commits and conflicts, tokens and dollars by role, the check of the result, wall time,
//! and where the code is.
//! design: driver.build

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use specc_llm::CallRow;
use specc_llm::cost::summarize;
use specc_runtime::BuildReport;
use specc_state::TaskState;

/// `specc check` on the built tree.
pub(super) struct CheckOutcome {
    pub(super) status: i32,
    pub(super) text: String,
}

pub(super) struct Summary<'a> {
    pub(super) report: &'a BuildReport,
    pub(super) rows: &'a [CallRow],
    pub(super) elapsed: Duration,
    pub(super) out: &'a Path,
    pub(super) check: &'a CheckOutcome,
    pub(super) run: &'a str,
    /// The secrets kept from the models and the journal, by kind (design:
    /// secrets.redaction).
    pub(super) redacted: std::collections::BTreeMap<String, usize>,
}

const STATES: [TaskState; 6] = [
    TaskState::Landed,
    TaskState::UpToDate,
    TaskState::Failed,
    TaskState::Skipped,
    TaskState::Stopped,
    TaskState::Pending,
];

impl Summary<'_> {
    pub(super) fn write_text(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let r = self.report;
        let counts: Vec<String> = STATES
            .iter()
            .map(|s| (s, r.count(*s)))
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| format!("{n} {}", s.as_str().replace('_', " ")))
            .collect();
        writeln!(
            w,
            "build {}: {} work tasks: {}",
            self.run,
            r.tasks.len(),
            if counts.is_empty() {
                "none".to_owned()
            } else {
                counts.join(", ")
            }
        )?;
        for t in r.tasks.iter().filter(|t| {
            matches!(
                t.state,
                TaskState::Failed | TaskState::Skipped | TaskState::Stopped
            )
        }) {
            writeln!(
                w,
                "  {} {}: {}",
                t.state.as_str(),
                t.id,
                t.reason.as_deref().unwrap_or("")
            )?;
        }
        if !r.no_longer_planned.is_empty() {
            writeln!(
                w,
                "no longer in the plan (the code they landed stays): {}",
                r.no_longer_planned.join(", ")
            )?;
        }
        writeln!(
            w,
            "commits: {}, conflicts: {}, merged files: {}",
            r.commits,
            r.conflicts,
            r.merged.len()
        )?;
        let s = summarize(self.rows);
        for l in &s.by_role {
            writeln!(
                w,
                "  {:<10} {:>4} calls {:>9} in {:>8} out  ${:.4}",
                l.name,
                l.calls,
                l.input_tokens + l.cached_input_tokens,
                l.output_tokens,
                l.dollars
            )?;
        }
        writeln!(
            w,
            "tokens: {} in, {} out; cost ${:.4}; {:.1} s",
            s.total.input_tokens + s.total.cached_input_tokens,
            s.total.output_tokens,
            s.total.dollars,
            self.elapsed.as_secs_f64()
        )?;
        if let Some(line) = redacted(&self.redacted) {
            writeln!(w, "{line}")?;
        }
        if !self.check.text.trim().is_empty() {
            write!(w, "check: {}", self.check.text)?;
        }
        writeln!(w, "code: {}", self.out.display())
    }

    pub(super) fn write_json(&self, w: &mut dyn Write) -> std::io::Result<()> {
        let r = self.report;
        let tasks: Vec<serde_json::Value> = r
            .tasks
            .iter()
            .map(|t| serde_json::json!({"id": t.id, "state": t.state.as_str(), "reason": t.reason, "attempts": t.attempts}))
            .collect();
        let s = summarize(self.rows);
        let v = serde_json::json!({
            "event": "summary",
            "run": self.run,
            "tasks": tasks,
            "commits": r.commits,
            "conflicts": r.conflicts,
            "merged": r.merged,
            "no_longer_planned": r.no_longer_planned,
            "stopped": r.stopped,
            "cost": s,
            "seconds": self.elapsed.as_secs_f64(),
            "check_status": self.check.status,
            "redacted": self.redacted,
            "out": self.out.display().to_string(),
        });
        writeln!(w, "{v}")
    }
}

/// The summary line of what was redacted: `redacted: 3 secrets … (aws-access-key 1, …)`,
/// or `None` when nothing was.
fn redacted(counts: &std::collections::BTreeMap<String, usize>) -> Option<String> {
    let total: usize = counts.values().sum();
    if total == 0 {
        return None;
    }
    let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    Some(format!(
        "redacted: {total} secret{} kept from the models and the journal ({})",
        if total == 1 { "" } else { "s" },
        kinds.join(", ")
    ))
}
