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
    /// Decisions of the siblings this task depends on (bounded): what it builds on.
    pub siblings: Vec<PlannedDecision>,
    /// `(id, text)` of the spec's own decisions in scope: those of the intent node's
    /// ancestors and of its subtree (the checks still hold every answer to all of them).
    pub spec_decisions: Vec<(String, String)>,
    pub field_guide: String,
}

/// The JSON schema of a planner answer (`PlannerAnswer`), each field described: the schema
/// is where a model learns the protocol (design: runtime.planner-protocol).
pub fn answer_schema() -> serde_json::Value {
    let strings = |description: &str| serde_json::json!({"type": "array", "items": {"type": "string"}, "description": description});
    let text =
        |description: &str| serde_json::json!({"type": "string", "description": description});
    serde_json::json!({
        "type": "object",
        "required": ["decisions", "children"],
        "properties": {
            "decisions": {
                "type": "array",
                "description": "The design decisions this node's children need, made here: workers follow them and never decide.",
                "items": {
                    "type": "object", "required": ["id", "decision", "rationale"],
                    "properties": {
                        "id": text("The question it answers, prefixed by this node's area (task.area): `area.question`, dot-separated letters, digits, `_` and `-` (`store.page-size`)."),
                        "decision": text("The decision, precise enough for a worker to follow without choosing."),
                        "rationale": text("Why this decision.")
                    }
                }
            },
            "children": {
                "type": "array",
                "description": "The node split into children: `plan` children are planned further, `work` children are carried out by a worker.",
                "items": {
                    "type": "object",
                    "required": ["key", "kind", "title", "instructions"],
                    "properties": {
                        "key": text("A short name unique among the siblings (letters, digits, `.`, `_`, `-`; up to 64): it names the task."),
                        "kind": {"type": "string", "enum": ["plan", "work"], "description": "`plan`: another planner splits it further (give it the node it plans in covers_nodes). `work`: a worker that only follows instructions carries it out."},
                        "title": text("A few words: what the child is."),
                        "covers_nodes": strings("Intent node ids this child covers, exactly as node.id and node.children[].id give them. A plan child plans the first node it names, and takes on every requirement below it. For a work child it only records the sections it works on: its covers_requirements are what count."),
                        "covers_requirements": strings("Requirement ids this work child implements, exactly as node.requirements[].id and node.children[].requirements[].id give them (`R-3`, `store/pages#2`). Every MUST, MUST NOT, SHALL and SHALL NOT requirement of this node's part of the spec needs a work child that names it, or a plan child whose node holds it."),
                        "instructions": text("For a work child: everything the worker must do, explicitly (files, functions, behaviour, the decisions to follow by id). For a plan child: what its planner must achieve."),
                        "write_scope": strings("Paths or globs relative to the repository's root that the child may write: `src/semver/**`, `Cargo.toml`. A directory is `dir/**`. Give siblings that may run at once disjoint scopes. Generated files (`Cargo.lock`, `package-lock.json`, `poetry.lock`, …) land only where a scope names them; elsewhere they stay in the worker's checkout for its checks and do not land."),
                        "read_scope": strings("Paths or globs relative to the repository's root the child should read first."),
                        "acceptance": strings("Shell commands, each run by `bash -e -o pipefail -c` from the repository's root after the worker's `done`: exit status 0 passes, and the first failing line or pipe stage fails it (write `! cmd` for a command that must fail). Commands, not descriptions: `cargo test --lib version`, `python -m pytest -q tests/test_parse.py`, `test -f README.md`. They run in the sandbox: the checkout and `$TMPDIR` are writable, `/tmp` and the rest of the system are not, and there is no network. The spec's own test blocks (node.checks, node.children[].checks) already run after every work child that covers a requirement of their section (gating the landing that completes the section): do not repeat them here. On a plan child they go to its planner, whose work children must make them pass."),
                        "depends_on": strings("Keys of siblings that must land before this child starts.")
                    }
                }
            },
            "contested": {
                "type": "array",
                "description": "Only when a decision under ancestor_decisions is wrong for this node because the spec says otherwise: do not decide its id again and do not add a decision that overrides it; contest it here. The coordinator settles it with the decision's owner, and the settled text replaces the old one everywhere. Leave it out otherwise.",
                "items": {
                    "type": "object", "required": ["id", "decision", "evidence"],
                    "properties": {
                        "id": text("The contested decision's id, as ancestor_decisions gives it."),
                        "decision": text("The text the decision should have."),
                        "evidence": text("Why: quote the spec's words (or its test block) that the decision contradicts, and say where they are.")
                    }
                }
            }
        }
    })
}

