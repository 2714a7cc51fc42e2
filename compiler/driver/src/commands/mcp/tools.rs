//! The tools `specc mcp` offers: each a specc command run in-process with `--format json`
//! (so a tool answers what the command prints), described for the client with its input
//! schema and the protocol's annotations (read-only, destructive, open-world).
//! design: driver.mcp

use serde_json::{Value, json};

/// What a tool does to the world, for its annotations and the spend gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Effect {
    /// Reads the project and its state only.
    Reads,
    /// Reads, and may ask a model (a preview with a live planner): open-world.
    AsksModels,
    /// Runs a build: spends money on models and writes the state and `out/`.
    Spends,
}

/// One tool: its name, what it is for, its arguments' schema and its effect.
pub(super) struct ToolDef {
    pub(super) name: &'static str,
    pub(super) title: &'static str,
    pub(super) description: &'static str,
    pub(super) effect: Effect,
    /// The properties of its arguments, and which are required.
    pub(super) properties: fn() -> Value,
    pub(super) required: &'static [&'static str],
}

fn spec() -> Value {
    json!({"type": "string", "description": "The spec, relative to the project root [default: spec.md]."})
}

fn spec_only() -> Value {
    json!({"spec": spec()})
}

/// Every tool, in the order a client lists them.
pub(super) const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "specc_preview",
        title: "Preview a build",
        description: "Plan the spec and show the plan and what building it would cost, running no worker (`specc build --dry-run`). `provider`: `config` asks specc.toml's planner, which may cost money (its answers are cached for the build), `replay` answers from the recording, `outline` asks no model and costs nothing; the default is `config` on a server started with --allow-spend, else `outline`.",
        effect: Effect::AsksModels,
        properties: || {
            json!({"spec": spec(), "provider": {"type": "string", "enum": ["config", "replay", "outline"],
                   "description": "Who answers the planner [default: config with --allow-spend, else outline]."}})
        },
        required: &[],
    },
    ToolDef {
        name: "specc_status",
        title: "Build status",
        description: "The latest build of the spec: tasks by state, running attempts, cost against the budget, recent commits and failures (`specc status`). Also while a build runs.",
        effect: Effect::Reads,
        properties: spec_only,
        required: &[],
    },
    ToolDef {
        name: "specc_show",
        title: "One task's story",
        description: "One task's whole story from the journal: what it was told, every model turn and tool call, its checks, what landed and its cost (`specc show`).",
        effect: Effect::Reads,
        properties: || {
            json!({"task": {"type": "string", "description": "The task's id, as status names it."},
                   "spec": spec(),
                   "attempt": {"type": "integer", "minimum": 1, "description": "Only this attempt."},
                   "full": {"type": "boolean", "description": "Every text whole instead of capped."}})
        },
        required: &["task"],
    },
    ToolDef {
        name: "specc_cost",
        title: "Cost",
        description: "Tokens and dollars spent on models, by role and by model, from the spec's state database (`specc cost`).",
        effect: Effect::Reads,
        properties: spec_only,
        required: &[],
    },
    ToolDef {
        name: "specc_trace",
        title: "Trace requirements",
        description: "Every requirement of the spec followed to the tasks that cover it, the code and tests that reference it, and whether those tests passed (`specc trace`).",
        effect: Effect::Reads,
        properties: spec_only,
        required: &[],
    },
    ToolDef {
        name: "specc_drift",
        title: "Drift since the build",
        description: "What people changed in the built code since specc built it: references and tests removed, pinned code edited, stale pins, changed files (`specc drift`). Read-only: accepting drift is left to the command line.",
        effect: Effect::Reads,
        properties: spec_only,
        required: &[],
    },
    ToolDef {
        name: "specc_check",
        title: "Check references",
        description: "Check the code's references to design decisions and requirements: unknown ids, stale pins, superseded and conflicting decisions (`specc check`).",
        effect: Effect::Reads,
        properties: || {
            json!({"path": {"type": "string", "description": "The directory to check, relative to the project root [default: the root]."},
                   "spec": spec()})
        },
        required: &[],
    },
    ToolDef {
        name: "specc_explain",
        title: "Explain a diagnostic",
        description: "The long explanation of a diagnostic code such as E0406 (`specc explain`).",
        effect: Effect::Reads,
        properties: || json!({"code": {"type": "string", "pattern": "^[EW][0-9]{4}$", "description": "The code, e.g. E0406."}}),
        required: &["code"],
    },
    ToolDef {
        name: "specc_outline",
        title: "The spec's outline",
        description: "The spec's sections as a tree: each node's id, title, level and requirement ids, from the front end's Intent IR (`specc plan --emit intent`).",
        effect: Effect::Reads,
        properties: spec_only,
        required: &[],
    },
    ToolDef {
        name: "specc_node",
        title: "One section's text",
        description: "One section of the spec as written, by its node id from specc_outline: its text, requirements, decisions and checks.",
        effect: Effect::Reads,
        properties: || json!({"id": {"type": "string", "description": "The node's id, from specc_outline."}, "spec": spec()}),
        required: &["id"],
    },
    ToolDef {
        name: "specc_follow",
        title: "Follow a build",
        description: "Wait for a build started by specc_build or specc_approve, with its progress as notifications, until it ends or `timeout_seconds` pass; returns how it ended (or that it still runs) and its status.",
        effect: Effect::Reads,
        properties: || {
            json!({"build": {"type": "string", "description": "The id specc_build or specc_approve returned."},
                   "timeout_seconds": {"type": "number", "minimum": 0, "description": "How long to wait [default: 600]."}})
        },
        required: &["build"],
    },
    ToolDef {
        name: "specc_build",
        title: "Build the spec",
        description: "Build the spec: plan it, run every work task with worker models, integrate, check and export to out/ (`specc build`). Spends money on models within `[budget] dollars`. Returns the build's id at once; with `follow`, waits as specc_follow does. A second build of the same spec is refused while one runs.",
        effect: Effect::Spends,
        properties: || {
            json!({"spec": spec(),
                   "provider": {"type": "string", "enum": ["config", "replay"], "description": "Who answers the models [default: config]."},
                   "follow": {"type": "boolean", "description": "Wait for the build as specc_follow does."}})
        },
        required: &[],
    },
    ToolDef {
        name: "specc_approve",
        title: "Run the approved plan",
        description: "Run exactly the plan `specc build --approve plan` saved, asking the planner nothing (`specc approve`). Spends money on worker models. Returns the build's id at once; with `follow`, waits as specc_follow does.",
        effect: Effect::Spends,
        properties: || {
            json!({"spec": spec(),
                   "follow": {"type": "boolean", "description": "Wait for the build as specc_follow does."}})
        },
        required: &[],
    },
];

/// The tool named `name`.
pub(super) fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

impl ToolDef {
    /// The tool as the protocol lists it (`tools/list`).
    pub(super) fn listed(&self) -> Value {
        let read_only = self.effect == Effect::Reads;
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": {
                "type": "object",
                "properties": (self.properties)(),
                "required": self.required,
                "additionalProperties": false,
            },
            "annotations": {
                "title": self.title,
                "readOnlyHint": read_only,
                // A build overwrites nothing a person made (it refuses instead) but
                // replaces what it built before in out/.
                "destructiveHint": self.effect == Effect::Spends,
                "idempotentHint": read_only,
                "openWorldHint": self.effect != Effect::Reads,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_tool_is_prefixed_and_its_required_arguments_are_properties() {
        for t in super::TOOLS {
            assert!(t.name.starts_with("specc_"), "{}", t.name);
            let props = (t.properties)();
            for r in t.required {
                assert!(props.get(*r).is_some(), "{}: {r}", t.name);
            }
        }
    }
}
