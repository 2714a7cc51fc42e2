//! Planning a whole intent tree: the root's planner first, then every `plan` child's, each
//! on the intent node it covers, depth first. Answers are cached by the fingerprint of their
//! request with the provider and model that answer it. A request holds only what its answer
//! depends on — the task, its intent node, the decisions above it, the spec's decisions in
//! its scope and the field guide — never the rest of the tree, so an edit re-plans only the
//! tasks whose own inputs it changed. A cached answer is checked again like a fresh one
//! (ownership against today's owners), and re-asked if it fails. A task re-planned after an
//! edit amends its earlier answer (`amend`), and what it marks unchanged keeps its earlier
//! text, so its children's requests, and their cached subtrees, stay.
//!
//! Every decision id has one owner, the first task to decide it. When later answers still
//! decide an owned id differently after their repairs, the coordinator merges them, the
//! merged decision replaces every copy of that id, the planners that disagreed get it as a
//! settled decision, and the walk starts again from the root: their requests, and those of
//! every task that read an old text, have changed, so exactly those are re-planned, and
//! everything else is a cache hit.
//! design: runtime.incremental-planning
//! design: runtime.amend-planning
//! design: runtime.coordinator

use std::collections::{BTreeMap, HashMap};

use specc_ir::plan::{ChildKind, PlannedChild, PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentNode, IntentTree};
use specc_llm::Client;
use specc_passes::plan::{self, Commands, Conflict, Owned};

use crate::amend::{self, Amended};
use crate::ask::{self, Asked, ForcedCall, MAX_REPAIRS};
use crate::coordinator;
use crate::error::PlanError;
use crate::limits::Limits;
use crate::plan_cache::Cache;
use crate::plan_cache::{as_earlier, cache_key, clashes};
use crate::planner::{self, Context};
use crate::spec_text;

/// Merges one planning may make before it gives up.
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

/// A decision the coordinator settled.
struct Settled {
    decision: PlannedDecision,
    /// The normalised texts it replaced: a copy of one of them is replaced silently.
    replaced: Vec<String>,
    /// The tasks that decided it: they are asked again with it as settled.
    parties: Vec<String>,
}

/// Plans `tree` with `field_guide` given to every planner, reusing `cache` and adding to it.
pub async fn plan_tree(
    client: &Client,
    tree: &IntentTree,
    limits: Limits,
    field_guide: &str,
    commands: &Commands,
    cache: &mut Cache,
) -> Result<PlannedTree, PlanError> {
    let mut settled: BTreeMap<String, Settled> = BTreeMap::new();
    let mut calls = 0;
    let mut warnings = Vec::new();
    let mut merges: Vec<String> = Vec::new();
    loop {
        let walk = Walk {
            client,
            tree,
            limits,
            field_guide,
            commands,
            settled: &settled,
            spent: calls,
        };
        let (conflicts, contested, made) = match walk.run(cache).await? {
            Walked::Planned(mut planned) => {
                planned.calls += calls;
                planned.diagnostics.extend(warnings);
                return Ok(planned);
            }
            Walked::Stopped {
                conflicts,
                contested,
                calls: made,
            } => (conflicts, contested, made),
        };
        calls += made;
        for conflict in conflicts {
            if merges.len() == MAX_MERGES {
                merges.dedup();
                return Err(PlanError::Unsettled(merges));
            }
            merges.push(conflict.id.clone());
            let req = coordinator::request(&conflict, limits.max_tokens);
            let key = cache_key(client, req.clone());
            let decision = match cache.merges.get(&key) {
                Some(d) => d.clone(),
                None => {
                    if calls + MAX_REPAIRS + 1 > limits.planner_calls {
                        return Err(PlanError::CallLimit(limits.planner_calls));
                    }
                    let (d, made) = coordinator::merge(client, &conflict, req).await?;
                    calls += made;
                    cache.merges.insert(key, d.clone());
                    d
                }
            };
            warnings.push(if contested.contains(&conflict.id) {
                coordinator::contested_warning(&conflict, &decision)
            } else {
                coordinator::merged_warning(&conflict, &decision)
            });
            let entry = settled.entry(conflict.id.clone()).or_insert(Settled {
                decision: decision.clone(),
                replaced: Vec::new(),
                parties: Vec::new(),
            });
            entry.decision = decision;
            for (i, side) in conflict.sides.iter().enumerate() {
                entry
                    .replaced
                    .push(plan::decision_key(&side.decision.decision));
                let earlier_merge = i == 0 && conflict.settled_first;
                if !earlier_merge && !entry.parties.contains(&side.owner) {
                    entry.parties.push(side.owner.clone());
                }
            }
        }
    }
}

