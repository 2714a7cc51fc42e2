//! Planning a build: the planner cache of `specc plan`, then each work leaf's order and the
//! files the repository is seeded with (the planned design documents and the field guide),
//! with what planning had to say. A plan that cannot run is a [`Refused`]: the notes so
//! far and why, which the driver reports.
//! design: driver.build, project.library

use std::collections::BTreeMap;
use std::path::Path;

use specc_ir::{Diagnostic, IntentTree, codes};
use specc_passes::plan::{Commands, design_docs};
use specc_plan::field_guide;
use specc_runtime::Plan;

use crate::planning::edits::{Applied, Edits};
use crate::planning::{self, approval};
use crate::session::Session;

/// A planned spec, ready to run, and what planning had to say.
pub struct PlannedBuild {
    pub plan: Plan,
    pub diagnostics: Vec<Diagnostic>,
    /// The decisions taken from a person's edit.
    pub edited: Vec<Applied>,
}

/// A plan that cannot run: what planning said before it stopped, and why.
pub struct Refused {
    pub notes: Vec<Diagnostic>,
    pub why: Why,
}

/// Why a plan cannot run.
pub enum Why {
    /// `--approve` and the plan would need a planner call: nobody approved it (E0410).
    WouldAsk,
    /// `--approve` and the plan is not the approved one (E0410, as approval says).
    NotApproved(Box<Diagnostic>),
    /// Planning failed.
    Failed(specc_plan::PlanError),
}

/// Plans `tree` (the planner cache in `.specc/`, the hand edits of the planned documents
/// beside the spec applied), gathers each work leaf's order, and the files the repository
/// is seeded with: the planned design documents and the field guide. With `approved`, the
/// planner is asked nothing and the plan must be the approved one (E0410); a plan refused
/// for approval ends the run (nothing ran) unless it is resumed.
pub async fn plan(
    s: &Session,
    tree: &IntentTree,
    guide: &str,
    approved: bool,
    spec: &Path,
) -> Result<PlannedBuild, Refused> {
    // What the sandbox's commands find on their PATH: a plan's acceptance entries must start
    // with one of them (design: passes.plan-acceptance).
    let commands = Commands::new(specc_sandbox::commands_on_path(&s.cfg.sandbox_read));
    let (mut edits, mut notes) = Edits::gather(&s.dir, &s.state);
    let mut limits = s.cfg.limits;
    if approved {
        // The approved plan is in the cache: a call would be a plan nobody approved.
        limits.planner_calls = 0;
    }
    let inputs = planning::Inputs {
        client: &s.client,
        config: &s.cfg.llm,
        limits,
        guide,
        commands: &commands,
        state: &s.state,
    };
    let (planned, planning_notes) = planning::plan(tree, inputs, &mut edits).await;
    notes.extend(planning_notes);
    let refused = |notes: Vec<Diagnostic>, why: Why| {
        // Nothing ran: the run ends here rather than waiting to be resumed.
        if !s.resumed {
            let _ = s.journal.finish_run(&s.run, "not approved");
        }
        Refused { notes, why }
    };
    let planned = match planned {
        Ok(p) => p,
        Err(specc_plan::PlanError::CallLimit(0)) if approved => {
            return Err(refused(notes, Why::WouldAsk));
        }
        Err(e) => {
            return Err(Refused {
                notes,
                why: Why::Failed(e),
            });
        }
    };
    if approved && let Err(d) = approval::check(&s.state, spec, &planned.as_planned) {
        return Err(refused(notes, Why::NotApproved(d)));
    }
    // The planned documents beside the spec stay current once specc has written them
    // (`specc plan`, a preview), with the hand edits in them kept.
    if edits.known()
        && let Err(d) = edits.write(&planned.decisions)
    {
        notes.push(*d);
    }
    let seed = seed(&planned.decisions, guide);
    let (mut orders, unrunnable) =
        specc_runtime::work_orders(tree, &planned.tasks, &planned.decisions, &s.cfg.runners);
    specc_runtime::with_adopted_checks(&mut orders, &s.adopted_checks, &s.cfg.runners);
    let mut diagnostics = notes;
    let waived = planned.waived();
    diagnostics.extend(planned.tree.diagnostics);
    diagnostics.extend(gaps(tree, &planned.tasks, waived, &unrunnable, &orders));
    Ok(PlannedBuild {
        plan: Plan {
            tasks: planned.tasks,
            orders,
            seed,
            force: Vec::new(),
            spec: std::sync::Arc::new(specc_runtime::SpecIndex::new(
                tree.clone(),
                &planned.decisions,
            )),
        },
        diagnostics,
        edited: planned.edited,
    })
}

/// The files the repository is seeded with: the planned design documents and the field
/// guide.
fn seed(decisions: &[specc_ir::plan::PlannedDecision], guide: &str) -> BTreeMap<String, String> {
    let mut seed: BTreeMap<String, String> = design_docs(decisions)
        .into_iter()
        .map(|(file, text)| (format!("design-docs/planned-{file}"), text))
        .collect();
    if !guide.is_empty() {
        seed.insert(field_guide::PATH.to_owned(), guide.to_owned());
    }
    seed
}

/// What the plan leaves uncovered or unchecked: a binding requirement no work leaf covers
/// (as in `specc plan`; one a planner waived with `no_code` needs none), a test block no
/// task can run, and a task with no acceptance check.
fn gaps(
    tree: &IntentTree,
    tasks: &[specc_ir::plan::TaskNode],
    waived: impl IntoIterator<Item = String>,
    unrunnable: &[specc_runtime::Unrunnable],
    orders: &[specc_runtime::WorkOrder],
) -> Vec<Diagnostic> {
    let covered: std::collections::HashSet<String> = tasks
        .iter()
        .filter(|t| t.kind == specc_ir::plan::ChildKind::Work)
        .flat_map(|t| t.covers_requirements.iter().cloned())
        .chain(waived)
        .collect();
    let mut out = specc_passes::plan::uncovered(tree, &covered);
    out.extend(unrunnable.iter().map(|u| {
        Diagnostic::new(
            codes::CHECK_NOT_RUN,
            format!(
                "the `{}` test block of `{}` does not gate task `{}`: specc build cannot run it yet",
                u.runner, u.node, u.task
            ),
        )
    }));
    out.extend(orders.iter().filter(|o| o.checks.is_empty()).map(|o| {
        Diagnostic::new(
            codes::NO_ACCEPTANCE,
            format!(
                "task `{}` has no acceptance check: whatever it writes lands when it calls `done`",
                o.task.id
            ),
        )
        .with_help("give its requirements a `sh test` block in the spec, or have the planner give it acceptance commands")
    }));
    out
}
