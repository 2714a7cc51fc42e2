//! Re-planning a work leaf: after a failed attempt, after its worker disputed one of its
//! checks, and once its ladder is exhausted, by the parent planner that planned it (with
//! the parent task, the leaf's siblings and every attempt's failure). The planner answers
//! `replan_task`: new instructions and, with a reason, new acceptance commands or a new
//! write scope when the old ones were wrong. The spec's own test blocks are the user's and
//! stay; acceptance commands are checked as at plan time (E0317) and scopes as paths inside
//! the repository (E0313), so a re-plan cannot reach outside the repository or hand a
//! worker prose to run.
//! design: runtime.escalation
//! design: runtime.disputes

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::json;
use specc_ir::{Diagnostic, codes};
use specc_llm::{Client, Role, Tool};
use specc_passes::plan::{Commands, acceptance_problem, scope_problem};

use specc_plan::{ForcedCall, PlanError};
use specc_state::Journal;

use super::acceptance::Check;
use super::context::WorkOrder;
use crate::tools::Dispute;

pub(super) const TOOL: &str = "replan_task";

/// Why the leaf is re-planned.
pub(super) enum Why<'a> {
    /// An attempt failed.
    Failed(&'a str),
    /// Its worker disputes one of its checks.
    Disputed(&'a Dispute),
    /// Its ladder is exhausted: its parent planner re-plans it with every failure.
    Exhausted(&'a [String]),
}

/// A re-plan: new instructions, and what else changed and why.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Replan {
    pub(super) instructions: String,
    /// The task's own acceptance commands, replaced; `None`: unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) acceptance: Option<Vec<String>>,
    /// The write scope, replaced; `None`: unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) write_scope: Option<Vec<String>>,
    /// Why: what was wrong with the checks or the scope, or why a disputed check stays.
    #[serde(default)]
    pub(super) reason: String,
}

impl Replan {
    /// What it changes besides the instructions, in words (`acceptance`, `write scope`).
    pub(super) fn changes(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.acceptance.is_some() {
            out.push("acceptance");
        }
        if self.write_scope.is_some() {
            out.push("write scope");
        }
        out
    }

    /// Applies it to `order`: the task's acceptance checks are replaced (the spec's stay,
    /// after them), and its scope. The fingerprint stays the plan's: a re-plan is how the
    /// build carried the task out, journaled, not a new task.
    pub(super) fn apply(&self, order: &mut WorkOrder) {
        order.task.instructions = self.instructions.clone();
        if let Some(acceptance) = &self.acceptance {
            let spec: Vec<Check> = order
                .checks
                .iter()
                .filter(|c| !c.name.starts_with("acceptance #"))
                .cloned()
                .collect();
            order.checks = acceptance
                .iter()
                .enumerate()
                .map(|(i, a)| Check::acceptance(i + 1, a))
                .chain(spec)
                .collect();
            order.task.acceptance = acceptance.clone();
        }
        if let Some(scope) = &self.write_scope {
            order.task.write_scope = scope.clone();
        }
    }
}

/// Applies the re-plan a journaled step-0 `replan` body holds to `order` (a journal from
/// before re-plans could change checks holds the instructions only). Whether it held one.
pub(crate) fn apply_journaled(order: &mut WorkOrder, body: &serde_json::Value) -> bool {
    let replan = serde_json::from_value::<Replan>(body["replan"].clone())
        .ok()
        .or_else(|| {
            let instructions = body["replanned"].as_str()?.to_owned();
            Some(Replan {
                instructions,
                ..Replan::default()
            })
        });
    match replan {
        Some(r) => {
            r.apply(order);
            true
        }
        None => false,
    }
}

const SYSTEM: &str = "You are specc's planner: you planned the work task below, and it needs you \
    again. Rewrite its instructions so that a worker that only follows instructions can succeed: \
    same goal, same decisions and requirements, explicit steps, and what to do about what went \
    wrong. If a check or the write scope is what is wrong — a check that tests something the \
    task does not ask for, or that correct work cannot pass, or a scope that leaves out a file \
    the task must write or has no room to keep every file under task.line_budget lines (the VCS \
    refuses a landing that grows a file past it) — replace it (`acceptance`, `write_scope`) and say why in `reason`. A \
    check the work failed because the work is wrong stays: never weaken a check to let wrong \
    work land. The checks named `spec …` are the user's test blocks: they cannot be changed. \
    Answer only by calling replan_task.";

const SYSTEM_PARENT: &str = "You are specc's planner for the parent task below. One of the work \
    tasks you planned failed every attempt: its worker, a re-plan of its instructions and any \
    stronger model. Re-plan it with everything that went wrong: rewrite its instructions, and \
    replace its acceptance commands or its write scope (keeping clear of its siblings' scopes, \
    with room to keep every file under task.line_budget lines) where they are what is wrong, \
    saying why in `reason`. Never weaken a check to let wrong work land; the checks named \
    `spec …` are the user's and cannot be changed. Answer only by calling replan_task.";

/// The `replan_task` tool: its parameters say what each field may hold.
fn tool() -> Tool {
    Tool {
        name: TOOL.to_owned(),
        description: "Submit the task's new instructions, and its new acceptance commands or write scope if they change.".to_owned(),
        parameters: json!({"type": "object", "required": ["instructions", "reason"],
            "properties": {
                "instructions": {"type": "string", "description": "The task's new instructions, complete: they replace the old ones for the next attempt."},
                "acceptance": {"type": "array", "items": {"type": "string"}, "description": "Only to replace the task's own acceptance commands (not the `spec …` checks): each a shell command run by `bash -e -o pipefail -c` from the repository's root after the worker's `done`: exit status 0 passes, and the first failing line or pipe stage fails it (`cargo test --offline`, `test -f README.md`). Leave it out to keep them."},
                "write_scope": {"type": "array", "items": {"type": "string"}, "description": "Only to replace the write scope: paths or globs relative to the repository's root (`src/semver/**`, `Cargo.toml`). Leave it out to keep it."},
                "reason": {"type": "string", "description": "What was wrong and what you changed; for a disputed check, why it changes or why it stays."}
            }}),
    }
}

/// What became of the leaf's siblings so far, by id: `landed`, `up to date`, `failed: why`,
/// `skipped: why`, `running`, `pending` (issue 38: a planner that re-plans sees how its
/// other children went). Empty when the journal holds no task of the run (a remote worker's).
pub(super) fn sibling_outcomes(journal: &Journal, run: &str) -> HashMap<String, String> {
    let Ok(rows) = journal.tasks(run) else {
        return HashMap::new();
    };
    rows.into_iter()
        .map(|r| {
            let state = r.state.replace('_', " ");
            let outcome = match r.reason.filter(|w| !w.trim().is_empty()) {
                Some(why) if matches!(r.state.as_str(), "failed" | "skipped" | "stopped") => {
                    format!("{state}: {}", why.trim())
                }
                _ => state,
            };
            (r.task, outcome)
        })
        .collect()
}

/// The leaf's siblings as the planner is shown them: id, title, write scope and outcome.
fn siblings(order: &WorkOrder, outcomes: &HashMap<String, String>) -> Vec<serde_json::Value> {
    let siblings = order.parent.iter().flat_map(|p| p.siblings.iter());
    siblings
        .filter(|sib| sib.id != order.task.id)
        .map(|sib| {
            let mut v = json!({"id": sib.id, "title": sib.title, "write_scope": sib.write_scope});
            if let Some(o) = outcomes.get(&sib.id) {
                v["outcome"] = json!(o);
            }
            v
        })
        .collect()
}

/// The re-plan of `order` for `why`; `commands` are those an acceptance command may start
/// with (the sandbox's); `outcomes` what became of the leaf's siblings so far; `line_budget`
/// the lines a file may have (the VCS's).
pub(super) async fn replan(
    client: &Client,
    order: &WorkOrder,
    why: &Why<'_>,
    commands: &Commands,
    outcomes: &HashMap<String, String>,
    line_budget: usize,
) -> Result<Replan, PlanError> {
    let t = &order.task;
    let checks: Vec<serde_json::Value> = order
        .checks
        .iter()
        .map(|c| json!({"name": c.name, "command": c.script}))
        .collect();
    let mut user = json!({
        "task": {"id": t.id, "title": t.title, "instructions": t.instructions,
                 "write_scope": t.write_scope, "read_scope": t.read_scope,
                 "line_budget": line_budget},
        "decisions": order.decisions,
        "requirements": order.requirements,
        "checks": checks,
    });
    if order.parent.is_some() {
        user["siblings"] = json!(siblings(order, outcomes));
    }
    let system = match why {
        Why::Failed(failure) => {
            user["failure"] = json!(failure);
            SYSTEM
        }
        Why::Disputed(d) => {
            user["dispute"] = json!({"check": d.check, "evidence": d.evidence, "output": d.output});
            SYSTEM
        }
        Why::Exhausted(failures) => {
            user["failures"] = json!(failures);
            if let Some(p) = &order.parent {
                user["parent"] =
                    json!({"id": p.id, "title": p.title, "instructions": p.instructions});
            }
            SYSTEM_PARENT
        }
    };
    let request = specc_plan::ask::request(system, &user, tool(), 4096);
    let check = |a: &Replan| problems(a, commands, order);
    ForcedCall::new(Role::Planner, &t.id, request, TOOL)
        .check(&check)
        .ask(client)
        .await
        .map(|asked| asked.answer)
}

/// What is wrong with a re-plan, for its repair: what a plan's checks refuse, and what
/// would weaken the task or reach into a sibling's files — checks removed altogether, a
/// scope that may share a path with a sibling's.
fn problems(a: &Replan, commands: &Commands, order: &WorkOrder) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if a.instructions.trim().is_empty() {
        out.push(Diagnostic::new(
            codes::PLANNING_FAILED,
            "the instructions are empty",
        ));
    }
    for entry in a.acceptance.iter().flatten() {
        if let Some(p) = acceptance_problem(entry, commands) {
            out.push(
                Diagnostic::new(
                    codes::ACCEPTANCE_NOT_A_COMMAND,
                    format!("the acceptance entry `{}` {p}", entry.trim()),
                )
                .with_help("an acceptance entry is a shell command run by `bash -e -o pipefail -c` from the repository's root; exit status 0 passes (`cargo test --offline`)"),
            );
        }
    }
    for scope in a.write_scope.iter().flatten() {
        if let Some(p) = scope_problem(scope) {
            out.push(
                Diagnostic::new(codes::INVALID_SCOPE, format!("the write scope `{scope}` {p}"))
                    .with_help("a scope is a path or glob relative to the repository's root: `src/**`, `Cargo.toml`"),
            );
        }
    }
    if a.acceptance.as_ref().is_some_and(Vec::is_empty) && !order.task.acceptance.is_empty() {
        out.push(
            Diagnostic::new(
                codes::ACCEPTANCE_NOT_A_COMMAND,
                "the new acceptance list is empty: a re-plan may replace the task's checks, not remove them all",
            )
            .with_help("give at least one command that checks what the task must do, or leave `acceptance` out to keep the old ones"),
        );
    }
    out.extend(sibling_overlaps(a, order));
    if a.write_scope.as_ref().is_some_and(Vec::is_empty) {
        out.push(Diagnostic::new(
            codes::INVALID_SCOPE,
            "the new write scope is empty: leave `write_scope` out to keep the old one",
        ));
    }
    if !a.changes().is_empty() && a.reason.trim().is_empty() {
        out.push(Diagnostic::new(
            codes::PLANNING_FAILED,
            "the checks or the scope change without a reason: say why in `reason`",
        ));
    }
    out
}

