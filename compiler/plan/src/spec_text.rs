//! What a planner reads of the spec: its node's text and its subtree's, section by section
//! in document order and as written (paragraphs, lists, tables, fenced blocks), while they
//! fit the budget, then an outline of the rest (ids, titles, requirement ids and levels);
//! every requirement of the subtree with its full text, so that a first answer can cover
//! them; and the sections the shown text refers to by title. Whatever is not shown can be
//! read with `read_spec`, by id.
//! design: spec.node-text

use serde_json::{Value, json};
use specc_ir::{IntentNode, IntentTree, Level};
use specc_llm::{Tool, ToolCall};

/// The tool that returns a section's text.
pub const READ_SPEC: &str = "read_spec";

/// Characters a token is counted as, as the cost estimate counts them.
pub const CHARS_PER_TOKEN: usize = 4;

/// Reads a planner or worker may make in one question before it must answer.
pub const MAX_READS: usize = 12;

/// The node's part of the spec as a planner is shown it.
#[derive(Debug, Default)]
pub struct Shown {
    /// `{"id", "title", "parent", "text"}` of each section shown whole, the node first
    /// (its `parent` left out).
    pub sections: Vec<Value>,
    /// `{"id", "title", "parent", "requirements": ["id (LEVEL)"]}` of each section left out.
    pub outline: Vec<Value>,
    /// `{"id", "title"}` of sections outside the subtree that the shown text names.
    pub references: Vec<Value>,
}

impl Shown {
    /// Whether the planner needs `read_spec`: something is left out or referred to.
    pub fn needs_reading(&self) -> bool {
        !self.outline.is_empty() || !self.references.is_empty()
    }
}

/// `node`'s subtree as shown within `budget` characters (the node's own text always), with
/// the sections of `tree` outside the subtree that the shown text refers to.
pub fn shown(tree: &IntentTree, node: &IntentNode, budget: usize) -> Shown {
    let mut out = Shown::default();
    let mut used = 0;
    let mut stack: Vec<(&IntentNode, &str)> = vec![(node, "")];
    let mut texts: Vec<&str> = Vec::new();
    while let Some((n, parent)) = stack.pop() {
        let first = std::ptr::eq(n, node);
        // The outline stops at the first section left out under a shown one: what is below
        // it is that section's (`read_spec` lists its subsections), so a planner's request
        // stays bounded however large its subtree.
        // A section costs what the request spends on it: its entry and its requirements',
        // as JSON (the requirements are listed again, with their ids).
        let cost = section(n, parent).to_string().len()
            + n.requirements
                .iter()
                .map(|r| requirement(r, n).to_string().len() + 1)
                .sum::<usize>();
        let fits = out.outline.is_empty() && used + cost <= budget;
        let outlined = !(first || fits);
        if !outlined {
            stack.extend(n.children.iter().rev().map(|c| (c, n.id.as_str())));
        }
        if first {
            used += cost;
            texts.push(&n.text);
            out.sections
                .push(json!({"id": n.id.as_str(), "title": n.title, "text": n.text}));
        } else if !outlined {
            used += cost;
            texts.push(&n.text);
            out.sections.push(section(n, parent));
        } else {
            // Once one section is left out, the rest are outlined too: document order stays.
            // Its own requirements by id and level, and how many its subsections hold.
            let reqs: Vec<String> = n
                .requirements
                .iter()
                .map(|r| format!("{} ({})", r.id.as_str(), r.level))
                .collect();
            let below = subtree_requirements(n) - n.requirements.len();
            let mut entry = json!({"id": n.id.as_str(), "title": n.title,
                                   "parent": parent, "requirements": reqs});
            if below > 0 {
                entry["requirements_below"] = json!(below);
            }
            out.outline.push(entry);
        }
    }
    out.references = references(tree, node, &texts);
    out
}

/// The requirements of the sections `shown` shows whole: id, level, full text and section
/// (the outline names the others by id).
pub fn requirements(node: &IntentNode, shown: &Shown) -> Vec<Value> {
    let whole: std::collections::HashSet<&str> = shown
        .sections
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if !whole.contains(n.id.as_str()) {
            continue;
        }
        stack.extend(n.children.iter().rev());
        out.extend(n.requirements.iter().map(|r| requirement(r, n)));
    }
    out
}

/// A shown section as the request has it.
fn section(n: &IntentNode, parent: &str) -> Value {
    json!({"id": n.id.as_str(), "title": n.title, "parent": parent, "text": n.text})
}