/// One walk over the tree, with the decisions settled so far.
struct Walk<'a> {
    client: &'a Client,
    tree: &'a IntentTree,
    limits: Limits,
    field_guide: &'a str,
    /// What an acceptance entry may start with (the sandbox's commands).
    commands: &'a Commands,
    settled: &'a BTreeMap<String, Settled>,
    /// Calls earlier walks made: with this walk's, bounded by `limits.planner_calls`.
    spent: usize,
}

/// How a walk ended: a finished plan, or the conflicts it stopped at (for the coordinator)
/// and the calls it made.
enum Walked {
    Planned(PlannedTree),
    Stopped {
        conflicts: Vec<Conflict>,
        /// The ids of those conflicts that are contests of an ancestor's decision.
        contested: Vec<String>,
        calls: usize,
    },
}

/// A task waiting to be planned.
struct Pending<'t> {
    task: String,
    /// The intent node it plans.
    node: &'t IntentNode,
    depth: usize,
    /// The decisions made above it.
    above: Vec<PlannedDecision>,
    /// What its parent asked of it.
    assignment: Option<PlannedChild>,
}

impl Walk<'_> {
    /// Plans the tree depth first from the root, each task from the cache or the planner,
    /// until it is planned or a decision conflict stops it.
    async fn run(&self, cache: &mut Cache) -> Result<Walked, PlanError> {
        let tree = self.tree;
        let spec_decisions = scoped_spec_decisions(&tree.root);
        let by_id: HashMap<&str, &IntentNode> = tree.nodes().map(|n| (n.id.as_str(), n)).collect();
        let mut out = PlannedTree::default();
        let mut owned: BTreeMap<String, Owned> = BTreeMap::new();
        let mut stack = vec![Pending {
            task: String::new(),
            node: &tree.root,
            depth: 0,
            above: Vec::new(),
            assignment: None,
        }];
        while let Some(p) = stack.pop() {
            // What the coordinator settled for this task: given to it, not owned elsewhere.
            let settled: Vec<PlannedDecision> = self
                .settled
                .values()
                .filter(|s| s.parties.contains(&p.task))
                .map(|s| s.decision.clone())
                .collect();
            let ctx = Context {
                task: p.task.clone(),
                depth: p.depth,
                assignment: p.assignment.clone(),
                limits: (self.limits.max_depth, self.limits.max_width),
                ancestors: p.above.clone(),
                settled: settled.clone(),
                siblings: sibling_decisions(&p, &out.answers),
                spec_decisions: spec_decisions
                    .get(p.node.id.as_str())
                    .cloned()
                    .unwrap_or_default(),
                field_guide: self.field_guide.to_owned(),
                spec_chars: self.limits.planner_spec_tokens * spec_text::CHARS_PER_TOKEN,
                line_budget: self.limits.line_budget,
            };
            let inputs = planner::inputs(tree, p.node, &ctx);
            let mut answer = self
                .answer(cache, &p, &inputs, &owned, &mut out.calls)
                .await?;
            let mut conflicts = self.claim(&p.task, &mut answer, settled, &mut owned);
            let contests = self.contests(&p.task, &answer, &owned);
            conflicts.extend(contests.iter().cloned());
            if !conflicts.is_empty() {
                return Ok(Walked::Stopped {
                    conflicts,
                    contested: contests.into_iter().map(|c| c.id).collect(),
                    calls: out.calls,
                });
            }
            out.diagnostics
                .extend(plan::serialise_overlapping_writes(&mut answer));
            self.push_children(&p, &answer, &by_id, &mut stack);
            out.answers.insert(p.task, answer);
        }
        Ok(Walked::Planned(out))
    }

    /// What is wrong with answer `a` of task `p`, with today's owners `owned`.
    fn check(
        &self,
        p: &Pending<'_>,
        owned: &BTreeMap<String, Owned>,
        a: &PlannerAnswer,
    ) -> Vec<Diagnostic> {
        let (task, node, depth) = (&p.task, p.node, p.depth);
        let assigned = p
            .assignment
            .as_ref()
            .map_or(&[][..], |a| &a.covers_requirements[..]);
        // A text a merge replaced counts as the merged one: no repair for it.
        let mut seen = a.clone();
        self.replace_settled_texts(&mut seen);
        let mut d = plan::check_ownership(task, &seen, owned);
        d.extend(plan::check_spec_decisions(a, self.tree));
        d.extend(plan::check_keys(task, a));
        d.extend(plan::check_names_and_scopes(task, a));
        d.extend(plan::check_node_coverage(node, a));
        d.extend(plan::check_known_ids(node, assigned, a));
        d.extend(plan::check_acceptance(task, a, self.commands));
        let mut open = a.clone();
        open.contested.retain(|c| !self.ruled(task, &c.id));
        d.extend(plan::check_contests(task, &open, &p.above));
        d.extend(plan::check_cycles(task, a));
        let limits = self.limits;
        d.extend(plan::check_limits(
            task,
            depth,
            a,
            limits.max_depth,
            limits.max_width,
        ));
        d
    }

    /// Asks the planner to amend task `task`'s earlier answer `e`. What the planner marked
    /// unchanged keeps its earlier text, unless that text fails the checks: then its answer
    /// is taken as written, so a repair can change it.
    async fn amend(
        &self,
        task: &str,
        inputs: &serde_json::Value,
        e: &(PlannerAnswer, serde_json::Value),
        check: &(dyn Fn(&PlannerAnswer) -> Vec<Diagnostic> + Sync),
        reader: Option<ask::Reader<'_>>,
    ) -> Result<Asked<PlannerAnswer>, PlanError> {
        let req = amend::request(inputs, &as_earlier(e), self.limits.max_tokens);
        let resolve = |am: &Amended| {
            let kept = am.resolve(&e.0);
            let fails = check(&kept)
                .iter()
                .any(|d| d.is_error() && !planner::survives_repairs(d));
            if fails { am.as_written() } else { kept }
        };
        let checked = |am: &Amended| check(&resolve(am));
        let mut call = ForcedCall::new(specc_llm::Role::Planner, task, req, planner::TOOL)
            .check(&checked)
            .tolerate(&planner::survives_repairs);
        if let Some(reader) = reader {
            call = call.reading(spec_text::read_spec_tool(), reader);
        }
        let a = call.ask(self.client).await?;
        Ok(Asked {
            answer: resolve(&a.answer),
            calls: a.calls,
            unresolved: a.unresolved,
        })
    }

    /// Task `p`'s answer: the cached one if it passes today's checks (its ownership clashes
    /// checked against today's owners), else asked — amending an earlier answer of the task
    /// when there is one — within the plan's call limit. `calls` counts the calls made.
    async fn answer(
        &self,
        cache: &mut Cache,
        p: &Pending<'_>,
        inputs: &serde_json::Value,
        owned: &BTreeMap<String, Owned>,
        calls: &mut usize,
    ) -> Result<PlannerAnswer, PlanError> {
        let task = &p.task;
        let request = planner::request_for(inputs, self.limits.max_tokens);
        let key = cache_key(self.client, request.clone());
        let limits = self.limits;
        let check = |a: &PlannerAnswer| self.check(p, owned, a);
        let clashing = |a: &PlannerAnswer| {
            let mut seen = a.clone();
            self.replace_settled_texts(&mut seen);
            clashes(&seen, owned)
        };
        // A cached answer passes the checks a fresh one would, or it is asked again. Its
        // ownership clashes are checked against today's owners: the ones it was accepted
        // with go to the coordinator as before; a new one asks again.
        let cached = cache.answers.get(&key).filter(|a| {
            let contested = cache.contested.get(&key).map_or(&[][..], |c| &c[..]);
            check(a)
                .iter()
                .all(|d| !d.is_error() || planner::survives_repairs(d))
                && clashing(a).iter().all(|id| contested.contains(id))
        });
        if let Some(a) = cached {
            let a = a.clone();
            cache.remember(task, &key, inputs);
            return Ok(a);
        }
        // The call and its repairs must fit under the plan's limit.
        if self.spent + *calls + MAX_REPAIRS + 1 > limits.planner_calls {
            return Err(PlanError::CallLimit(limits.planner_calls));
        }
        // An earlier answer of this task is amended rather than asked afresh.
        // A planner shown part of its subtree, or text naming sections elsewhere, may read
        // them first (design: spec.node-text).
        let read = |call: &specc_llm::ToolCall| spec_text::read_spec(self.tree, call);
        let reader = planner::needs_reading(inputs).then_some(&read as ask::Reader<'_>);
        let asked = match cache.earlier(task, inputs) {
            None => planner::ask(self.client, task, request, &check, reader).await?,
            Some(e) => self.amend(task, inputs, &e, &check, reader).await?,
        };
        *calls += asked.calls;
        let contested = clashing(&asked.answer);
        if contested.is_empty() {
            cache.contested.remove(&key);
        } else {
            cache.contested.insert(key.clone(), contested);
        }
        cache.answers.insert(key.clone(), asked.answer.clone());
        cache.remember(task, &key, inputs);
        Ok(asked.answer)
    }

    /// Applies the settlements to `answer` (a party restates what was settled for it, added
    /// if its planner left it out) and claims its decisions in `owned`: the conflicts found,
    /// one per id.
    fn claim(
        &self,
        task: &str,
        answer: &mut PlannerAnswer,
        settled: Vec<PlannedDecision>,
        owned: &mut BTreeMap<String, Owned>,
    ) -> Vec<Conflict> {
        let mut conflicts = self.apply_settled(task, answer);
        for s in settled {
            if !answer.decisions.iter().any(|d| d.id == s.id) {
                answer.decisions.push(s);
            }
        }
        for c in plan::claim_decisions(task, answer, owned) {
            // A new text for a settled id is already a conflict with the settlement.
            if !conflicts.iter().any(|known| known.id == c.id) {
                conflicts.push(c);
            }
        }
        conflicts
    }

    /// `answer`'s contests of ancestors' decisions (made at `task`, checked), each a conflict
    /// between the owner's decision and the contested text with its evidence as rationale
    /// (design: runtime.contested-decisions). A contest of a decision already settled with
    /// this task as a party is not brought again: the coordinator has ruled.
    fn contests(
        &self,
        task: &str,
        answer: &PlannerAnswer,
        owned: &BTreeMap<String, Owned>,
    ) -> Vec<Conflict> {
        answer
            .contested
            .iter()
            .filter(|c| !self.ruled(task, &c.id))
            .filter_map(|c| {
                let owner = owned.get(&c.id)?;
                let contester = Owned {
                    owner: task.to_owned(),
                    decision: PlannedDecision {
                        id: c.id.clone(),
                        decision: c.decision.clone(),
                        rationale: format!("contested with evidence: {}", c.evidence.trim()),
                    },
                };
                Some(Conflict {
                    id: c.id.clone(),
                    settled_first: false,
                    sides: vec![owner.clone(), contester],
                })
            })
            .collect()
    }

    /// Whether the coordinator settled `id` with `task` as a party: its contest is ruled on.
    fn ruled(&self, task: &str, id: &str) -> bool {
        self.settled
            .get(id)
            .is_some_and(|s| s.parties.iter().any(|p| p == task))
    }

    /// Queues `answer`'s plan children, each on the intent node it covers (its parent's if
    /// it names none), with the decisions made above them. The checks refuse plan children
    /// at the depth limit; this keeps a walk finite whatever an answer says.
    fn push_children<'t>(
        &self,
        p: &Pending<'t>,
        answer: &PlannerAnswer,
        by_id: &HashMap<&str, &'t IntentNode>,
        stack: &mut Vec<Pending<'t>>,
    ) {
        if p.depth + 1 >= self.limits.max_depth {
            return;
        }
        let mut below = p.above.clone();
        below.extend(answer.decisions.iter().cloned());
        for c in answer.children.iter().rev() {
            if c.kind != ChildKind::Plan {
                continue;
            }
            let task = if p.task.is_empty() {
                c.key.clone()
            } else {
                format!("{}/{}", p.task, c.key)
            };
            let node = c
                .covers_nodes
                .first()
                .and_then(|id| by_id.get(id.as_str()).copied())
                .unwrap_or(p.node);
            stack.push(Pending {
                task,
                node,
                depth: p.depth + 1,
                above: below.clone(),
                assignment: Some(c.clone()),
            });
        }
    }

    /// Replaces each decision of a settled id that holds a text the settlement replaced.
    fn replace_settled_texts(&self, answer: &mut PlannerAnswer) {
        for d in &mut answer.decisions {
            if let Some(s) = self.settled.get(&d.id)
                && s.replaced.contains(&plan::decision_key(&d.decision))
            {
                d.clone_from(&s.decision);
            }
        }
    }

    /// Replaces each decision of a settled id with the settled one. A text the settlement
    /// did not see is a new disagreement: a conflict with the settled decision.
    fn apply_settled(&self, task: &str, answer: &mut PlannerAnswer) -> Vec<Conflict> {
        let mut conflicts: Vec<Conflict> = Vec::new();
        for d in &mut answer.decisions {
            let Some(s) = self.settled.get(&d.id) else {
                continue;
            };
            let text = plan::decision_key(&d.decision);
            if text == plan::decision_key(&s.decision.decision) || s.replaced.contains(&text) {
                d.clone_from(&s.decision);
                continue;
            }
            let side = Owned {
                owner: task.to_owned(),
                decision: d.clone(),
            };
            if let Some(c) = conflicts.iter_mut().find(|c| c.id == d.id) {
                // Every new text of the id goes to the same merge.
                if !c
                    .sides
                    .iter()
                    .any(|s| plan::decision_key(&s.decision.decision) == text)
                {
                    c.sides.push(side);
                }
                continue;
            }
            conflicts.push(Conflict {
                id: d.id.clone(),
                settled_first: true,
                sides: vec![
                    Owned {
                        owner: s.parties.first().cloned().unwrap_or_default(),
                        decision: s.decision.clone(),
                    },
                    side,
                ],
            });
        }
        conflicts
    }
}