/// The scopes a re-plan adds that may share paths with a sibling's.
fn sibling_overlaps(a: &Replan, order: &WorkOrder) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let siblings = order
        .parent
        .iter()
        .flat_map(|p| p.siblings.iter())
        .filter(|sib| sib.id != order.task.id);
    // Only what the re-plan adds: the plan's own overlaps were serialised when it was made.
    let added = a
        .write_scope
        .iter()
        .flatten()
        .filter(|s| !order.task.write_scope.contains(s));
    for scope in added {
        for sib in siblings.clone() {
            if let Some(theirs) = sib
                .write_scope
                .iter()
                .find(|t| specc_passes::plan::scopes_may_overlap(scope, t))
            {
                out.push(
                    Diagnostic::new(
                        codes::INVALID_SCOPE,
                        format!(
                            "the write scope `{scope}` may share paths with `{theirs}`, which sibling `{}` writes",
                            sib.id
                        ),
                    )
                    .with_help("keep the task's scope clear of its siblings': name its own files or directories"),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_parameter_of_replan_task_is_described() {
        let parameters = super::tool().parameters;
        let props = parameters["properties"].as_object().expect("properties");
        for (name, p) in props {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "`{name}` has no description"
            );
        }
        assert_eq!(props.len(), 4);
    }
}