/// The planner's standing instructions.
pub(crate) const SYSTEM: &str = "You are specc's planner. Split the intent node you are given into children: \
        `plan` children are planned further, `work` children are carried out by a cheaper model \
        that only follows instructions, so write those explicitly. Make every design decision \
        the children need, with an id naming the question and prefixed by your node's area \
        (task.area: `area.question`), and never contradict a spec decision; decisions under \
        ancestor_decisions and sibling_decisions bind you too; if one of them is wrong for your node \
        because the spec says otherwise, contest it (`contested`, with the spec's words as \
        evidence) rather than deciding its id again. Restate every decision under \
        settled_decisions word for word among your decisions: the coordinator settled them after \
        planners disagreed. Give siblings disjoint write scopes where you can (globs relative to \
        the repository's root, like `src/**`), and cover every MUST, MUST NOT and SHALL \
        requirement with a work child that names its id, or with a plan child for the section \
        that holds it (a plan child plans only the first node in its covers_nodes). Use the \
        node and requirement ids exactly as the request gives them. Acceptance entries are \
        shell commands run by `bash -e -o pipefail` from the repository's root (the first \
        failing line or pipe stage fails one; exit 0 passes), never descriptions. The spec's \
        test blocks (checks) run on their own after every work child that covers a \
        requirement of their section: as information while other children covering the \
        section have yet to land, and as a gate on the landing that completes the section \
        (the last of them runs once the others landed) and every landing after it; so order \
        a section's children as the work needs, and check each child's own part with its \
        acceptance entries. Every planner answers before any code is written: a \
        planner sees its ancestors' and the siblings' decisions it depends on, never their \
        code, so decide interfaces here. Answer only by calling submit_plan.";

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
    let children: Vec<serde_json::Value> = node.children.iter().map(child_summary).collect();
    let mut inputs = serde_json::json!({
        "task": {"id": ctx.task, "depth": ctx.depth, "assignment": assignment,
                 "area": area(node, ctx), "max_depth": ctx.limits.0, "max_width": ctx.limits.1},
        "node": {"id": node.id.as_str(), "title": node.title, "prose": node.prose,
                  "requirements": requirements, "checks": checks(node),
                  "children": children},
        "ancestor_decisions": ctx.ancestors,
        "settled_decisions": ctx.settled,
        "spec_decisions": ctx.spec_decisions,
        "field_guide": ctx.field_guide,
    });
    // Only when there are some: an answer that depends on none keeps its request (and its
    // cached answer) as it was.
    if !ctx.siblings.is_empty() {
        inputs["sibling_decisions"] = serde_json::json!(ctx.siblings);
    }
    inputs
}

/// Characters of a child section's prose its parent's planner is shown.
const SUMMARY_CHARS: usize = 200;
/// Characters of one requirement's text, and of one test block, a planner is shown.
const TEXT_CHARS: usize = 400;

/// The area a node's decision ids start with: the first part of its id, and at the root the
/// spec's own decisions' area (or the first word of its title).
fn area(node: &IntentNode, ctx: &Context) -> String {
    if let Some(first) = node.id.as_str().split('/').next().filter(|f| !f.is_empty()) {
        return first.to_owned();
    }
    if let Some((id, _)) = ctx.spec_decisions.first()
        && let Some(area) = id.split('.').next().filter(|a| !a.is_empty())
    {
        return area.to_owned();
    }
    let word: String = node
        .title
        .split_whitespace()
        .next()
        .unwrap_or("spec")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect::<String>()
        .to_lowercase();
    if word.is_empty() {
        "spec".to_owned()
    } else {
        word
    }
}

/// The spec's test blocks of `node`, as the workers that cover its requirements run them.
fn checks(node: &IntentNode) -> Vec<serde_json::Value> {
    node.checks
        .iter()
        .map(|c| serde_json::json!({"runner": c.runner, "code": bounded(c.code.trim_end())}))
        .collect()
}

/// `text` cut at [`TEXT_CHARS`] characters.
fn bounded(text: &str) -> String {
    if text.chars().count() > TEXT_CHARS {
        let cut: String = text.chars().take(TEXT_CHARS).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

/// What a planner is told of a child section of its node: its id and title, the start of
/// its prose, its own requirements (id, level and text, bounded) and its test blocks: what
/// a parent needs to cover the section with work children of its own.
fn child_summary(c: &IntentNode) -> serde_json::Value {
    // What the section says besides its requirements, which follow.
    let mut rest = Vec::new();
    for line in c.prose.lines() {
        let mut line = line.to_owned();
        for r in &c.requirements {
            line = line.replace(r.text.as_str(), "");
        }
        let line = line.trim().trim_start_matches(['-', '*', '+']).trim();
        if !line.is_empty() {
            rest.push(line.to_owned());
        }
    }
    let prose = rest
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let summary: String = if prose.chars().count() > SUMMARY_CHARS {
        let cut: String = prose.chars().take(SUMMARY_CHARS).collect();
        format!("{cut}…")
    } else {
        prose
    };
    let requirements: Vec<serde_json::Value> = c
        .requirements
        .iter()
        .map(|r| {
            serde_json::json!({"id": r.id.as_str(), "level": r.level.to_string(),
                                    "text": bounded(&r.text)})
        })
        .collect();
    serde_json::json!({"id": c.id.as_str(), "title": c.title, "summary": summary,
                       "requirements": requirements, "checks": checks(c)})
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
