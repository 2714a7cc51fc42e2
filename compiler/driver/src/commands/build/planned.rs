//! Planning a build: the planner cache of `specc plan`, then each work leaf's order and the
//! files the repository is seeded with (the planned design documents and the field guide),
//! with what planning had to say.
//! design: driver.build

use std::collections::BTreeMap;

use specc_ir::{Diagnostic, IntentTree, codes};
use specc_passes::plan::{Commands, design_docs};
use specc_plan::field_guide;
use specc_runtime::Plan;

use super::session::Session;
use crate::commands::planning;

/// A planned spec, ready to run, and what planning had to say.
pub(super) struct Planned {
    pub(super) plan: Plan,
    pub(super) diagnostics: Vec<Diagnostic>,
}

/// Plans `tree` (the planner cache in `.specc/`), gathers each work leaf's order, and the
/// files the repository is seeded with: the planned design documents and the field guide.
/// A failed plan is its diagnostics and the exit status.
pub(super) async fn plan(
    s: &Session,
    tree: &IntentTree,
    guide: &str,
) -> Result<Planned, (Vec<Diagnostic>, i32)> {
    // What the sandbox's commands find on their PATH: a plan's acceptance entries must start
    // with one of them (design: passes.plan-acceptance).
    let commands = Commands::new(specc_sandbox::commands_on_path(&s.cfg.sandbox_read));
    let (planned, notes) = planning::plan(
        &s.client,
        tree,
        &s.cfg.llm,
        s.cfg.limits,
        guide,
        &commands,
        &s.state,
    )
    .await;
    let planned = planned.map_err(|e| {
        let status = planning::failure_status(&e);
        let mut all = notes.clone();
        all.extend(planning::failure(e));
        (all, status)
    })?;
    let mut seed: BTreeMap<String, String> = design_docs(&planned.decisions)
        .into_iter()
        .map(|(file, text)| (format!("design-docs/planned-{file}"), text))
        .collect();
    if !guide.is_empty() {
        seed.insert(field_guide::PATH.to_owned(), guide.to_owned());
    }
    let (orders, unrunnable) =
        specc_runtime::work_orders(tree, &planned.tasks, &planned.decisions, &s.cfg.runners);
    let mut diagnostics = notes;
    diagnostics.extend(planned.tree.diagnostics);
    // A binding requirement no work leaf covers is reported here as in `specc plan`.
    let covered: std::collections::HashSet<String> = planned
        .tasks
        .iter()
        .filter(|t| t.kind == specc_ir::plan::ChildKind::Work)
        .flat_map(|t| t.covers_requirements.iter().cloned())
        .collect();
    diagnostics.extend(specc_passes::plan::uncovered(tree, &covered));
    diagnostics.extend(unrunnable.into_iter().map(|u| {
        Diagnostic::new(
            codes::CHECK_NOT_RUN,
            format!(
                "the `{}` test block of `{}` does not gate task `{}`: specc build cannot run it yet",
                u.runner, u.node, u.task
            ),
        )
    }));
    diagnostics.extend(orders.iter().filter(|o| o.checks.is_empty()).map(|o| {
        Diagnostic::new(
            codes::NO_ACCEPTANCE,
            format!(
                "task `{}` has no acceptance check: whatever it writes lands when it calls `done`",
                o.task.id
            ),
        )
        .with_help("give its requirements a `sh test` block in the spec, or have the planner give it acceptance commands")
    }));
    Ok(Planned {
        plan: Plan {
            tasks: planned.tasks,
            orders,
            seed,
            force: Vec::new(),
        },
        diagnostics,
    })
}
