//! The planner protocol: a request built from one intent node and what the planner must
//! respect (its ancestors' decisions, the spec's decisions in scope, the field guide);
//! the answer comes as a tool call forced by name, is parsed into a `PlannerAnswer` and
//! checked; an invalid answer gets at most two repair round-trips quoting the errors.
//! design: runtime.planner-protocol

use specc_ir::plan::{PlannedChild, PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentNode};
use specc_llm::{Client, Request, Role, Tool};

use crate::ask::{Asked, Check, ForcedCall};
use crate::error::PlanError;

/// The tool the planner must call.
pub const TOOL: &str = "submit_plan";

/// What a planner is told besides its node.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// The task being planned (`parent/key`; the root is `""`) and its depth (the root is 0).
    pub task: String,
    pub depth: usize,
    /// What the parent asked of this task (none for the root).
    pub assignment: Option<PlannedChild>,
    /// The limits the answer must keep: `(max_depth, max_width)`.
    pub limits: (usize, usize),
    /// Decisions made above this node, which bind it.
    pub ancestors: Vec<PlannedDecision>,
    /// Decisions the coordinator settled after this task's planner disagreed: binding.
    pub settled: Vec<PlannedDecision>,
    /// `(id, text)` of the spec's own decisions in scope: those of the intent node's
    /// ancestors and of its subtree (the checks still hold every answer to all of them).
    pub spec_decisions: Vec<(String, String)>,
    pub field_guide: String,
}

/// The JSON schema of a planner answer (`PlannerAnswer`).
pub fn answer_schema() -> serde_json::Value {
    let strings = serde_json::json!({"type": "array", "items": {"type": "string"}});
    serde_json::json!({
        "type": "object",
        "required": ["decisions", "children"],
        "properties": {
            "decisions": {"type": "array", "items": {
                "type": "object", "required": ["id", "decision", "rationale"],
                "properties": {"id": {"type": "string"}, "decision": {"type": "string"}, "rationale": {"type": "string"}}
            }},
            "children": {"type": "array", "items": {
                "type": "object",
                "required": ["key", "kind", "title", "instructions"],
                "properties": {
                    "key": {"type": "string"},
                    "kind": {"type": "string", "enum": ["plan", "work"]},
                    "title": {"type": "string"},
                    "covers_nodes": strings, "covers_requirements": strings,
                    "instructions": {"type": "string"},
                    "write_scope": strings, "read_scope": strings,
                    "acceptance": strings, "depends_on": strings
                }
            }}
        }
    })
}

/// The planner's standing instructions.
pub(crate) const SYSTEM: &str = "You are specc's planner. Split the intent node you are given into children: \
        `plan` children are planned further, `work` children are carried out by a cheaper model \
        that only follows instructions, so write those explicitly. Make every design decision \
        the children need, with an id naming the question and prefixed by your node's area \
        (`area.question`), and never contradict a spec decision. Restate every decision under \
        settled_decisions word for word among your decisions: the coordinator settled them after \
        planners disagreed. Give siblings disjoint write scopes where you can, and cover every \
        MUST, MUST NOT and SHALL requirement with a work child. Answer only by calling \
        submit_plan.";

/// What a planner's answer for `node` depends on, as the JSON user message of its request.
/// Nothing about the rest of the tree is in it (no ids owned elsewhere: ownership is
/// checked after the answer), so an edit elsewhere leaves it, and its cache key, alone.
pub fn inputs(node: &IntentNode, ctx: &Context) -> serde_json::Value {
    let requirements: Vec<serde_json::Value> = node
        .requirements
        .iter()
        .map(|r| serde_json::json!({"id": r.id.as_str(), "level": r.level.to_string(), "text": r.text}))
        .collect();
    let assignment = ctx.assignment.as_ref().map(|c| {
        serde_json::json!({"title": c.title, "instructions": c.instructions,
                           "covers_requirements": c.covers_requirements,
                           "write_scope": c.write_scope, "read_scope": c.read_scope,
                           "acceptance": c.acceptance})
    });
    serde_json::json!({
        "task": {"id": ctx.task, "depth": ctx.depth, "assignment": assignment,
                 "max_depth": ctx.limits.0, "max_width": ctx.limits.1},
        "node": {"id": node.id.as_str(), "title": node.title, "prose": node.prose,
                  "requirements": requirements,
                  "children": node.children.iter().map(|c| c.id.as_str()).collect::<Vec<_>>()},
        "ancestor_decisions": ctx.ancestors,
        "settled_decisions": ctx.settled,
        "spec_decisions": ctx.spec_decisions,
        "field_guide": ctx.field_guide,
    })
}

/// The request for `node`.
pub fn request(node: &IntentNode, ctx: &Context, max_tokens: u32) -> Request {
    request_for(&inputs(node, ctx), max_tokens)
}

/// The request of a user message made by [`inputs`].
pub fn request_for(user: &serde_json::Value, max_tokens: u32) -> Request {
    crate::ask::request(
        SYSTEM,
        user,
        Tool {
            name: TOOL.to_owned(),
            description: "Submit the plan for this node.".to_owned(),
            parameters: answer_schema(),
        },
        max_tokens,
    )
}

/// Asks the planner for a plan, where ownership conflicts that survive the repairs are
/// accepted (the coordinator merges them).
pub async fn ask(
    client: &Client,
    task: &str,
    req: Request,
    check: Check<'_, PlannerAnswer>,
) -> Result<Asked<PlannerAnswer>, PlanError> {
    ForcedCall::new(Role::Planner, task, req, TOOL)
        .check(check)
        .tolerate(&survives_repairs)
        .ask(client)
        .await
}

/// The one error a plan may keep after its repairs: deciding an id owned elsewhere, which
/// the coordinator resolves.
pub fn survives_repairs(d: &Diagnostic) -> bool {
    d.code == specc_ir::codes::DECISION_OWNED_ELSEWHERE
}
