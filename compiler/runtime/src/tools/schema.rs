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
                json!({"path": {"type": "string", "description": "The file, relative to the repository's root (`src/lib.rs`)."},
                       "start_line": {"type": "integer", "description": "The first line shown, 1-based; default 1."},
                       "lines": {"type": "integer", "description": "How many lines; default 200, at most 1000."}}),
                &["path"],
            ),
        ),
        tool(
            "list",
            "List the files under a directory of the checkout (default: all).",
            obj(
                json!({"path": {"type": "string", "description": "A directory relative to the repository's root; default: the whole checkout."}}),
                &[],
            ),
        ),
        tool(
            "search",
            "Search the checkout with a regular expression; answers path:line: text.",
            obj(
                json!({"pattern": {"type": "string", "description": "A regular expression (Rust regex syntax), matched against each line."},
                       "path": {"type": "string", "description": "A file or directory to search, relative to the root; default: everything."}}),
                &["pattern"],
            ),
        ),
        tool(
            "edit",
            "Replace the one exact occurrence of `old` in a file with `new`.",
            obj(
                json!({"path": {"type": "string", "description": "The file, relative to the repository's root; inside your write scope."},
                       "old": {"type": "string", "description": "The exact text to replace: it must occur exactly once in the file (include enough lines to be unique)."},
                       "new": {"type": "string", "description": "The text that replaces it."}}),
                &["path", "old", "new"],
            ),
        ),
        tool(
            "write",
            "Write a whole file (created with its directories if missing).",
            obj(
                json!({"path": {"type": "string", "description": "The file, relative to the repository's root; inside your write scope. Missing directories are made."},
                       "content": {"type": "string", "description": "The file's whole new content."},
                       "executable": {"type": "boolean", "description": "Make the file executable (a script); default false."}}),
                &["path", "content"],
            ),
        ),
        tool(
            "run",
            "Run a shell command in the checkout (sandboxed; output capped).",
            obj(
                json!({"command": {"type": "string", "description": "A shell command run by `sh -c` in the checkout's root, in the sandbox: the checkout and `$TMPDIR` are writable, `/tmp` and the rest of the system are not, and there is no network beyond loopback. `$HOME` and `$TMPDIR` are kept from one `run` to the next of this attempt. The checkout is a git repository at your task's base, for reading: `git status`, `git diff` and `git log` show what you changed and what landed before; your work lands when you call `done`, not through `git commit`. `cargo test`, `python3 -m unittest -q`."},
                       "timeout_secs": {"type": "integer", "description": "Seconds before the command is killed; at most the attempt's limit."}}),
                &["command"],
            ),
        ),
        tool(
            "note",
            "Add a line to the field guide (field-guide/index.md), the notes every agent reads, under a section.",
            obj(
                json!({"text": {"type": "string", "description": "One line the next agent should know about the codebase (a convention, a pitfall, where something lives)."},
                       "section": {"type": "string", "description": "The guide's section to add it under; default: the end."}}),
                &["text"],
            ),
        ),
        tool(
            "flag_big_file",
            "Flag a file that is too big to work on: it gets split before it grows further.",
            obj(
                json!({"path": {"type": "string", "description": "The file, relative to the repository's root."},
                       "reason": {"type": "string", "description": "Why it is too big to work on."}}),
                &["path", "reason"],
            ),
        ),
        tool(
            "break_scope",
            "Only when core code outside your write scope must change for the task: replace the one occurrence of `old` in that file with `new` (at most 20 lines in all), where `new` carries a comment referencing `design: <decision>`, and give the decision its new text and why. The code that relied on the old text is revisited after you land.",
            obj(
                json!({"path": {"type": "string", "description": "The file outside your write scope, relative to the root."},
                       "old": {"type": "string", "description": "The exact text to replace: once in the file."},
                       "new": {"type": "string", "description": "Its replacement, with a comment `design: <decision>` saying why."},
                       "why": {"type": "string", "description": "Why the task cannot be done without this change."},
                       "decision": {"type": "string", "description": "The id of the decision the change makes you update."},
                       "decision_text": {"type": "string", "description": "The decision's new text."}}),
                &["path", "old", "new", "why", "decision", "decision_text"],
            ),
        ),
        tool(
            "pin",
            "Pin the `design:` references on a line of a file in your scope to their decisions' current text (after you revisited the code).",
            obj(
                json!({"path": {"type": "string", "description": "The file, relative to the root, in your write scope."},
                       "line": {"type": "integer", "description": "The 1-based line whose `design:` references to pin."}}),
                &["path", "line"],
            ),
        ),
        tool(
            "report_contradiction",
            "Report two decisions (by id) that contradict each other, and how: the coordinator merges them once you land.",
            obj(
                json!({"a": {"type": "string", "description": "One decision's id."},
                       "b": {"type": "string", "description": "The other decision's id."},
                       "explanation": {"type": "string", "description": "How they contradict each other."}}),
                &["a", "b", "explanation"],
            ),
        ),
        tool(
            "read_spec",
            "Read a section of the spec by id: its text as written (prose, tables, code blocks) and the ids of its subsections. Your task gives the sections it covers; read others it names or refers to.",
            obj(
                json!({"id": {"type": "string", "description": "The section's id (`storage/pages`); `\"\"` for the spec's start."}}),
                &["id"],
            ),
        ),
        tool(
            "read_decision",
            "Read a decision of the plan by id: the text every task follows. Your task gives the decisions it needs in full and names the others.",
            obj(
                json!({"id": {"type": "string", "description": "The decision's id (`store.format`)."}}),
                &["id"],
            ),
        ),
        tool(
            "contest_decision",
            "Contest a decision you were given (by id) that the spec contradicts: quote the requirement's or the check's words that say otherwise. The coordinator settles it at once with the decision's owner, and you are told the settled text: follow that, as every later task will. Not for a decision you merely dislike, and not for two decisions that contradict each other (report_contradiction).",
            obj(
                json!({"decision": {"type": "string", "description": "The decision's id, as your task lists it."},
                       "evidence": {"type": "string", "description": "The spec's words (a requirement you cover, an acceptance check) that the decision contradicts, quoted, and how."},
                       "proposed": {"type": "string", "description": "The text the decision should have."}}),
                &["decision", "evidence", "proposed"],
            ),
        ),
        tool(
            "done",
            "Finish: the task is complete. Its acceptance checks run next.",
            obj(
                json!({"summary": {"type": "string", "description": "One line: what you did. It becomes the commit's message."}}),
                &["summary"],
            ),
        ),
        tool(
            "dispute_check",
            "Dispute one of your task's acceptance checks that is wrong (it tests something the task does not ask for, cannot pass on correct work, or is not a command): the attempt ends, your work is kept, and the planner that wrote the check decides whether to change it. Not for a check your work fails: fix the work.",
            obj(
                json!({"check": {"type": "string", "description": "The check's name exactly as your task lists it: `acceptance #2`, `spec cli check 1`."},
                       "evidence": {"type": "string", "description": "Why the check is wrong: what it demands, what the instructions, decisions and requirements ask instead, and why correct work cannot pass it."},
                       "output": {"type": "string", "description": "The check's output that shows it (the lines that matter), if it ran."}}),
                &["check", "evidence"],
            ),
        ),
        tool(
            "give_up",
            "Stop: the task cannot be done as given. Say why.",
            obj(
                json!({"reason": {"type": "string", "description": "Why the task cannot be done as given, and what would make it possible."}}),
                &["reason"],
            ),
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
