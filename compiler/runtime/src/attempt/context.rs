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
    /// The planner's rationale (empty for a spec decision): the owner's side when a worker
    /// contests it. Never shown to the worker.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rationale: String,
    /// Fixed by the spec's author: binding on everyone, never contested.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub spec: bool,
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
    /// The planner task that planned this leaf, for its re-plan once its ladder is
    /// exhausted (design: runtime.disputes); `None` for the tasks the build added.
    #[serde(default)]
    pub parent: Option<ParentBrief>,
    /// The spec's text the task covers: the sections that hold its requirements and their
    /// subsections, as written, and the sections they name (design: spec.node-text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spec: Vec<SpecSection>,
    /// The decisions in scope that are not given in full (`decisions`): their ids, read
    /// with `read_decision`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_decisions: Vec<String>,
}

/// A section of the spec as a worker reads it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SpecSection {
    pub id: String,
    pub title: String,
    /// Its text as written; empty when it was left out for length (read with `read_spec`).
    #[serde(default)]
    pub text: String,
    /// Why it is here: `covered` (holds a requirement of the task, or is under one that
    /// does), `omitted` (under one, left out for length), `named` (the text names it).
    pub why: String,
}

/// The planner task a leaf was planned by, as the leaf's re-plan by its parent sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ParentBrief {
    /// The parent task's id (`""`: the root).
    pub id: String,
    pub title: String,
    pub instructions: String,
    /// What the parent planned, and where each writes: the leaf among them (skipped where
    /// its siblings are meant). One list shared by every leaf of the parent: a plan of `n`
    /// leaves holds `n` entries, not `n²` (design: perf.width).
    pub siblings: std::sync::Arc<[SiblingBrief]>,
}

/// One sibling of a leaf, as its parent's re-plan sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SiblingBrief {
    pub id: String,
    pub title: String,
    pub write_scope: Vec<String>,
}

/// What a failed attempt left for this one (design: runtime.carried-work).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct CarriedNote {
    /// Paths the checkout holds as the earlier attempt left them.
    pub(super) kept: Vec<String>,
    /// Paths whose earlier version was dropped: another task changed them since, or they
    /// are outside the write scope now.
    pub(super) dropped: Vec<String>,
}

/// Why this attempt exists, when it is not the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Retry {
    /// The earlier submission conflicted with work that landed meanwhile.
    Conflict { path: String, theirs: String },
    /// An earlier attempt failed (acceptance, a limit, a give-up); this one may have a
    /// stronger model.
    Failed { failure: String },
    /// The task was re-planned after an earlier attempt: what happened, in words.
    Replanned { note: String },
}

pub(super) const CHARTER: &str = "You are a worker of specc, a compiler from specifications to code. \
You carry out one task in a checkout of the repository, using the tools. Follow the task's \
instructions and the decisions exactly: you do not make design decisions, and you do not start \
other agents. Your task quotes the spec's sections it covers as written: the rules in their \
prose, tables and code blocks bind like the requirements (`read_spec` reads any other section, \
`read_decision` any decision of the plan; `contest_decision` when the spec contradicts a \
decision you were given). Write only inside your write scope. Keep files small and focused. When the task is \
complete, call `done` with a one-line summary: the acceptance checks then run, and you see their \
output once if they fail. If a check is wrong (it demands what the task does not ask, or correct \
work cannot pass it), call `dispute_check` with the evidence instead of bending the code to it: \
your work is kept for the next attempt. If the task cannot be done as given, call `give_up` and say why. Use \
`note` for what the next agent should know about the codebase (the field guide). Where code carries \
out one of the decisions you are given, say so in a comment `design: <decision id>` beside it: \
specc checks those references when a decision changes. Likewise mark the code that implements \
each requirement your task covers, and the test that tests it, with a comment `req: <requirement \
id>` (`// req: R-3`): the checks after `done` want one for every requirement the task covers.";

/// The characters of a first attempt's opening messages (charter, field guide, task): what
/// every call of the attempt sends before the conversation grows, for a cost estimate.
pub fn opening_chars(order: &WorkOrder, field_guide: &str, line_budget: usize) -> usize {
    messages(order, field_guide, line_budget, None, None)
        .iter()
        .map(|m| m.text.len())
        .sum()
}