/// The spec's decisions each intent node's planner is given, by node id: those of its
/// ancestors and of its own subtree, in document order. A decision elsewhere binds it
/// through the checks (E0302 quotes the spec's text), not through every request.
fn scoped_spec_decisions(root: &IntentNode) -> HashMap<&str, Vec<(String, String)>> {
    fn own(n: &IntentNode) -> impl Iterator<Item = (String, String)> + '_ {
        n.decisions
            .iter()
            .filter_map(|d| Some((d.id.clone()?, d.text.clone())))
    }
    /// Fills `out` for `n`'s subtree; returns the decisions of that subtree.
    fn walk<'t>(
        n: &'t IntentNode,
        above: &[(String, String)],
        out: &mut HashMap<&'t str, Vec<(String, String)>>,
    ) -> Vec<(String, String)> {
        let mine: Vec<(String, String)> = own(n).collect();
        let mut path = above.to_vec();
        path.extend(mine.iter().cloned());
        let mut subtree = mine;
        for c in &n.children {
            subtree.extend(walk(c, &path, out));
        }
        let mut scoped = above.to_vec();
        scoped.extend(subtree.iter().cloned());
        out.insert(n.id.as_str(), scoped);
        subtree
    }
    let mut out = HashMap::new();
    walk(root, &[], &mut out);
    out
}

/// The decisions of the siblings `p` depends on, as planned so far. Planned depth first in
/// order, a sibling a task depends on (an earlier one) has its whole subtree planned.
fn sibling_decisions(
    p: &Pending<'_>,
    answers: &BTreeMap<String, PlannerAnswer>,
) -> Vec<PlannedDecision> {
    let Some(assignment) = &p.assignment else {
        return Vec::new();
    };
    let parent = p.task.rsplit_once('/').map_or("", |(parent, _)| parent);
    specc_passes::plan::sibling_decisions(answers, parent, &assignment.depends_on)
        .into_iter()
        .cloned()
        .collect()
}
