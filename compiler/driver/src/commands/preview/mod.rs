//! The cost preview of `specc build --dry-run` and `specc plan --estimate`: after planning
//! (the planner's calls paid and cached, or none with `--provider outline`), without running
//! any worker, the task tree and per work task its context, instructions, scope and checks,
//! whether it is up to date, and the estimate of worker, reviewer and merge-agent tokens and
//! dollars (`estimate.rs`), per task and in total, with how it was made.
//! design: driver.preview

mod planned;
mod render;

use std::collections::BTreeMap;
use std::io::Write;

use specc_llm::{Ledger, Role};

pub(in crate::commands) use self::planned::{Context, PreviewPlan};
use crate::cli::Format;
use specc_project::estimate::{Inputs, estimate};

/// Writes the preview of `planned` as text or JSON.
pub(in crate::commands) fn write(
    planned: &PreviewPlan<'_>,
    cx: &Context<'_>,
    format: Format,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let text = std::fs::read_to_string(cx.dir.join("specc.toml")).unwrap_or_default();
    let runners = specc_sandbox::parse_runners(&text).unwrap_or_default();
    let lenses = specc_runtime::ReviewConfig::parse(&text)
        .map(|r| r.lenses.len())
        .unwrap_or(0);
    let (orders, _) =
        specc_runtime::work_orders(planned.tree, planned.tasks, planned.decisions, &runners);
    let db = cx.dir.join(".specc/state.db");
    let landed = specc_state::read_landed(&db).unwrap_or_default();
    let history = Ledger::open_existing(&db)
        .and_then(|l| l.rows())
        .unwrap_or_default();
    let mut prices = BTreeMap::new();
    for role in [Role::Worker, Role::Reviewer, Role::Merger] {
        if let Some(r) = cx.llm.role(role) {
            prices.insert(role.as_str(), cx.llm.price(&r.model));
        }
    }
    let est = estimate(&Inputs {
        orders: &orders,
        field_guide: cx.field_guide,
        landed: &landed,
        prices,
        lenses,
        steps: cx.steps,
        history: &history,
    });
    let budget = cx.llm.budget.dollars;
    match format {
        Format::Json => {
            let v = serde_json::json!({
                "plan": {"tasks": planned.tasks.len(), "work_leaves": orders.len(),
                         "planner_calls": planned.calls, "outline": planned.outline},
                "estimate": est,
                "budget": budget,
            });
            writeln!(out, "{v}")
        }
        Format::Text => render::text(out, planned, &est, budget),
    }
}
