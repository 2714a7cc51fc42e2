//! The planner protocol: a request built from one intent node and what the planner must
//! respect (its ancestors' decisions, the spec's decisions in scope, the field guide);
//! the answer comes as a tool call forced by name, is parsed into a `PlannerAnswer` and
//! checked; an invalid answer gets at most two repair round-trips quoting the errors.
//! design: runtime.planner-protocol

use specc_ir::plan::{PlannedChild, PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentNode};
use specc_llm::{Client, LlmError, Message, Request, Role, Tool, ToolChoice};

/// The tool the planner must call.
pub const TOOL: &str = "submit_plan";

/// Repairs after the first answer.
pub const MAX_REPAIRS: usize = 2;

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
    forced_tool_request(
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

/// A request of a system prompt and a JSON user message, answered by calling `tool`,
/// forced by name (what makes even small models answer in structure).
pub fn forced_tool_request(
    system: &str,
    user: &serde_json::Value,
    tool: Tool,
    max_tokens: u32,
) -> Request {
    let mut r = Request::new(
        String::new(),
        vec![Message::system(system), Message::user(user.to_string())],
        max_tokens,
    );
    r.tool_choice = ToolChoice::Named(tool.name.clone());
    r.tools = vec![tool].into();
    r
}

/// Why planning a node failed.
#[derive(Debug)]
pub enum PlanError {
    Model(LlmError),
    /// Still invalid after the repairs: the task asked, and the last answer's problems (an
    /// answer that does not parse is one E0309).
    Invalid {
        task: String,
        problems: Vec<Diagnostic>,
    },
    /// The coordinator's merges did not settle the plan: the ids merged, in order.
    Unsettled(Vec<String>),
    /// Planning would pass `[limits] planner_calls` (the limit).
    CallLimit(usize),
}

/// An accepted answer.
#[derive(Debug)]
pub struct Asked<T> {
    pub answer: T,
    /// Model calls it took (1 + repairs).
    pub calls: usize,
    /// Errors the repairs did not remove but the caller resolves another way: decisions of
    /// ids owned elsewhere, which go to the coordinator.
    pub unresolved: Vec<Diagnostic>,
}

/// Asks the planner for a plan: [`ask_tool`] with the planner's tool, where ownership
/// conflicts that survive the repairs are accepted (the coordinator merges them).
pub async fn ask(
    client: &Client,
    task: &str,
    req: Request,
    check: impl Fn(&PlannerAnswer) -> Vec<Diagnostic>,
) -> Result<Asked<PlannerAnswer>, PlanError> {
    ask_tool(client, task, req, TOOL, check, survives_repairs).await
}

/// The one error a plan may keep after its repairs: deciding an id owned elsewhere, which
/// the coordinator resolves.
pub fn survives_repairs(d: &Diagnostic) -> bool {
    d.code == specc_ir::codes::DECISION_OWNED_ELSEWHERE
}

/// Asks the planner role, parses the call of `tool` (or a JSON text answer) into a `T`,
/// checks it with `check`, and repairs at most twice, quoting the errors. After the repairs,
/// an answer whose only errors are ones `tolerate` accepts is returned with them.
pub async fn ask_tool<T: serde::de::DeserializeOwned>(
    client: &Client,
    task: &str,
    req: Request,
    tool: &str,
    check: impl Fn(&T) -> Vec<Diagnostic>,
    tolerate: impl Fn(&Diagnostic) -> bool,
) -> Result<Asked<T>, PlanError> {
    let how = Asking {
        role: Role::Planner,
        repairs: MAX_REPAIRS,
    };
    ask_tool_as(client, how, task, req, tool, check, tolerate).await
}

/// Who is asked, and how many repairs an answer gets.
#[derive(Clone, Copy, Debug)]
pub struct Asking {
    pub role: Role,
    pub repairs: usize,
}

/// [`ask_tool`] for any role, with `how.repairs` repairs.
pub async fn ask_tool_as<T: serde::de::DeserializeOwned>(
    client: &Client,
    how: Asking,
    task: &str,
    req: Request,
    tool: &str,
    check: impl Fn(&T) -> Vec<Diagnostic>,
    tolerate: impl Fn(&Diagnostic) -> bool,
) -> Result<Asked<T>, PlanError> {
    ask_tool_model(client, how, None, task, req, tool, check, tolerate).await
}

/// [`ask_tool_as`] with another model of the role's provider (`None`: the role's).
#[allow(clippy::too_many_arguments)]
pub async fn ask_tool_model<T: serde::de::DeserializeOwned>(
    client: &Client,
    how: Asking,
    model: Option<&str>,
    task: &str,
    mut req: Request,
    tool: &str,
    check: impl Fn(&T) -> Vec<Diagnostic>,
    tolerate: impl Fn(&Diagnostic) -> bool,
) -> Result<Asked<T>, PlanError> {
    let mut calls = 0;
    loop {
        calls += 1;
        let response = match client.call_model(how.role, model, task, req.clone()).await {
            Ok(r) => r,
            // Cheap models often break a tool call's JSON: that is a mistake to repair,
            // within the same budget, not a failed plan.
            Err(LlmError::MalformedToolCall {
                name,
                arguments,
                reason,
            }) if calls <= how.repairs => {
                let cut: String = arguments.chars().take(300).collect();
                req.messages.push(Message::user(format!(
                    "Your call of {name} could not be read: its arguments are not JSON ({reason}). \
                     They began: {cut}\nCall {tool} again with arguments that are one JSON object \
                     in its schema."
                )));
                continue;
            }
            Err(e) => return Err(PlanError::Model(e)),
        };
        let problems = match parse::<T>(&response, tool) {
            Ok(answer) => {
                let errors: Vec<Diagnostic> = check(&answer)
                    .into_iter()
                    .filter(|d| d.is_error())
                    .collect();
                if errors.is_empty() || (calls > how.repairs && errors.iter().all(&tolerate)) {
                    return Ok(Asked {
                        answer,
                        calls,
                        unresolved: errors,
                    });
                }
                errors
            }
            Err(e) => vec![
                Diagnostic::new(specc_ir::codes::PLANNING_FAILED, e).with_help(format!(
                    "answer by calling {tool} with arguments in its schema"
                )),
            ],
        };
        if calls > how.repairs {
            return Err(PlanError::Invalid {
                task: task.to_owned(),
                problems,
            });
        }
        let mut said = Message::new(specc_llm::types::Author::Assistant, response.text.clone());
        said.tool_calls = response.tool_calls.clone();
        req.messages.push(said);
        let repair = format!(
            "Your answer is not valid:\n{}\nCall {tool} again with a corrected answer.",
            problems
                .iter()
                .map(|d| match &d.help {
                    Some(help) => format!("- {}: {} ({help})", d.code, d.message),
                    None => format!("- {}: {}", d.code, d.message),
                })
                .collect::<Vec<_>>()
                .join("\n")
        );
        match response.tool_calls.first() {
            Some(call) => {
                let mut m = Message::new(specc_llm::types::Author::Tool, repair);
                m.tool_call_id = Some(call.id.clone());
                req.messages.push(m);
            }
            None => req.messages.push(Message::user(repair)),
        }
    }
}

/// The answer in a response: the `tool` call's arguments, or JSON text.
fn parse<T: serde::de::DeserializeOwned>(
    response: &specc_llm::Response,
    tool: &str,
) -> Result<T, String> {
    let value = match response.tool_calls.iter().find(|c| c.name == tool) {
        Some(call) => call.arguments.clone(),
        None => serde_json::from_str(response.text.trim())
            .map_err(|e| format!("no {tool} call, and the text is not JSON: {e}"))?,
    };
    serde_json::from_value(value).map_err(|e| format!("the answer does not match the schema: {e}"))
}
