//! What a planner answers for one intent node: the decisions it makes and the children it
//! splits the node into. Planner answers are JSON in this shape (the planner protocol
//! validates them against a schema derived from it).
//! design: ir.pure-data

use serde::{Deserialize, Serialize};

/// A child is planned further or carried out by a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChildKind {
    Plan,
    Work,
}

/// A decision the planner makes (it becomes a design-docs entry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedDecision {
    pub id: String,
    pub decision: String,
    pub rationale: String,
}

/// One child of a planned node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedChild {
    /// Unique among its siblings; dependencies name siblings by key.
    pub key: String,
    pub kind: ChildKind,
    pub title: String,
    /// Intent node ids this child covers.
    #[serde(default)]
    pub covers_nodes: Vec<String>,
    /// Requirement ids this child covers.
    #[serde(default)]
    pub covers_requirements: Vec<String>,
    pub instructions: String,
    /// Paths or globs the child may write.
    #[serde(default)]
    pub write_scope: Vec<String>,
    /// Paths or globs the child reads.
    #[serde(default)]
    pub read_scope: Vec<String>,
    #[serde(default)]
    pub acceptance: Vec<String>,
    /// Keys of siblings that must finish first.
    #[serde(default)]
    pub depends_on: Vec<String>,
}

/// A planner's answer for one node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerAnswer {
    #[serde(default)]
    pub decisions: Vec<PlannedDecision>,
    pub children: Vec<PlannedChild>,
    /// Ancestors' decisions this planner finds wrong, for the coordinator to settle.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contested: Vec<Contest>,
    /// Requirements of this node's part that need no code, each with why: waived from
    /// coverage and from the `req:` references a landing wants (design: spec.no-code).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub no_code: Vec<Waiver>,
}

/// A requirement that needs no code: a definition, a rule about the process or releases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiver {
    /// The requirement's id.
    pub id: String,
    /// Why no code carries it out (one line).
    pub reason: String,
}

/// A decision contested with evidence: by a planner (an ancestor's), or by a worker (one it
/// was given that the spec contradicts). The coordinator settles it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contest {
    /// The decision's id.
    pub id: String,
    /// The text it should have.
    pub decision: String,
    /// Why: the spec's words (quoted) or a test against the spec that the decision
    /// contradicts.
    pub evidence: String,
}

/// One node of the Task IR: what the runtime schedules.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNode {
    /// `parent/key`, from the root task `""`.
    pub id: String,
    pub parent: Option<String>,
    pub kind: ChildKind,
    /// `planner` for plan nodes, `worker` for work leaves.
    pub role: String,
    pub model: String,
    pub title: String,
    pub instructions: String,
    /// Ids of the decisions this task must read: its ancestors' and the spec's.
    pub decisions_to_read: Vec<String>,
    pub write_scope: Vec<String>,
    pub read_scope: Vec<String>,
    pub acceptance: Vec<String>,
    /// Task ids (siblings) that must finish first.
    pub dependencies: Vec<String>,
    pub covers_requirements: Vec<String>,
    /// The sections its planner said it works on (`covers_nodes`): a work leaf reads their
    /// text with that of the sections holding its requirements (design: spec.node-text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covers_nodes: Vec<String>,
    /// Output tokens this task may spend.
    pub budget: u32,
    /// blake3 over everything above but the id's place in the tree, hex.
    pub fingerprint: String,
}
