//! What a worker reads besides its instructions: the spec's sections it covers, as written,
//! and the decisions it needs in full — its own planner's, the spec's, and those its task,
//! its sections or those decisions name — the rest of its scope by id, for `read_decision`.
//! design: spec.node-text

use std::collections::HashSet;

use specc_ir::plan::TaskNode;
use specc_ir::{IntentNode, IntentTree};
use specc_plan::spec_text;

use super::context::{DecisionText, SpecSection};

/// Characters of the spec's text one work order carries before the rest of its sections
/// become ids to read with `read_spec` (about 12,000 tokens).
pub(super) const WORKER_SPEC_CHARS: usize = 48_000;

/// The sections a leaf covering requirements of `nodes` reads: each node (the outermost
/// of nested ones) with its subsections while they fit, the rest by id, and the sections
/// elsewhere that their text names.
pub(super) fn sections(tree: &IntentTree, nodes: &[&IntentNode]) -> Vec<SpecSection> {
    let mut outermost: Vec<&IntentNode> = nodes
        .iter()
        .copied()
        .filter(|n| !nodes.iter().any(|m| inside(n, m)))
        .collect();
    // In the spec's order.
    outermost.sort_by_key(|n| n.span.start);
    let mut out: Vec<SpecSection> = Vec::new();
    let mut left = WORKER_SPEC_CHARS;
    let mut named = Vec::new();
    for n in outermost {
        let shown = spec_text::shown(tree, n, left);
        for s in &shown.sections {
            let text = s["text"].as_str().unwrap_or_default();
            left = left.saturating_sub(text.len());
            out.push(section(s, text, "covered"));
        }
        for s in &shown.outline {
            out.push(section(s, "", "omitted"));
        }
        named.extend(shown.references);
    }
    for s in &named {
        let id = s["id"].as_str().unwrap_or_default();
        if !out.iter().any(|o| o.id == id) {
            out.push(section(s, "", "named"));
        }
    }
    out
}

fn section(s: &serde_json::Value, text: &str, why: &str) -> SpecSection {
    SpecSection {
        id: s["id"].as_str().unwrap_or_default().to_owned(),
        title: s["title"].as_str().unwrap_or_default().to_owned(),
        text: text.to_owned(),
        why: why.to_owned(),
    }
}

/// The spec and every decision of the plan, for the `read_spec` and `read_decision` tools.
#[derive(Debug, Default)]
pub struct SpecIndex {
    tree: Option<IntentTree>,
    /// Text by id: the planners', then the spec's over them.
    decisions: std::collections::HashMap<String, String>,
}

impl SpecIndex {
    pub fn new(tree: IntentTree, planned: &[specc_ir::plan::PlannedDecision]) -> SpecIndex {
        let mut decisions = std::collections::HashMap::new();
        for d in planned {
            decisions
                .entry(d.id.clone())
                .or_insert_with(|| d.decision.clone());
        }
        for n in tree.nodes() {
            for d in &n.decisions {
                if let Some(id) = &d.id {
                    decisions.insert(id.clone(), d.text.clone());
                }
            }
        }
        SpecIndex {
            tree: Some(tree),
            decisions,
        }
    }

    /// The answer to a `read_spec` call.
    pub(super) fn read_spec(&self, call: &specc_llm::ToolCall) -> Result<String, String> {
        let tree = self
            .tree
            .as_ref()
            .ok_or("the spec is not available to this worker")?;
        let text = spec_text::read_spec(tree, call);
        if text.starts_with("there is no section") {
            return Err(text);
        }
        Ok(text)
    }

    /// The text of decision `id` as planned (a settlement overrides it: the caller's).
    pub(super) fn decision(&self, id: &str) -> Option<&str> {
        self.decisions.get(id).map(String::as_str)
    }
}

/// Whether `n` is strictly inside `m`'s subtree.
fn inside(n: &IntentNode, m: &IntentNode) -> bool {
    let (n, m) = (n.id.as_str(), m.id.as_str());
    n != m && (m.is_empty() || n.starts_with(&format!("{m}/")))
}

/// The decisions `t` is given in full, and the ids of the others in its scope: in full
/// are the spec's, those its own planner made (what it reads beyond its planner's own
/// reads: the planner's decisions and its dependencies'), and those named by its title,
/// instructions, acceptance, requirement texts, sections or the decisions kept.
pub(super) fn decisions(
    t: &TaskNode,
    planner: Option<&TaskNode>,
    all: Vec<DecisionText>,
    texts: &[&str],
) -> (Vec<DecisionText>, Vec<String>) {
    let inherited: HashSet<&str> = planner
        .map(|p| p.decisions_to_read.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let mut keep: Vec<bool> = all
        .iter()
        .map(|d| d.spec || !inherited.contains(d.id.as_str()))
        .collect();
    let task_texts: Vec<&str> = [t.title.as_str(), t.instructions.as_str()]
        .into_iter()
        .chain(t.acceptance.iter().map(String::as_str))
        .chain(texts.iter().copied())
        .collect();
    // Named by the task's texts, then by a kept decision's text (twice: names of names).
    for _ in 0..3 {
        let named: Vec<bool> = all
            .iter()
            .map(|d| {
                let kept_texts = all
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(k, _)| k.text.as_str());
                task_texts
                    .iter()
                    .copied()
                    .chain(kept_texts)
                    .any(|text| names_id(text, &d.id))
            })
            .collect();
        for (k, n) in keep.iter_mut().zip(named) {
            *k |= n;
        }
    }
    let mut given = Vec::new();
    let mut others = Vec::new();
    for (d, k) in all.into_iter().zip(keep) {
        if k {
            given.push(d);
        } else {
            others.push(d.id);
        }
    }
    (given, others)
}

/// Whether `text` names decision `id` (as a whole dotted name).
fn names_id(text: &str, id: &str) -> bool {
    let part = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || "_-.".contains(c));
    text.match_indices(id).any(|(i, _)| {
        let after = text[i + id.len()..].chars().next();
        // A sentence's full stop after the id is not part of it.
        let after = after.filter(|c| {
            *c != '.'
                || text[i + id.len() + 1..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        });
        !part(text[..i].chars().next_back()) && !part(after)
    })
}

#[cfg(test)]
mod tests {
    use super::names_id;

    #[test]
    fn a_decision_is_named_as_a_whole_dotted_name() {
        assert!(names_id("follow cli.output.", "cli.output"));
        assert!(names_id("(design: cli.output)", "cli.output"));
        assert!(!names_id("see cli.output-v2", "cli.output"));
        assert!(!names_id("see cli.outputs", "cli.output"));
        assert!(!names_id("see xcli.output", "cli.output"));
    }
}
