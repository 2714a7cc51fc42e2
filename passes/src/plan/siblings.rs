//! The decisions a task or a sub-planner sees beyond its ancestors': those of the siblings
//! it depends on, which it builds on (the CLI's planner must see the library's `library.api`
//! it calls, not restate it from memory). Bounded like the ancestors' decisions.
//! design: passes.plan-lowering

use std::collections::BTreeMap;

use specc_ir::plan::{PlannedDecision, PlannerAnswer};

/// Sibling decisions one task may see: at most this many.
pub const SIBLING_DECISIONS: usize = 32;

/// The decisions of the siblings (keys `depends_on`, children of task `parent`, `""` for
/// the root) as `answers` hold them: each sibling's own answer's first, then its subtree's
/// in id order, each id once, at most [`SIBLING_DECISIONS`]. A work sibling has no answer
/// and adds nothing.
pub fn sibling_decisions<'a>(
    answers: &'a BTreeMap<String, PlannerAnswer>,
    parent: &str,
    depends_on: &[String],
) -> Vec<&'a PlannedDecision> {
    let mut out: Vec<&PlannedDecision> = Vec::new();
    for key in depends_on {
        let sibling = if parent.is_empty() {
            key.clone()
        } else {
            format!("{parent}/{key}")
        };
        let below = format!("{sibling}/");
        let own = answers.get(&sibling).into_iter();
        let subtree = answers
            .range(below.clone()..)
            .take_while(|(task, _)| task.starts_with(&below))
            .map(|(_, a)| a);
        for d in own.chain(subtree).flat_map(|a| a.decisions.iter()) {
            if out.len() == SIBLING_DECISIONS {
                return out;
            }
            if !out.iter().any(|o| o.id == d.id) {
                out.push(d);
            }
        }
    }
    out
}