/// The conversation an attempt starts with.
pub(super) fn messages(
    order: &WorkOrder,
    field_guide: &str,
    line_budget: usize,
    retry: Option<&Retry>,
    carried: Option<&CarriedNote>,
) -> Vec<Message> {
    let t = &order.task;
    let mut u = format!(
        "# Task `{}`: {}\n\n## Instructions\n{}\n",
        t.id,
        t.title,
        t.instructions.trim()
    );
    u.push_str(&spec_section(order));
    if !order.decisions.is_empty() {
        u.push_str("\n## Decisions to follow\n");
        for d in &order.decisions {
            u.push_str(&format!("- `{}`: {}\n", d.id, d.text.trim()));
        }
    }
    if !order.other_decisions.is_empty() {
        let ids: Vec<String> = order
            .other_decisions
            .iter()
            .map(|d| format!("`{d}`"))
            .collect();
        u.push_str(&format!(
            "\nOther decisions of the plan (read one with `read_decision` if your work touches it): {}\n",
            ids.join(", ")
        ));
    }
    if !order.requirements.is_empty() {
        u.push_str("\n## Requirements this task covers (each named by a `req: <id>` comment where it is implemented or tested)\n");
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
    if !t.write_scope.is_empty() {
        // Told up front, not first at `done` (design: runtime.landing-refusals).
        u.push_str(&format!(
            "\nNo file may pass {line_budget} lines: the VCS refuses a landing that grows one \
             past it, so split code that grows toward it into several files as you write it.\n"
        ));
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
        Some(Retry::Replanned { note }) => {
            u.push_str(&format!("\n## Earlier attempt\n{}\n", note.trim_end()));
        }
        None => {}
    }
    if let Some(c) = carried.filter(|c| !c.kept.is_empty() || !c.dropped.is_empty()) {
        u.push_str(&carried_section(c));
    }
    // The guide's own `# Field guide` heading, if it has one, is the section's heading.
    let body = field_guide.trim();
    let body = match body.split_once('\n') {
        Some((first, rest)) if first.trim().eq_ignore_ascii_case("# field guide") => rest.trim(),
        None if body.eq_ignore_ascii_case("# field guide") => "",
        _ => body,
    };
    let guide = if body.is_empty() {
        "(empty)".to_owned()
    } else {
        body.to_owned()
    };
    // The charter alone is the system message, the same for every worker, so a provider
    // can cache it with the tools; the guide and the task follow (design: llm.prompt-cache).
    vec![
        Message::system(CHARTER),
        Message::user(format!("{u}\n## Field guide\n{guide}\n")),
    ]
}

/// The spec's sections the task covers, as written, and the ids of those to read.
fn spec_section(order: &WorkOrder) -> String {
    let mut out = String::new();
    let shown: Vec<&SpecSection> = order.spec.iter().filter(|s| !s.text.is_empty()).collect();
    if !shown.is_empty() {
        let texts: Vec<&str> = shown.iter().map(|s| s.text.trim_end()).collect();
        out.push_str("\n## The spec's sections this task covers, as written\n\n");
        out.push_str(&texts.join("\n\n"));
        out.push('\n');
    }
    let to_read: Vec<String> = order
        .spec
        .iter()
        .filter(|s| s.text.is_empty())
        .map(|s| {
            let why = if s.why == "named" {
                "named above"
            } else {
                "left out for length"
            };
            format!("`{}` ({}, {why})", s.id, s.title)
        })
        .collect();
    if !to_read.is_empty() {
        out.push_str(&format!(
            "\nMore of the spec, read with `read_spec`: {}\n",
            to_read.join(", ")
        ));
    }
    out
}

/// What the worker is told of the work an earlier attempt left in its checkout.
fn carried_section(c: &CarriedNote) -> String {
    let list = |paths: &[String]| {
        paths
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut u = String::from("\n## Work kept from the earlier attempt\n");
    if !c.kept.is_empty() {
        u.push_str(&format!(
            "The earlier attempt's changes are in the checkout, as it left them: {}. Start from \
             them: read them, fix what the failure calls for, and keep what is right.\n",
            list(&c.kept)
        ));
    }
    if !c.dropped.is_empty() {
        u.push_str(&format!(
            "Its changes to {} were dropped: another task changed those files since, or they are outside your write scope now.\n",
            list(&c.dropped)
        ));
    }
    u
}
