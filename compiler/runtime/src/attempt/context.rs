//! What a worker is told: a short role charter, the field guide, and its task — title,
//! instructions, the text of every decision it must read and of every requirement it
//! covers, its write scope and its acceptance checks. Nothing of the planner's deliberation.
//! design: runtime.worker-protocol

use specc_ir::plan::TaskNode;
use specc_llm::Message;

use super::acceptance::Check;

/// A decision a task reads, with its text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DecisionText {
    pub id: String,
    pub text: String,
}

/// A requirement a task covers, with its text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RequirementText {
    pub id: String,
    pub level: String,
    pub text: String,
}

/// A work leaf as the runtime carries it out.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WorkOrder {
    pub task: TaskNode,
    /// What decides whether landed work is still current: the task's own fingerprint and
    /// the texts of its decisions, requirements and checks (blake3, hex).
    pub fingerprint: String,
    pub decisions: Vec<DecisionText>,
    pub requirements: Vec<RequirementText>,
    pub checks: Vec<Check>,
    /// Why the build added this task while it ran (a reviewer's finding); `None` for the
    /// plan's own leaves.
    pub origin: Option<String>,
}

/// Why this attempt exists, when it is not the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retry {
    /// The earlier submission conflicted with work that landed meanwhile.
    Conflict { path: String, theirs: String },
    /// An earlier attempt failed (acceptance, a limit, a give-up); this one may have new
    /// instructions from the planner, or a stronger model.
    Failed { failure: String },
}

pub(super) const CHARTER: &str = "You are a worker of specc, a compiler from specifications to code. \
You carry out one task in a checkout of the repository, using the tools. Follow the task's \
instructions and the decisions exactly: you do not make design decisions, and you do not start \
other agents. Write only inside your write scope. Keep files small and focused. When the task is \
complete, call `done` with a one-line summary: the acceptance checks then run, and you see their \
output once if they fail. If the task cannot be done as given, call `give_up` and say why. Use \
`note` for what the next agent should know about the codebase (the field guide).";

/// The conversation an attempt starts with.
pub(super) fn messages(
    order: &WorkOrder,
    field_guide: &str,
    retry: Option<&Retry>,
) -> Vec<Message> {
    let t = &order.task;
    let mut u = format!(
        "# Task `{}`: {}\n\n## Instructions\n{}\n",
        t.id,
        t.title,
        t.instructions.trim()
    );
    if !order.decisions.is_empty() {
        u.push_str("\n## Decisions to follow\n");
        for d in &order.decisions {
            u.push_str(&format!("- `{}`: {}\n", d.id, d.text.trim()));
        }
    }
    if !order.requirements.is_empty() {
        u.push_str("\n## Requirements this task covers\n");
        for r in &order.requirements {
            u.push_str(&format!("- {} ({}): {}\n", r.id, r.level, r.text.trim()));
        }
    }
    u.push_str("\n## Write scope\n");
    if t.write_scope.is_empty() {
        u.push_str("(none: this task writes no files)\n");
    }
    for s in &t.write_scope {
        u.push_str(&format!("- `{s}`\n"));
    }
    if !t.read_scope.is_empty() {
        u.push_str(&format!("\nRead first: {}\n", t.read_scope.join(", ")));
    }
    u.push_str(&format!(
        "\n## Generated files\n{}\n",
        crate::checkouts::generated_files_briefing()
    ));
    if !order.checks.is_empty() {
        u.push_str("\n## Acceptance checks (run after `done`)\n");
        for c in &order.checks {
            u.push_str(&format!(
                "- {}:\n```sh\n{}\n```\n",
                c.name,
                c.script.trim_end()
            ));
        }
    }
    match retry {
        Some(Retry::Conflict { path, theirs }) => u.push_str(&format!(
            "\n## Earlier attempt\nYour earlier attempt conflicted with work that landed meanwhile \
             in `{path}` ({theirs}). The checkout now holds that work: redo the task on top of it.\n"
        )),
        Some(Retry::Failed { failure }) => u.push_str(&format!(
            "\n## Earlier attempt\nAn earlier attempt failed:\n{failure}\n"
        )),
        None => {}
    }
    let guide = if field_guide.trim().is_empty() {
        "(empty)".to_owned()
    } else {
        field_guide.trim_end().to_owned()
    };
    vec![
        Message::system(format!("{CHARTER}\n\n# Field guide\n{guide}")),
        Message::user(u),
    ]
}
