//! The bench's table in text: a row per run, then a row per configuration.
//! design: project.bench

use std::io::Write;

use specc_project::bench::{RunResult, Totals};

/// A run's final hidden score, as the table writes it.
pub(super) fn score(r: &RunResult) -> String {
    match (r.passed, r.total) {
        (Some(p), Some(t)) => format!("{p}/{t}"),
        _ => "not scored".to_owned(),
    }
}

fn roles(by: &std::collections::BTreeMap<String, f64>) -> String {
    by.iter()
        .map(|(role, d)| format!("{role} ${d:.4}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn text(
    runs: &[RunResult],
    totals: &[Totals],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<14} {:<22} {:>9} {:>9} {:>9} {:>6} {:>8} {:>13} {:>8}  stopped",
        "case",
        "configuration",
        "score",
        "dollars",
        "tokens",
        "calls",
        "attempts",
        "landed/failed",
        "wall s"
    )?;
    for r in runs {
        writeln!(
            out,
            "{:<14} {:<22} {:>9} {:>9.4} {:>9} {:>6} {:>8} {:>13} {:>8.1}  {}",
            r.case,
            r.configuration,
            score(r),
            r.dollars(),
            r.tokens_by_role.values().sum::<u64>(),
            r.calls,
            r.attempts,
            format!("{}/{}", r.landed, r.failed),
            r.wall_seconds,
            r.stopped.as_deref().unwrap_or("-")
        )?;
        writeln!(out, "{:<37} by role: {}", "", roles(&r.dollars_by_role))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{:<22} {:>5} {:>14} {:>10} {:>9} {:>10}  by role",
        "configuration", "runs", "fully passing", "mean score", "dollars", "tokens"
    )?;
    for t in totals {
        writeln!(
            out,
            "{:<22} {:>5} {:>14} {:>10} {:>9.4} {:>10}  {}",
            t.configuration,
            t.runs,
            format!(
                "{}/{} ({:.0}%)",
                t.fully_passing,
                t.runs,
                t.share_fully_passing * 100.0
            ),
            t.mean_score
                .map_or("-".to_owned(), |s| format!("{:.1}%", s * 100.0)),
            t.dollars,
            t.tokens,
            roles(&t.dollars_by_role)
        )?;
    }
    Ok(())
}
