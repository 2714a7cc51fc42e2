//! The tools' definitions as the model sees them (JSON schemas), and the reading of a call's
//! arguments against them: a call that does not fit is answered with the schema.
//! design: runtime.tools

use serde::de::DeserializeOwned;
use serde_json::json;
use specc_llm::{Tool, ToolCall};

use super::outcome::ToolOutcome;

/// The tools' definitions, as the model sees them.
pub(crate) fn definitions() -> std::sync::Arc<[Tool]> {
    // Built once and shared: every turn of every worker sends them.
    static DEFINITIONS: std::sync::LazyLock<std::sync::Arc<[Tool]>> =
        std::sync::LazyLock::new(|| build().into());
    DEFINITIONS.clone()
}

fn build() -> Vec<Tool> {
    let tool = |name: &str, description: &str, parameters: serde_json::Value| Tool {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    let obj = |props: serde_json::Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required});
    vec![
        tool(
            "read",
            "Read a file of the checkout with line numbers, a window at a time.",
            obj(
                json!({"path": {"type": "string"},
                       "start_line": {"type": "integer", "description": "1-based, default 1"},
                       "lines": {"type": "integer", "description": "default 200, at most 1000"}}),
                &["path"],
            ),
        ),
        tool(
            "list",
            "List the files under a directory of the checkout (default: all).",
            obj(json!({"path": {"type": "string"}}), &[]),
        ),
        tool(
            "search",
            "Search the checkout with a regular expression; answers path:line: text.",
            obj(
                json!({"pattern": {"type": "string"}, "path": {"type": "string"}}),
                &["pattern"],
            ),
        ),
        tool(
            "edit",
            "Replace the one exact occurrence of `old` in a file with `new`.",
            obj(
                json!({"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}}),
                &["path", "old", "new"],
            ),
        ),
        tool(
            "write",
            "Write a whole file (created with its directories if missing).",
            obj(
                json!({"path": {"type": "string"}, "content": {"type": "string"},
                       "executable": {"type": "boolean"}}),
                &["path", "content"],
            ),
        ),
        tool(
            "run",
            "Run a shell command in the checkout (sandboxed; output capped).",
            obj(
                json!({"command": {"type": "string"},
                       "timeout_secs": {"type": "integer"}}),
                &["command"],
            ),
        ),
        tool(
            "note",
            "Add a line to the field guide (field-guide/index.md), the notes every agent reads, under a section.",
            obj(
                json!({"text": {"type": "string"}, "section": {"type": "string"}}),
                &["text"],
            ),
        ),
        tool(
            "flag_big_file",
            "Flag a file that is too big to work on: it gets split before it grows further.",
            obj(
                json!({"path": {"type": "string"}, "reason": {"type": "string"}}),
                &["path", "reason"],
            ),
        ),
        tool(
            "break_scope",
            "Only when core code outside your write scope must change for the task: replace the one occurrence of `old` in that file with `new` (at most 20 lines in all), where `new` carries a comment referencing `design: <decision>`, and give the decision its new text and why. The code that relied on the old text is revisited after you land.",
            obj(
                json!({"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"},
                       "why": {"type": "string"}, "decision": {"type": "string"},
                       "decision_text": {"type": "string"}}),
                &["path", "old", "new", "why", "decision", "decision_text"],
            ),
        ),
        tool(
            "pin",
            "Pin the `design:` references on a line of a file in your scope to their decisions' current text (after you revisited the code).",
            obj(
                json!({"path": {"type": "string"}, "line": {"type": "integer"}}),
                &["path", "line"],
            ),
        ),
        tool(
            "report_contradiction",
            "Report two decisions (by id) that contradict each other, and how: the coordinator merges them once you land.",
            obj(
                json!({"a": {"type": "string"}, "b": {"type": "string"},
                       "explanation": {"type": "string"}}),
                &["a", "b", "explanation"],
            ),
        ),
        tool(
            "done",
            "Finish: the task is complete. Its acceptance checks run next.",
            obj(json!({"summary": {"type": "string"}}), &["summary"]),
        ),
        tool(
            "give_up",
            "Stop: the task cannot be done as given. Say why.",
            obj(json!({"reason": {"type": "string"}}), &["reason"]),
        ),
    ]
}

/// The text that names an action for the stuck detector: the tool and its arguments.
pub(crate) fn action_key(call: &ToolCall) -> String {
    format!("{} {}", call.name, call.arguments)
}

pub(super) fn parse<T: DeserializeOwned>(call: &ToolCall) -> Result<T, ToolOutcome> {
    serde_json::from_value(call.arguments.clone()).map_err(|e| {
        let schema = definitions()
            .iter()
            .find(|t| t.name == call.name)
            .map(|t| t.parameters.to_string())
            .unwrap_or_default();
        ToolOutcome::error(format!(
            "the arguments of `{}` do not fit its schema ({e}); the schema is {schema}",
            call.name
        ))
    })
}

#[derive(serde::Deserialize)]
pub(super) struct Finish {
    #[serde(default, alias = "reason")]
    pub(super) summary: String,
}
