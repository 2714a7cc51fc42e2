//! Re-planning a failed work leaf: the planner gets the leaf (its instructions, decisions,
//! requirements, scope and checks) and the failure, and answers with new instructions by
//! calling `replan_task`. Only the instructions change: the write scope, the dependencies
//! and the acceptance checks stay the task's own, so a re-plan cannot widen what a task may
//! touch or weaken what it must pass.
//! design: runtime.escalation

use serde::Deserialize;
use serde_json::json;
use specc_ir::{Diagnostic, codes};
use specc_llm::{Client, Role, Tool};

use specc_plan::{ForcedCall, PlanError};

use super::context::WorkOrder;

pub(super) const TOOL: &str = "replan_task";

#[derive(Deserialize)]
struct Answer {
    instructions: String,
}

/// New instructions for `order` after `failure`.
pub(super) async fn replan(
    client: &Client,
    order: &WorkOrder,
    failure: &str,
) -> Result<String, PlanError> {
    let t = &order.task;
    let system = "You are specc's planner. A work task you planned failed. Rewrite its \
        instructions so that a worker that only follows instructions can succeed: same goal, \
        same decisions, explicit steps, and what to do about the failure. The write scope and \
        acceptance checks stay as they are. Answer only by calling replan_task.";
    let user = json!({
        "task": {"id": t.id, "title": t.title, "instructions": t.instructions,
                 "write_scope": t.write_scope, "read_scope": t.read_scope},
        "decisions": order.decisions,
        "requirements": order.requirements,
        "acceptance": order.checks,
        "failure": failure,
    });
    let tool = Tool {
        name: TOOL.to_owned(),
        description: "Submit the task's new instructions.".to_owned(),
        parameters: json!({"type": "object", "required": ["instructions"],
                           "properties": {"instructions": {"type": "string", "description": "The task's new instructions, complete: they replace the old ones for the next attempt."}}}),
    };
    let request = specc_plan::ask::request(system, &user, tool, 4096);
    let check = |a: &Answer| {
        if a.instructions.trim().is_empty() {
            vec![Diagnostic::new(
                codes::PLANNING_FAILED,
                "the instructions are empty",
            )]
        } else {
            Vec::new()
        }
    };
    ForcedCall::new(Role::Planner, &t.id, request, TOOL)
        .check(&check)
        .ask(client)
        .await
        .map(|asked| asked.answer.instructions)
}
