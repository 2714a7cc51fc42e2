//! What the benches and tests that run the scheduler on synthetic plans share: the planner
//! task over the leaves, and a leaf's work order.

use specc_ir::plan::{ChildKind, TaskNode};
use specc_runtime::WorkOrder;

/// The plan task `t` every synthetic leaf hangs under.
pub fn root() -> TaskNode {
    TaskNode {
        id: "t".into(),
        parent: Some(String::new()),
        kind: ChildKind::Plan,
        role: "planner".into(),
        model: "p".into(),
        title: "files".into(),
        instructions: String::new(),
        decisions_to_read: Vec::new(),
        write_scope: Vec::new(),
        read_scope: Vec::new(),
        acceptance: Vec::new(),
        dependencies: Vec::new(),
        covers_requirements: Vec::new(),
        covers_nodes: Vec::new(),
        budget: 0,
        fingerprint: "t".into(),
    }
}

/// A leaf's work order: no decisions, requirements or checks; fingerprinted.
pub fn order(task: &TaskNode) -> WorkOrder {
    let mut o = WorkOrder {
        parent: None,
        spec: Vec::new(),
        other_decisions: Vec::new(),
        origin: None,
        task: task.clone(),
        fingerprint: String::new(),
        decisions: Vec::new(),
        requirements: Vec::new(),
        checks: Vec::new(),
    };
    o.fingerprint = specc_runtime::fingerprint(&o);
    o
}
