//! Planning a whole intent tree: the root's planner first, then every `plan` child's, each
//! on the intent node it covers, depth first. Answers are cached by the fingerprint of their
//! request — everything the request was built from — so re-planning after a spec edit calls
//! the model only for nodes whose inputs changed.
//!
//! Every decision id has one owner, the first task to decide it. When a later answer still
//! decides an owned id differently after its repairs, the coordinator merges the two, the
//! merged decision replaces every copy of that id, and the walk starts again from the root:
//! the requests that carried an old text have changed, so exactly those subtrees are
//! re-planned, and everything else is a cache hit.
//! design: runtime.incremental-planning
//! design: runtime.coordinator

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use specc_ir::plan::{ChildKind, PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentNode, IntentTree};
use specc_llm::Client;
use specc_passes::plan::{self, Conflict, Owned};

use crate::coordinator;
pub use crate::limits::Limits;
use crate::planner::{self, Context, PlanError};

/// Merges one planning may make before it gives up (each merge settles one id for good).
const MAX_MERGES: usize = 32;

/// A planned tree: each planned task's answer, by task id (the root is `""`).
#[derive(Debug, Default)]
pub struct PlannedTree {
    pub answers: BTreeMap<String, PlannerAnswer>,
    /// Model calls this planning made (cache hits make none).
    pub calls: usize,
    /// Warnings from the checks (serialised siblings, merged decisions, …).
    pub diagnostics: Vec<Diagnostic>,
}

/// What planning remembers between runs, by request fingerprint: planner answers, and the
/// coordinator's merges. Persisting it is the caller's business (it is plain data).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Cache {
    pub answers: HashMap<String, PlannerAnswer>,
    #[serde(default)]
    pub merges: HashMap<String, PlannedDecision>,
}

impl Cache {
    pub fn new() -> Cache {
        Cache::default()
    }
}

/// Plans `tree` with `field_guide` given to every planner, reusing `cache` and adding to it.
pub async fn plan_tree(
    client: &Client,
    tree: &IntentTree,
    limits: Limits,
    field_guide: &str,
    cache: &mut Cache,
) -> Result<PlannedTree, PlanError> {
    let mut merged: BTreeMap<String, PlannedDecision> = BTreeMap::new();
    let mut calls = 0;
    let mut warnings = Vec::new();
    for _ in 0..=MAX_MERGES {
        let walk = Walk {
            client,
            tree,
            limits,
            field_guide,
            merged: &merged,
        };
        match walk.run(cache).await? {
            Ok(mut planned) => {
                planned.calls += calls;
                planned.diagnostics.extend(warnings);
                return Ok(planned);
            }
            Err((conflicts, made)) => {
                calls += made;
                for conflict in conflicts {
                    let req = coordinator::request(&conflict, limits.max_tokens);
                    let key = specc_llm::fingerprint(&req);
                    let decision = match cache.merges.get(&key) {
                        Some(d) => d.clone(),
                        None => {
                            let (d, made) = coordinator::merge(client, &conflict, req).await?;
                            calls += made;
                            cache.merges.insert(key, d.clone());
                            d
                        }
                    };
                    warnings.push(coordinator::merged_warning(&conflict, &decision));
                    merged.insert(decision.id.clone(), decision);
                }
            }
        }
    }
    Err(PlanError::Invalid {
        task: String::new(),
        problems: vec![format!(
            "the planners kept contradicting one another: {MAX_MERGES} merges did not settle the plan"
        )],
    })
}

/// One walk over the tree, with the merges so far.
struct Walk<'a> {
    client: &'a Client,
    tree: &'a IntentTree,
    limits: Limits,
    field_guide: &'a str,
    /// Merged decisions: they replace every copy of their id.
    merged: &'a BTreeMap<String, PlannedDecision>,
}

/// A finished plan, or the conflicts the walk stopped at and the calls it made.
type WalkOutcome = Result<PlannedTree, (Vec<Conflict>, usize)>;

impl Walk<'_> {
    async fn run(&self, cache: &mut Cache) -> Result<WalkOutcome, PlanError> {
        let tree = self.tree;
        let spec_decisions: Vec<(String, String)> = tree
            .nodes()
            .flat_map(|n| n.decisions.iter())
            .filter_map(|d| Some((d.id.clone()?, d.text.clone())))
            .collect();
        let by_id: HashMap<&str, &IntentNode> = tree.nodes().map(|n| (n.id.as_str(), n)).collect();
        let mut out = PlannedTree::default();
        let mut owned: BTreeMap<String, Owned> = BTreeMap::new();
        // (task id, intent node, depth, decisions above)
        let mut stack: Vec<(String, &IntentNode, usize, Vec<PlannedDecision>)> =
            vec![(String::new(), &tree.root, 0, Vec::new())];
        while let Some((task, node, depth, above)) = stack.pop() {
            let ctx = Context {
                ancestors: above.clone(),
                spec_decisions: spec_decisions.clone(),
                owned_elsewhere: owned.keys().cloned().collect(),
                field_guide: self.field_guide.to_owned(),
            };
            let request = planner::request(node, &ctx, self.limits.max_tokens);
            let key = specc_llm::fingerprint(&request);
            let mut answer = match cache.answers.get(&key) {
                Some(a) => a.clone(),
                None => {
                    let owners: HashMap<String, String> = owned
                        .iter()
                        .map(|(id, o)| (id.clone(), o.owner.clone()))
                        .collect();
                    let limits = self.limits;
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
                    let asked = planner::ask(self.client, &task, request, check).await?;
                    out.calls += asked.calls;
                    cache.answers.insert(key, asked.answer.clone());
                    asked.answer
                }
            };
            for d in &mut answer.decisions {
                if let Some(m) = self.merged.get(&d.id) {
                    d.clone_from(m);
                }
            }
            let conflicts = plan::claim_decisions(&task, &answer, &mut owned);
            if !conflicts.is_empty() {
                return Ok(Err((conflicts, out.calls)));
            }
            out.diagnostics
                .extend(plan::serialise_overlapping_writes(&mut answer));
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
        Ok(Ok(out))
    }
}
