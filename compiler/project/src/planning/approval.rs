//! Plan approval: `specc build --approve plan` saves the planners' answers it previewed in
//! `.specc/approved-plan.json`; `specc build --approve` runs a plan only if planning it asks
//! the planner nothing and gives exactly those answers. Hand edits of the planned documents
//! are applied on top, whichever plan runs (`plan_edits`).
//! design: driver.approval

use std::collections::BTreeMap;
use std::path::Path;

use specc_ir::plan::PlannerAnswer;
use specc_ir::{Diagnostic, codes};

const FILE: &str = "approved-plan.json";

/// Saves `answers` as the approved plan.
pub fn save(
    state: &Path,
    answers: &BTreeMap<String, PlannerAnswer>,
) -> Result<(), Box<Diagnostic>> {
    let path = state.join(FILE);
    serde_json::to_vec_pretty(answers)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            std::fs::create_dir_all(state)?;
            crate::atomic::write(state, &path, &bytes)
        })
        .map_err(|e| {
            Box::new(
                Diagnostic::new(
                    codes::IO_ERROR,
                    format!(
                        "cannot save the plan for approval in {}: {e}",
                        path.display()
                    ),
                )
                .with_help("check that .specc/ beside the spec is writable"),
            )
        })
}

/// Whether `answers` are the approved plan: E0410 if none was approved or they differ,
/// naming the tasks whose answers differ.
pub fn check(
    state: &Path,
    spec: &Path,
    answers: &BTreeMap<String, PlannerAnswer>,
) -> Result<(), Box<Diagnostic>> {
    let path = state.join(FILE);
    let approved: BTreeMap<String, PlannerAnswer> = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            not_approved(
                spec,
                format!("the approved plan {} cannot be read ({e})", path.display()),
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(not_approved(
                spec,
                "no plan was approved for this spec yet".to_owned(),
            ));
        }
        Err(e) => {
            return Err(not_approved(
                spec,
                format!("the approved plan {} cannot be read ({e})", path.display()),
            ));
        }
    };
    let changed: Vec<String> = approved
        .keys()
        .chain(answers.keys())
        .filter(|task| approved.get(*task) != answers.get(*task))
        .map(|task| specc_passes::plan::task_name(task))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    Err(not_approved(
        spec,
        format!(
            "the plan the spec gives now is not the approved one: {} changed",
            changed.join(", ")
        ),
    ))
}

/// E0410 for a planner call that `--approve` would have had to make.
pub fn would_ask(spec: &Path) -> Box<Diagnostic> {
    not_approved(
        spec,
        "planning would ask the planner again: the spec, the field guide, specc.toml's planner or limits, the commands the sandbox offers, or the plan cache in .specc/ changed since the plan was approved".to_owned(),
    )
}

/// What `--approve plan` prints after the preview (on stderr).
pub fn saved_message(spec: &Path, edited: usize) -> String {
    let spec = spec.display();
    let edits = if edited == 0 {
        String::new()
    } else {
        format!(" ({edited} decision(s) as edited by hand)")
    };
    format!(
        "plan saved for approval{edits}; no worker ran.\n\
         edit a decision in design-docs/planned-*.md beside the spec if you wish, then run it:\n  \
         specc build {spec} --approve\n"
    )
}

#[cold]
fn not_approved(spec: &Path, why: String) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::new(codes::PLAN_NOT_APPROVED, why).with_help(format!(
            "preview and approve the plan as it is now: `specc build {} --approve plan`",
            spec.display()
        )),
    )
}

/// Fires the `plan_awaiting_approval` hooks of the specc.toml in `dir` (or `config`) for the
/// plan of `spec` just saved, with how many tasks it has, and waits for them: the ones that
/// did not end well (design: project.hooks). No specc.toml, no hooks.
pub fn awaiting(
    spec: &Path,
    config: Option<&Path>,
    tasks: &[specc_ir::plan::TaskNode],
    edited: usize,
) -> Vec<crate::hooks::HookFailure> {
    let dir = crate::spec_dir(Some(spec));
    let Ok(cfg) = crate::config::load_file(config, &dir) else {
        return Vec::new();
    };
    let hidden = crate::hooks::hidden(&cfg.key_vars);
    let hooks = crate::hooks::Hooks::new(cfg.hooks, &dir, hidden);
    let work = tasks
        .iter()
        .filter(|t| t.kind == specc_ir::plan::ChildKind::Work)
        .count();
    let fields = serde_json::json!({
        "spec": spec,
        "plan": dir.join(".specc").join(FILE),
        "tasks": tasks.len(),
        "work_tasks": work,
        "decisions_edited_by_hand": edited,
        "approve": format!("specc build {} --approve", spec.display()),
    });
    hooks.fire(crate::hooks::HookEvent::PlanAwaitingApproval, fields);
    hooks.finish()
}
