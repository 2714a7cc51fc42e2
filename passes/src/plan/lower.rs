//! Lowering planner answers to the Task IR, and writing their decisions as design documents
//! in the format `specc check` reads.
//! design: passes.plan-lowering

use std::collections::BTreeMap;

use specc_ir::plan::{ChildKind, PlannedDecision, PlannerAnswer, TaskNode};

/// What lowering needs besides the answers: the models and budgets by role.
#[derive(Clone, Debug)]
pub struct LowerOptions {
    pub planner_model: String,
    pub worker_model: String,
    pub planner_budget: u32,
    pub worker_budget: u32,
}

/// Lowers the answers of a planned tree (task id → the answer its planner gave; the root is
/// `""`) to tasks in depth-first order. `spec_decisions` are the ids every task must read.
pub fn lower(
    answers: &BTreeMap<String, PlannerAnswer>,
    spec_decisions: &[String],
    o: &LowerOptions,
) -> Vec<TaskNode> {
    // (the task's place: its index among its siblings, from the root down; the task)
    let mut out: Vec<(Vec<usize>, TaskNode)> = Vec::new();
    // (task id, its place, decisions its ancestors made)
    let mut stack: Vec<(String, Vec<usize>, Vec<String>)> =
        vec![(String::new(), Vec::new(), spec_decisions.to_vec())];
    while let Some((id, place, inherited)) = stack.pop() {
        let Some(answer) = answers.get(&id) else {
            continue;
        };
        let mut visible = inherited.clone();
        for d in &answer.decisions {
            // A repetition of an owned decision is read once.
            if !visible.contains(&d.id) {
                visible.push(d.id.clone());
            }
        }
        let child_id = |key: &str| {
            if id.is_empty() {
                key.to_owned()
            } else {
                format!("{id}/{key}")
            }
        };
        for (i, c) in answer.children.iter().enumerate() {
            let task_id = child_id(&c.key);
            let mut child_place = place.clone();
            child_place.push(i);
            // A task sees the decisions of the siblings it depends on, and so does every
            // task below a plan child that does (its planner saw them in its request).
            let mut reads = visible.clone();
            for d in super::sibling_decisions(answers, &id, &c.depends_on) {
                if !reads.contains(&d.id) {
                    reads.push(d.id.clone());
                }
            }
            if c.kind == ChildKind::Plan {
                stack.push((task_id.clone(), child_place.clone(), reads.clone()));
            }
            let (role, model, budget) = match c.kind {
                ChildKind::Plan => ("planner", &o.planner_model, o.planner_budget),
                ChildKind::Work => ("worker", &o.worker_model, o.worker_budget),
            };
            let mut task = TaskNode {
                id: task_id,
                parent: Some(id.clone()),
                kind: c.kind,
                role: role.to_owned(),
                model: model.clone(),
                title: c.title.clone(),
                instructions: c.instructions.clone(),
                decisions_to_read: reads,
                write_scope: c.write_scope.clone(),
                read_scope: c.read_scope.clone(),
                acceptance: c.acceptance.clone(),
                dependencies: c.depends_on.iter().map(|d| child_id(d)).collect(),
                covers_requirements: c.covers_requirements.clone(),
                covers_nodes: c.covers_nodes.clone(),
                budget,
                fingerprint: String::new(),
            };
            task.fingerprint = fingerprint(&task);
            out.push((child_place, task));
        }
    }
    // Depth-first order, siblings in the planner's order.
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, t)| t).collect()
}

fn fingerprint(t: &TaskNode) -> String {
    let mut h = blake3::Hasher::new();
    for s in [&t.role, &t.model, &t.title, &t.instructions] {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    }
    for list in [
        &t.decisions_to_read,
        &t.write_scope,
        &t.read_scope,
        &t.acceptance,
        &t.dependencies,
        &t.covers_requirements,
    ] {
        h.update(&(list.len() as u64).to_le_bytes());
        for s in list {
            h.update(&(s.len() as u64).to_le_bytes());
            h.update(s.as_bytes());
        }
    }
    h.update(&t.budget.to_le_bytes());
    h.finalize().to_hex()[..16].to_owned()
}

/// The design documents for `decisions`, one per area (the id's first part, `storage` for
/// `storage.page-size`): file name → Markdown in the format `specc check` reads.
pub fn design_docs(decisions: &[PlannedDecision]) -> BTreeMap<String, String> {
    let mut by_area: BTreeMap<String, Vec<&PlannedDecision>> = BTreeMap::new();
    let mut seen = std::collections::HashSet::new();
    // One entry per id: a repetition (the same decision, read again below its owner) is not
    // a second record.
    for d in decisions.iter().filter(|d| seen.insert(d.id.as_str())) {
        // The area names a file: an id the checks would refuse never names one.
        let area =
            d.id.split('.')
                .next()
                .filter(|a| super::validate::is_valid_key(a))
                .unwrap_or("general")
                .to_owned();
        by_area.entry(area).or_default().push(d);
    }
    by_area
        .into_iter()
        .map(|(area, ds)| {
            let mut doc =
                format!("# {area}\n\nDecisions made while planning, by specc's planner.\n");
            for d in ds {
                let title =
                    d.id.rsplit('.')
                        .next()
                        .unwrap_or(&d.id)
                        .replace(['-', '_'], " ");
                doc.push_str(&format!(
                    "\n## {title} {{#{}}}\nDecision: {}\nRationale: {}\nStatus: accepted\n",
                    d.id,
                    one_line(&d.decision),
                    one_line(&d.rationale)
                ));
            }
            (format!("{area}.md"), doc)
        })
        .collect()
}

/// Field text on one line: a blank line would end the field, a line starting with a field
/// name would start another.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
