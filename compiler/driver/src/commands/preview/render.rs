//! The preview as text: the plan's size, a line per work task (its context, instructions,
//! checks, scope, whether it runs, its worker tokens and dollars), the totals by role
//! against the budget, and how the estimate was made.
//! design: driver.preview

use std::io::Write;

use super::planned::PreviewPlan;
use specc_project::estimate::{Estimate, Range};

/// Tokens in a few characters: `950`, `12k`, `1.2M`.
fn tokens(n: f64) -> String {
    match n {
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e4 => format!("{:.0}k", n / 1e3),
        n if n >= 1e3 => format!("{:.1}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

fn dollars(d: f64) -> String {
    if d >= 1.0 {
        format!("${d:.2}")
    } else {
        format!("${d:.4}")
    }
}

fn range(r: Range, f: fn(f64) -> String) -> String {
    format!("{} ({}–{})", f(r.mid), f(r.low), f(r.high))
}

pub(super) fn text(
    out: &mut dyn Write,
    planned: &PreviewPlan<'_>,
    e: &Estimate,
    budget: Option<f64>,
) -> std::io::Result<()> {
    let leaves = e.tasks.len();
    let how = if planned.outline {
        "the outline planner answered: no model was asked, and the real planner's plan will differ"
            .to_owned()
    } else if planned.calls == 0 {
        "every planner answer came from the cache: nothing was paid now".to_owned()
    } else {
        format!(
            "the planner made {} call{} now; its answers are cached, so the build does not pay for them again",
            planned.calls,
            if planned.calls == 1 { "" } else { "s" }
        )
    };
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    writeln!(
        out,
        "plan: {}, {} ({how})",
        plural(planned.tasks.len(), "task", "tasks"),
        plural(leaves, "work leaf", "work leaves")
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<28} {:>7} {:>6} {:>6}  {:<22} {:>22}  dollars",
        "work task", "context", "instr", "checks", "writes", "worker tokens"
    )?;
    for t in &e.tasks {
        let writes = t.write_scope.join(", ");
        let writes: String = if writes.chars().count() > 22 {
            format!("{}…", writes.chars().take(21).collect::<String>())
        } else {
            writes
        };
        let (worker, cost) = if t.up_to_date {
            ("up to date".to_owned(), String::new())
        } else {
            let w = t.spend.get("worker").map(|s| range(s.tokens(), tokens));
            let mut d = Range::default();
            for s in t.spend.values() {
                d.low += s.dollars.low;
                d.mid += s.dollars.mid;
                d.high += s.dollars.high;
            }
            (
                w.unwrap_or_else(|| "no worker role".to_owned()),
                range(d, dollars),
            )
        };
        writeln!(
            out,
            "{:<28} {:>7} {:>6} {:>6}  {:<22} {:>22}  {cost}",
            t.id,
            tokens(t.context_tokens as f64),
            t.instructions_chars,
            t.checks,
            writes,
            worker
        )?;
    }
    let runs: Vec<&str> = e
        .tasks
        .iter()
        .filter(|t| !t.up_to_date)
        .map(|t| t.id.as_str())
        .collect();
    writeln!(out)?;
    writeln!(
        out,
        "a build runs {} of {leaves} work leaves; {} are up to date",
        runs.len(),
        leaves - runs.len()
    )?;
    writeln!(out)?;
    writeln!(out, "estimate {:>30} {:>30}", "tokens", "dollars")?;
    for (role, s) in &e.totals {
        writeln!(
            out,
            "  {role:<9} {:>28} {:>30}",
            range(s.tokens(), tokens),
            range(s.dollars, dollars)
        )?;
    }
    let cap = budget.map_or_else(
        || "no budget cap".to_owned(),
        |b| format!("the budget is {}", dollars(b)),
    );
    writeln!(
        out,
        "  {:<9} {:>28} {:>30}  ({cap})",
        "total",
        "",
        range(e.total_dollars, dollars)
    )?;
    writeln!(out)?;
    writeln!(out, "how:")?;
    for m in &e.method {
        writeln!(out, "  - {m}")?;
    }
    Ok(())
}
