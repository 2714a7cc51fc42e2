//! What the benches and tests that run the scheduler on synthetic plans share: leaf `i`'s
//! file and key, a planner's answer for the leaf, the planner task over the leaves, a
//! leaf's work order, and how many leaves' files an export holds.

use specc_ir::plan::{ChildKind, TaskNode};
use specc_runtime::WorkOrder;

/// Leaf `i`'s file: a hundred to a directory, as a codebase spreads its files.
pub fn file(i: usize) -> String {
    format!("f/g{:03}/t-{i:05}.txt", i / 100)
}

/// Leaf `i`'s key in a planner's answer.
pub fn key(i: usize) -> String {
    format!("t{i:05}")
}

/// A planner's answer for leaf `i`: write its file, covering requirement `R-{i+1}`, checked
/// by `test -f`, after the leaves `depends_on` names (none: no `depends_on` at all).
pub fn file_leaf(i: usize, depends_on: &[String]) -> serde_json::Value {
    let mut leaf = serde_json::json!({
        "key": key(i),
        "kind": "work",
        "title": format!("write file {i}"),
        "covers_requirements": [format!("R-{}", i + 1)],
        "instructions": format!("Write {}.", file(i)),
        "write_scope": [file(i)],
        "acceptance": [format!("test -f {}", file(i))],
    });
    if !depends_on.is_empty() {
        leaf["depends_on"] = serde_json::json!(depends_on);
    }
    leaf
}

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

/// How many of the leaves' files (`f/…`) the build in `dir` exported to `dir/out`.
pub fn exported(dir: &std::path::Path) -> usize {
    let o = std::process::Command::new("git")
        .args(["ls-tree", "-r", "--name-only", "HEAD", "f"])
        .current_dir(dir.join("out"))
        .output()
        .expect("git");
    String::from_utf8_lossy(&o.stdout).lines().count()
}
