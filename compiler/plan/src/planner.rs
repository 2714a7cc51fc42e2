//! The planner protocol: a request built from one intent node and what the planner must
//! respect (its ancestors' decisions, the spec's decisions in scope, the field guide);
//! the answer comes as a tool call forced by name, is parsed into a `PlannerAnswer` and
//! checked; an invalid answer gets at most two repair round-trips quoting the errors.
//! design: runtime.planner-protocol

use specc_ir::plan::{PlannedChild, PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentNode, IntentTree};
use specc_llm::{Client, Request, Role, Tool};

use crate::ask::{Asked, Check, ForcedCall, Reader};
use crate::error::PlanError;
use crate::spec_text;

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
    /// Characters of the spec's text the request shows before the rest is an outline.
    pub spec_chars: usize,
    /// Lines a file may have before the VCS refuses its landing.
    pub line_budget: usize,
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
                        "covers_nodes": strings("Section ids this child covers, exactly as node.id, node.sections[].id and node.outline[].id give them. A plan child plans the first node it names, and takes on every requirement below it. For a work child it only records the sections it works on: its covers_requirements are what count."),
                        "covers_requirements": strings("Requirement ids this work child implements, exactly as node.requirements[].id or node.outline[].requirements give them (`R-3`, `store/pages#2`). Every MUST, MUST NOT, SHALL and SHALL NOT requirement of this node's part of the spec needs a work child that names it, or a plan child whose node holds it."),
                        "instructions": text("For a work child: everything the worker must do, explicitly (files, functions, behaviour, the decisions to follow by id). For a plan child: what its planner must achieve."),
                        "write_scope": strings("Paths or globs relative to the repository's root that the child may write: `src/semver/**`, `Cargo.toml`. A directory is `dir/**`. Give siblings that may run at once disjoint scopes. Generated files (`Cargo.lock`, `package-lock.json`, `poetry.lock`, …) land only where a scope names them; elsewhere they stay in the worker's checkout for its checks and do not land."),
                        "read_scope": strings("Paths or globs relative to the repository's root the child should read first."),
                        "acceptance": strings("Shell commands, each run by `bash -e -o pipefail -c` from the repository's root after the worker's `done`: exit status 0 passes, and the first failing line or pipe stage fails it (write `! cmd` for a command that must fail). Commands, not descriptions: `cargo test --lib version`, `python -m pytest -q tests/test_parse.py`, `test -f README.md`. They run in the sandbox: the checkout and `$TMPDIR` are writable, `/tmp` and the rest of the system are not, and there is no network. The spec's own test blocks (the fenced blocks marked `test` in the sections' text) already run after every work child that covers a requirement of their section (gating the landing that completes the section): do not repeat them here. On a plan child they go to its planner, whose work children must make them pass."),
                        "depends_on": strings("Keys of siblings that must land before this child starts.")
                    }
                }
            },
            "no_code": {
                "type": "array",
                "description": "Requirements of this node's part that no code can carry out (a definition of terms, a rule about the process or about releases), each with why: they are waived, not covered by a child, and no `req:` comment is asked for them. Never for behaviour the code must have.",
                "items": {
                    "type": "object", "required": ["id", "reason"],
                    "properties": {
                        "id": text("The requirement's id, as node.requirements gives it."),
                        "reason": text("One line: why no code carries it out.")
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
pub(crate) const SYSTEM: &str = "You are specc's planner. Read your node's part of the spec \
        (node.sections: each section's text as its author wrote it, prose, tables and code \
        blocks included; node.outline: sections left out for length, and node.references: \
        sections elsewhere its text names, both read with read_spec by id, when offered) and \
        split it into children: \
        `plan` children are planned further, `work` children are carried out by a cheaper model \
        that only follows instructions, so write those explicitly. Make every design decision \
        the children need, with an id naming the question and prefixed by your node's area \
        (task.area: `area.question`), and never contradict a spec decision; decisions under \
        ancestor_decisions and sibling_decisions bind you too; if one of them is wrong for your node \
        because the spec says otherwise, contest it (`contested`, with the spec's words as \
        evidence) rather than deciding its id again. Restate every decision under \
        settled_decisions word for word among your decisions: the coordinator settled them after \
        planners disagreed. Give siblings disjoint write scopes where you can (globs relative to \
        the repository's root, like `src/**`). No file may pass task.line_budget lines: \
        the VCS refuses a landing that grows one past it, so a work child whose code may \
        outgrow that needs a write scope with room for several files (a directory, `src/parser/**`, \
        not one file) and instructions that say how to split it. Cover every MUST, MUST NOT and SHALL \
        requirement with a work child that names its id, or with a plan child for the section \
        that holds it (a plan child plans only the first node in its covers_nodes); \
        node.requirements lists the requirements of the sections shown with their full text \
        (node.outline those of the others by id). Use the \
        section and requirement ids exactly as the request gives them; a requirement no \
        code can carry out (a definition, a rule about releases) goes under no_code with why. Rules the spec states \
        in prose, tables or code blocks bind like its keyword sentences: a work child's \
        instructions must carry them, or name the sections that hold them. Acceptance entries are \
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
/// Nothing about the rest of the tree is in it but the sections its text names (no ids
/// owned elsewhere: ownership is checked after the answer), so an edit elsewhere leaves it,
/// and its cache key, alone. The node's part of the spec is shown as written while it fits
/// `ctx.spec_chars`, then as an outline (design: spec.node-text).
pub fn inputs(tree: &IntentTree, node: &IntentNode, ctx: &Context) -> serde_json::Value {
    let assignment = ctx.assignment.as_ref().map(|c| {
        serde_json::json!({"title": c.title, "instructions": c.instructions,
                           "covers_requirements": c.covers_requirements,
                           "write_scope": c.write_scope, "read_scope": c.read_scope,
                           "acceptance": c.acceptance})
    });
    let shown = spec_text::shown(tree, node, ctx.spec_chars);
    let mut spec = serde_json::json!({"id": node.id.as_str(), "title": node.title,
        "requirements": spec_text::requirements(node, &shown), "sections": shown.sections});
    if !shown.outline.is_empty() {
        spec["outline"] = serde_json::json!(shown.outline);
    }
    if !shown.references.is_empty() {
        spec["references"] = serde_json::json!(shown.references);
    }
    let mut inputs = serde_json::json!({
        "task": {"id": ctx.task, "depth": ctx.depth, "assignment": assignment,
                 "area": area(node, ctx), "max_depth": ctx.limits.0, "max_width": ctx.limits.1,
                 "line_budget": ctx.line_budget},
        "node": spec,
        "ancestor_decisions": ctx.ancestors,
        "settled_decisions": ctx.settled,
        "spec_decisions": spec_text::in_view(tree, &shown, &ctx.spec_decisions),
        "field_guide": ctx.field_guide,
    });
    // Only when there are some: an answer that depends on none keeps its request (and its
    // cached answer) as it was.
    if !ctx.siblings.is_empty() {
        inputs["sibling_decisions"] = serde_json::json!(ctx.siblings);
    }
    inputs
}

/// Whether a planner given `inputs` may read the spec (`read_spec`): part of its subtree
/// is an outline, or its text names sections elsewhere.
pub fn needs_reading(inputs: &serde_json::Value) -> bool {
    inputs["node"].get("outline").is_some() || inputs["node"].get("references").is_some()
}

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

/// The request for `node`.
pub fn request(tree: &IntentTree, node: &IntentNode, ctx: &Context, max_tokens: u32) -> Request {
    request_for(&inputs(tree, node, ctx), max_tokens)
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
    reader: Option<Reader<'_>>,
) -> Result<Asked<PlannerAnswer>, PlanError> {
    let mut call = ForcedCall::new(Role::Planner, task, req, TOOL)
        .check(check)
        .tolerate(&survives_repairs);
    if let Some(reader) = reader {
        call = call.reading(spec_text::read_spec_tool(), reader);
    }
    call.ask(client).await
}

/// The one error a plan may keep after its repairs: deciding an id owned elsewhere, which
/// the coordinator resolves.
pub fn survives_repairs(d: &Diagnostic) -> bool {
    d.code == specc_ir::codes::DECISION_OWNED_ELSEWHERE
}
