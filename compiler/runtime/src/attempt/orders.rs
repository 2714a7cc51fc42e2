//! Work orders: each work leaf of the Task IR with the texts it needs — the decisions it
//! reads (the spec's and the planners'), the requirements it covers, and its checks (its
//! own acceptance commands, then the spec's test blocks of the sections that hold the
//! requirements it covers).
//! design: runtime.worker-protocol

use std::collections::HashMap;

use specc_ir::plan::{ChildKind, PlannedDecision, TaskNode};
use specc_ir::{IntentNode, IntentTree};

use specc_sandbox::Runners;

use super::acceptance::Check;
use super::context::{DecisionText, ParentBrief, RequirementText, SiblingBrief, WorkOrder};
use super::reading;

/// The fingerprint of an order: its task's, and every text it carries, so an edit of a
/// decision it reads, a requirement it covers or a check it must pass changes it.
pub fn fingerprint(o: &WorkOrder) -> String {
    let mut h = blake3::Hasher::new();
    let mut field = |s: &str| {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    field(&o.task.fingerprint);
    for d in &o.decisions {
        field(&d.id);
        field(&d.text);
    }
    for r in &o.requirements {
        field(&r.id);
        field(&r.level);
        field(&r.text);
    }
    for s in &o.spec {
        field(&s.id);
        field(&s.text);
    }
    for c in &o.checks {
        field(&c.name);
        field(&c.script);
    }
    h.finalize().to_hex()[..16].to_owned()
}

/// A spec test block specc cannot run yet (its runner), left out of a task's checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unrunnable {
    pub task: String,
    pub node: String,
    pub runner: String,
}

/// The work orders of `tasks`' leaves, and the spec checks left out.
pub fn work_orders(
    tree: &IntentTree,
    tasks: &[TaskNode],
    planned: &[PlannedDecision],
    runners: &Runners,
) -> (Vec<WorkOrder>, Vec<Unrunnable>) {
    let index = Index::of(tree, tasks, planned);
    let mut unrunnable = Vec::new();
    let orders = leaves(tasks)
        .map(|t| order_of(&index, t, runners, &mut unrunnable))
        .collect();
    (orders, unrunnable)
}

/// What every leaf's order is made from, looked up by id.
struct Index<'a> {
    tree: &'a IntentTree,
    /// `(text, rationale, spec)` by decision id.
    texts: HashMap<&'a str, (&'a str, &'a str, bool)>,
    /// The node holding each requirement.
    owner: HashMap<&'a str, &'a IntentNode>,
    tasks: HashMap<&'a str, &'a TaskNode>,
    briefs: HashMap<String, ParentBrief>,
}

impl<'a> Index<'a> {
    fn of(tree: &'a IntentTree, tasks: &'a [TaskNode], planned: &'a [PlannedDecision]) -> Self {
        let mut texts: HashMap<&str, (&str, &str, bool)> = HashMap::new();
        for d in planned {
            texts.entry(d.id.as_str()).or_insert((
                d.decision.as_str(),
                d.rationale.as_str(),
                false,
            ));
        }
        let mut owner: HashMap<&str, &IntentNode> = HashMap::new();
        for n in tree.nodes() {
            for d in &n.decisions {
                if let Some(id) = &d.id {
                    // The spec's own text binds over any planner's.
                    texts.insert(id.as_str(), (d.text.as_str(), "", true));
                }
            }
            for r in &n.requirements {
                owner.insert(r.id.as_str(), n);
            }
        }
        Index {
            tree,
            texts,
            owner,
            tasks: tasks.iter().map(|t| (t.id.as_str(), t)).collect(),
            briefs: parent_briefs(tree, tasks),
        }
    }

    /// The decisions `t` reads, with their text.
    fn decisions_of(&self, t: &TaskNode) -> Vec<DecisionText> {
        t.decisions_to_read
            .iter()
            .filter_map(|id| {
                let (text, rationale, spec) = *self.texts.get(id.as_str())?;
                Some(DecisionText {
                    id: id.clone(),
                    text: text.to_owned(),
                    rationale: rationale.to_owned(),
                    spec,
                })
            })
            .collect()
    }

    /// The requirements `t` covers, with their text, and the nodes that hold them.
    fn requirements_of(&self, t: &TaskNode) -> (Vec<RequirementText>, Vec<&'a IntentNode>) {
        let mut requirements = Vec::new();
        let mut nodes: Vec<&IntentNode> = Vec::new();
        for rid in &t.covers_requirements {
            let Some(&n) = self.owner.get(rid.as_str()) else {
                continue;
            };
            if let Some(r) = n.requirements.iter().find(|r| r.id.as_str() == rid) {
                requirements.push(RequirementText {
                    id: rid.clone(),
                    level: r.level.to_string(),
                    text: r.text.clone(),
                });
            }
            if !nodes.iter().any(|m| m.id == n.id) {
                nodes.push(n);
            }
        }
        (requirements, nodes)
    }
}

