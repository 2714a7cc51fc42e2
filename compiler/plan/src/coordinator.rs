//! The coordinator: when accepted answers decide one question differently (a later planner
//! did not yield to the owner after two repairs), one planner-role call merges the decisions
//! into the one every side follows. The merged decision replaces every copy of its id, and
//! the planners that disagreed are asked again with it as settled, so their subtrees are
//! re-planned.
//! design: runtime.coordinator

use serde::Deserialize;
use specc_ir::plan::PlannedDecision;
use specc_ir::{Diagnostic, codes};
use specc_llm::{Client, Request, Role, Tool};
use specc_passes::plan::Conflict;

use crate::ask::ForcedCall;
use crate::error::PlanError;

/// The tool the coordinator must call.
pub const TOOL: &str = "merge_decisions";

/// What the coordinator answers.
#[derive(Clone, Debug, Deserialize)]
struct Merged {
    decision: String,
    rationale: String,
}

/// The request: every decision of the id, each with the task that made it, the owner's first.
pub fn request(conflict: &Conflict, max_tokens: u32) -> Request {
    let system = "You are specc's coordinator. Planners decided the same design question \
        differently. Write the one decision every part of the tree will follow: keep what each \
        needs where they agree, choose where they cannot all hold, and add no new scope. \
        Answer only by calling merge_decisions.";
    let sides: Vec<serde_json::Value> = conflict
        .sides
        .iter()
        .map(|o| {
            serde_json::json!({"task": o.owner, "decision": o.decision.decision,
                               "rationale": o.decision.rationale})
        })
        .collect();
    let user = serde_json::json!({"id": conflict.id, "decisions": sides});
    crate::ask::request(
        system,
        &user,
        Tool {
            name: TOOL.to_owned(),
            description: "Submit the merged decision.".to_owned(),
            parameters: serde_json::json!({
                "type": "object", "required": ["decision", "rationale"],
                "properties": {
                    "decision": {"type": "string", "description": "The one decision every side follows, precise enough to follow without choosing."},
                    "rationale": {"type": "string", "description": "Why: what each side needed, and what was chosen where they could not all hold."}
                }
            }),
        },
        max_tokens,
    )
}

/// Asks for the merge (with the planner protocol's repairs); returns the merged decision
/// and the calls it took.
pub async fn merge(
    client: &Client,
    conflict: &Conflict,
    req: Request,
) -> Result<(PlannedDecision, usize), PlanError> {
    let id = &conflict.id;
    let task = format!("coordinate:{id}");
    let check = |m: &Merged| {
        if m.decision.trim().is_empty() {
            vec![Diagnostic::new(
                codes::PLANNING_FAILED,
                "the merged decision is empty".to_owned(),
            )]
        } else {
            Vec::new()
        }
    };
    let asked = ForcedCall::new(Role::Planner, &task, req, TOOL)
        .check(&check)
        .ask(client)
        .await?;
    Ok((
        PlannedDecision {
            id: id.clone(),
            decision: asked.answer.decision.trim().to_owned(),
            rationale: asked.answer.rationale.trim().to_owned(),
        },
        asked.calls,
    ))
}

/// The warning that tells the user a contest was settled and how.
pub fn contested_warning(conflict: &Conflict, settled: &PlannedDecision) -> Diagnostic {
    let name = |i: usize| {
        conflict
            .sides
            .get(i)
            .map_or_else(String::new, |s| specc_passes::plan::task_name(&s.owner))
    };
    let was = conflict
        .sides
        .first()
        .map_or("", |s| s.decision.decision.as_str());
    Diagnostic::new(
        codes::DECISION_CONTESTED,
        format!(
            "{} contested `{}`, which {} decided as \"{was}\"; the coordinator settled it: \"{}\"",
            name(1),
            settled.id,
            name(0),
            settled.decision
        ),
    )
    .with_help(
        "both planners were asked again with the settled decision, and every task that read the old text was re-planned; it is recorded in design-docs/planned-<area>.md",
    )
}

/// The warning that tells the user a merge happened and what it decided.
pub fn merged_warning(conflict: &Conflict, merged: &PlannedDecision) -> Diagnostic {
    let mut tasks: Vec<String> = Vec::new();
    for (i, s) in conflict.sides.iter().enumerate() {
        let name = if i == 0 && conflict.settled_first {
            "an earlier merge".to_owned()
        } else {
            specc_passes::plan::task_name(&s.owner)
        };
        if !tasks.contains(&name) {
            tasks.push(name);
        }
    }
    let texts: Vec<String> = conflict
        .sides
        .iter()
        .map(|s| format!("\"{}\"", s.decision.decision))
        .collect();
    Diagnostic::new(
        codes::DECISIONS_MERGED,
        format!(
            "{} decided `{}` differently ({}); the coordinator merged them: \"{}\"",
            tasks.join(" and "),
            merged.id,
            texts.join(" / "),
            merged.decision
        ),
    )
    .with_help(
        "those planners were asked again with the merged decision as settled; it is recorded in design-docs/planned-<area>.md",
    )
}
