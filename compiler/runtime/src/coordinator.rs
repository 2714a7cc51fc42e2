//! The coordinator: when two accepted answers decide one question differently (the second
//! planner did not yield to the owner after two repairs), one planner-role call merges the
//! two decisions into the one both subtrees follow. The merged decision replaces the owner's;
//! every request that carried either text changes, so those subtrees are re-planned.
//! design: runtime.coordinator

use serde::Deserialize;
use specc_ir::plan::PlannedDecision;
use specc_ir::{Diagnostic, codes};
use specc_llm::{Client, Message, Request, Tool, ToolChoice};
use specc_passes::plan::Conflict;

use crate::planner::{PlanError, ask_tool};

/// The tool the coordinator must call.
pub const TOOL: &str = "merge_decisions";

/// What the coordinator answers.
#[derive(Clone, Debug, Deserialize)]
struct Merged {
    decision: String,
    rationale: String,
}

/// The request: both decisions, each with the task that made it.
pub fn request(conflict: &Conflict, max_tokens: u32) -> Request {
    let system = "You are specc's coordinator. Two planners decided the same design question \
        differently. Write the one decision both parts of the tree will follow: keep what each \
        needs where they agree, choose where they cannot both hold, and add no new scope. \
        Answer only by calling merge_decisions.";
    let side = |o: &specc_passes::plan::Owned| {
        serde_json::json!({"task": o.owner, "decision": o.decision.decision,
                           "rationale": o.decision.rationale})
    };
    let user = serde_json::json!({
        "id": conflict.first.decision.id,
        "first": side(&conflict.first),
        "second": side(&conflict.second),
    });
    let mut r = Request::new(
        String::new(),
        vec![Message::system(system), Message::user(user.to_string())],
        max_tokens,
    );
    r.tools = vec![Tool {
        name: TOOL.to_owned(),
        description: "Submit the merged decision.".to_owned(),
        parameters: serde_json::json!({
            "type": "object", "required": ["decision", "rationale"],
            "properties": {"decision": {"type": "string"}, "rationale": {"type": "string"}}
        }),
    }];
    r.tool_choice = ToolChoice::Named(TOOL.to_owned());
    r
}

/// Asks for the merge (with the planner protocol's repairs); returns the merged decision
/// and the calls it took.
pub async fn merge(
    client: &Client,
    conflict: &Conflict,
    req: Request,
) -> Result<(PlannedDecision, usize), PlanError> {
    let id = &conflict.first.decision.id;
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
    let asked = ask_tool(client, &task, req, TOOL, check, |_| false).await?;
    Ok((
        PlannedDecision {
            id: id.clone(),
            decision: asked.answer.decision.trim().to_owned(),
            rationale: asked.answer.rationale.trim().to_owned(),
        },
        asked.calls,
    ))
}

/// The warning that tells the user a merge happened and what it decided.
pub fn merged_warning(conflict: &Conflict, merged: &PlannedDecision) -> Diagnostic {
    let name = specc_passes::plan::task_name;
    Diagnostic::new(
        codes::DECISIONS_MERGED,
        format!(
            "{} and {} decided `{}` differently (\"{}\" / \"{}\"); the coordinator merged them: \"{}\"",
            name(&conflict.first.owner),
            name(&conflict.second.owner),
            merged.id,
            conflict.first.decision.decision,
            conflict.second.decision.decision,
            merged.decision
        ),
    )
    .with_help(
        "the tasks under both were re-planned with the merged decision; it is written to design-docs/ under the first owner",
    )
}