/// The work order of leaf `t`; the spec checks it cannot run go into `unrunnable`.
fn order_of(
    index: &Index<'_>,
    t: &TaskNode,
    runners: &Runners,
    unrunnable: &mut Vec<Unrunnable>,
) -> WorkOrder {
    let tree = index.tree;
    let (requirements, nodes) = index.requirements_of(t);
    let mut checks: Vec<Check> = t
        .acceptance
        .iter()
        .enumerate()
        .map(|(i, a)| Check::acceptance(i + 1, a))
        .collect();
    // What the worker reads: its sections as written — those holding its requirements
    // and those its planner said it works on — and the decisions it needs in full
    // (design: spec.node-text).
    let mut read: Vec<&IntentNode> = nodes.clone();
    for id in &t.covers_nodes {
        if let Some(n) = tree.node(id).filter(|n| !read.iter().any(|m| m.id == n.id)) {
            read.push(n);
        }
    }
    let spec = reading::sections(tree, &read);
    let planner = t
        .parent
        .as_deref()
        .and_then(|p| index.tasks.get(p).copied());
    let named: Vec<&str> = requirements
        .iter()
        .map(|r| r.text.as_str())
        .chain(spec.iter().map(|s| s.text.as_str()))
        .collect();
    let (decisions, other_decisions) =
        reading::decisions(t, planner, index.decisions_of(t), &named);
    for n in nodes {
        for (i, c) in n.checks.iter().enumerate() {
            let name = format!("spec {} check {}", n.id.as_str(), i + 1);
            match Check::from_block(name, &c.runner, &c.code, runners) {
                Some(check) => checks.push(check.of_section(n.id.as_str())),
                None => unrunnable.push(Unrunnable {
                    task: t.id.clone(),
                    node: n.id.as_str().to_owned(),
                    runner: c.runner.clone(),
                }),
            }
        }
    }
    let parent = index
        .briefs
        .get(t.parent.as_deref().unwrap_or_default())
        .cloned()
        .unwrap_or_else(|| ParentBrief {
            title: tree.root.title.clone(),
            ..ParentBrief::default()
        });
    let mut order = WorkOrder {
        origin: None,
        parent: Some(parent),
        spec,
        other_decisions,
        task: t.clone(),
        fingerprint: String::new(),
        decisions,
        requirements,
        checks,
    };
    order.fingerprint = fingerprint(&order);
    order
}

/// Gives each order whose write scope reaches an adopted package (its directory, or the
/// whole repository for one at its root) the package's test command as checks named
/// `adopted <section> check <n>`, whose failures the task's base already had do not gate it
/// (`Check::baseline`, design: driver.adopt).
pub fn with_adopted_checks(
    orders: &mut [WorkOrder],
    kept: &[specc_passes::adopted::KeptChecks],
    runners: &Runners,
) {
    for o in orders.iter_mut() {
        let scope = crate::checkouts::Scope::new(&o.task.write_scope);
        let mut added = false;
        for k in kept {
            let reaches = k.dir.is_empty()
                || scope.overlaps(&crate::checkouts::Scope::new(&[format!("{}/**", k.dir)]));
            if !reaches {
                continue;
            }
            for (i, c) in k.checks.iter().enumerate() {
                let name = format!("adopted {} check {}", k.node, i + 1);
                if let Some(check) = Check::from_block(name, &c.runner, &c.code, runners) {
                    o.checks.push(Check {
                        baseline: true,
                        ..check
                    });
                    added = true;
                }
            }
        }
        if added {
            o.fingerprint = fingerprint(o);
        }
    }
}

/// Each planner task's brief for its leaves' re-plans (design: runtime.disputes): its
/// title and instructions (the root's title is the spec's) and what it planned, one shared
/// list per planner.
fn parent_briefs(tree: &IntentTree, tasks: &[TaskNode]) -> HashMap<String, ParentBrief> {
    let mut children: HashMap<&str, Vec<SiblingBrief>> = HashMap::new();
    for t in tasks {
        if let Some(p) = t.parent.as_deref() {
            children.entry(p).or_default().push(SiblingBrief {
                id: t.id.clone(),
                title: t.title.clone(),
                write_scope: t.write_scope.clone(),
            });
        }
    }
    let by_id: HashMap<&str, &TaskNode> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    children
        .into_iter()
        .map(|(id, siblings)| {
            let planner = by_id.get(id);
            let brief = ParentBrief {
                title: planner.map_or_else(|| tree.root.title.clone(), |p| p.title.clone()),
                instructions: planner.map(|p| p.instructions.clone()).unwrap_or_default(),
                id: id.to_owned(),
                siblings: siblings.into(),
            };
            (id.to_owned(), brief)
        })
        .collect()
}

/// The work leaves of `tasks`.
fn leaves(tasks: &[TaskNode]) -> impl Iterator<Item = &TaskNode> {
    tasks.iter().filter(|t| t.kind == ChildKind::Work)
}
