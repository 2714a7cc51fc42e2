//! Planning a whole intent tree: the root's planner first, then every `plan` child's, each
//! on the intent node it covers, depth first. Answers are cached by the fingerprint of their
//! request — everything the request was built from — so re-planning after a spec edit calls
//! the model only for nodes whose inputs changed.
//! design: runtime.incremental-planning

use std::collections::{BTreeMap, HashMap};

use specc_ir::plan::{ChildKind, PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentNode, IntentTree};
use specc_llm::Client;
use specc_passes::plan;

use crate::planner::{self, Context, PlanError};

/// Limits of a plan.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_depth: usize,
    pub max_width: usize,
    pub max_tokens: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 6,
            max_width: 24,
            max_tokens: 8192,
        }
    }
}

/// A planned tree: each planned task's answer, by task id (the root is `""`).
#[derive(Debug, Default)]
pub struct PlannedTree {
    pub answers: BTreeMap<String, PlannerAnswer>,
    /// Model calls this planning made (cache hits make none).
    pub calls: usize,
    /// Warnings from the checks (serialised siblings, …).
    pub diagnostics: Vec<Diagnostic>,
}

/// Answers by request fingerprint. Persisting it is the caller's business (it is plain data).
pub type Cache = HashMap<String, PlannerAnswer>;

/// Plans `tree`, reusing `cache` and adding to it.
pub async fn plan_tree(
    client: &Client,
    tree: &IntentTree,
    limits: Limits,
    cache: &mut Cache,
) -> Result<PlannedTree, PlanError> {
    let spec_decisions: Vec<(String, String)> = tree
        .nodes()
        .flat_map(|n| n.decisions.iter())
        .filter_map(|d| Some((d.id.clone()?, d.text.clone())))
        .collect();
    let by_id: HashMap<&str, &IntentNode> = tree.nodes().map(|n| (n.id.as_str(), n)).collect();
    let mut out = PlannedTree::default();
    let mut owners: HashMap<String, String> = HashMap::new();
    // (task id, intent node, depth, decisions above)
    let mut stack: Vec<(String, &IntentNode, usize, Vec<PlannedDecision>)> =
        vec![(String::new(), &tree.root, 0, Vec::new())];
    while let Some((task, node, depth, above)) = stack.pop() {
        let mut owned: Vec<String> = owners.keys().cloned().collect();
        owned.sort();
        let ctx = Context {
            ancestors: above.clone(),
            spec_decisions: spec_decisions.clone(),
            owned_elsewhere: owned,
            field_guide: String::new(),
        };
        let request = planner::request(node, &ctx, limits.max_tokens);
        let key = specc_llm::fingerprint(&request);
        let mut answer = match cache.get(&key) {
            Some(a) => a.clone(),
            None => {
                let check = |a: &PlannerAnswer| {
                    let mut d = plan::check_ownership(&task, a, &owners);
                    d.extend(plan::check_spec_decisions(a, tree));
                    d.extend(plan::check_cycles(&task, a));
                    d.extend(plan::check_limits(
                        &task,
                        depth,
                        a,
                        limits.max_depth,
                        limits.max_width,
                    ));
                    d
                };
                let (a, calls) = planner::ask(client, &task, request, check).await?;
                out.calls += calls;
                cache.insert(key, a.clone());
                a
            }
        };
        out.diagnostics
            .extend(plan::serialise_overlapping_writes(&mut answer));
        for d in &answer.decisions {
            owners.entry(d.id.clone()).or_insert_with(|| task.clone());
        }
        let mut below = above.clone();
        below.extend(answer.decisions.iter().cloned());
        for c in answer.children.iter().rev() {
            if c.kind != ChildKind::Plan {
                continue;
            }
            let child_task = if task.is_empty() {
                c.key.clone()
            } else {
                format!("{task}/{}", c.key)
            };
            // A plan child plans the intent node it covers (or its parent's, if it names none).
            let target = c
                .covers_nodes
                .first()
                .and_then(|id| by_id.get(id.as_str()).copied())
                .unwrap_or(node);
            stack.push((child_task, target, depth + 1, below.clone()));
        }
        out.answers.insert(task, answer);
    }
    Ok(out)
}