/// A requirement as the request lists it.
fn requirement(r: &specc_ir::Requirement, n: &IntentNode) -> Value {
    json!({"id": r.id.as_str(), "level": r.level.to_string(), "text": r.text,
           "section": n.id.as_str()})
}

/// The spec decisions of `in_scope` a planner shown `shown` is given: all but those fixed
/// inside an outlined section, which bind the planners below it (and the checks hold every
/// answer to all of them).
pub fn in_view<'a>(
    tree: &IntentTree,
    shown: &Shown,
    in_scope: &'a [(String, String)],
) -> Vec<&'a (String, String)> {
    let mut hidden = std::collections::HashSet::new();
    for o in &shown.outline {
        let Some(n) = o["id"].as_str().and_then(|id| tree.node(id)) else {
            continue;
        };
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            hidden.extend(x.decisions.iter().filter_map(|d| d.id.as_deref()));
            stack.extend(x.children.iter());
        }
    }
    in_scope
        .iter()
        .filter(|(id, _)| !hidden.contains(id.as_str()))
        .collect()
}

/// How many requirements `node`'s subtree holds.
fn subtree_requirements(node: &IntentNode) -> usize {
    let mut n = 0;
    let mut stack = vec![node];
    while let Some(x) = stack.pop() {
        n += x.requirements.len();
        stack.extend(x.children.iter());
    }
    n
}

/// Whether `level` must be covered by a work child.
pub fn binding(level: Level) -> bool {
    matches!(
        level,
        Level::Must | Level::MustNot | Level::Shall | Level::ShallNot
    )
}

/// Sections of `tree` outside `node`'s subtree (and not its ancestors) whose title `texts`
/// name as a word, capitalised as the title is: `as under Output` names the section titled
/// "Output".
pub fn references(tree: &IntentTree, node: &IntentNode, texts: &[&str]) -> Vec<Value> {
    let inside = |id: &str| {
        let own = node.id.as_str();
        own.is_empty()
            || id == own
            || id.starts_with(&format!("{own}/"))
            || own.starts_with(&format!("{id}/"))
    };
    let mut out = Vec::new();
    for n in tree.nodes() {
        let id = n.id.as_str();
        if id.is_empty() || inside(id) || n.title.chars().count() < 3 {
            continue;
        }
        if texts.iter().any(|t| names(t, &n.title)) {
            out.push(json!({"id": id, "title": n.title}));
        }
    }
    out
}

/// Whether `text` holds `title` as a whole phrase (not inside a longer word).
fn names(text: &str, title: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(title).any(|(i, _)| {
        !word(text[..i].chars().next_back()) && !word(text[i + title.len()..].chars().next())
    })
}

/// The `read_spec` tool.
pub fn read_spec_tool() -> Tool {
    Tool {
        name: READ_SPEC.to_owned(),
        description:
            "Read a section of the spec by id: its text as written, and the ids of its subsections."
                .to_owned(),
        parameters: json!({"type": "object", "required": ["id"],
            "properties": {"id": {"type": "string", "description": "The section's id, as the outline or a reference gives it (`storage/pages`); `\"\"` for the spec's start."}}}),
    }
}

/// The answer to a `read_spec` call on `tree`.
pub fn read_spec(tree: &IntentTree, call: &ToolCall) -> String {
    let id = call
        .arguments
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .trim_start_matches('#');
    match tree.node(id) {
        Some(n) => {
            // The ids a plan cites for the sentences read here, and where to read on.
            let mut out = n.text.clone();
            let ids: Vec<&str> = n.requirements.iter().map(|r| r.id.as_str()).collect();
            if !ids.is_empty() {
                out.push_str(&format!("\n\n(requirements: {})", ids.join(", ")));
            }
            let children: Vec<&str> = n.children.iter().map(|c| c.id.as_str()).collect();
            if !children.is_empty() {
                out.push_str(&format!("\n\n(subsections: {})", children.join(", ")));
            }
            out
        }
        None => {
            let near: Vec<&str> = tree
                .nodes()
                .map(|n| n.id.as_str())
                .filter(|n| !n.is_empty() && (n.contains(id) || id.contains(*n)))
                .take(8)
                .collect();
            format!(
                "there is no section `{id}`{}",
                if near.is_empty() {
                    String::new()
                } else {
                    format!("; did you mean: {}", near.join(", "))
                }
            )
        }
    }
}
