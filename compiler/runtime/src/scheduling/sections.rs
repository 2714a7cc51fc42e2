//! A spec section's test blocks gate the section, not its first task: a leaf starts with
//! them as information while other leaves covering the section have yet to land, and with
//! them gating once every other one has landed (its base then holds their work). The last
//! leaf of a section to start waits while the others still run, so that the landing that
//! completes the section is always a gated one.
//! design: runtime.section-checks

use std::collections::HashMap;
use std::sync::Arc;

use specc_state::TaskState;

use super::ready::{Scheduler, satisfied};
use crate::attempt::WorkOrder;

/// The leaves whose checks include each section's test blocks.
pub(super) fn covering(order: &[Arc<WorkOrder>]) -> HashMap<String, Vec<usize>> {
    let mut out: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, o) in order.iter().enumerate() {
        add(&mut out, i, o);
    }
    out
}

/// Files leaf `i` (`o`) under each section its checks come from.
fn add(sections: &mut HashMap<String, Vec<usize>>, i: usize, o: &WorkOrder) {
    for node in o.checks.iter().filter_map(|c| c.section.as_deref()) {
        let leaves = sections.entry(node.to_owned()).or_default();
        if !leaves.contains(&i) {
            leaves.push(i);
        }
    }
}

impl Scheduler<'_> {
    /// Files leaf `i`, added while the build runs, under its checks' sections.
    pub(super) fn note_sections(&mut self, i: usize) {
        let order = self.order[i].clone();
        add(&mut self.sections, i, &order);
    }

    /// Leaf `i`'s order as it starts now (`picked` starting with it): the checks of sections
    /// it does not complete marked as information. `None`: another leaf of one of its
    /// sections is all that is left to land and still runs, so this one waits and starts
    /// gated once that one has landed. `hold`: whether it may wait (a re-check of landed
    /// work never does).
    pub(super) fn section_start(
        &self,
        i: usize,
        picked: &[usize],
        hold: bool,
    ) -> Option<Arc<WorkOrder>> {
        let order = &self.order[i];
        if order
            .checks
            .iter()
            .all(|c| c.section.is_none() && c.informs.is_none())
        {
            return Some(order.clone());
        }
        let mut informs: HashMap<&str, String> = HashMap::new();
        for node in order.checks.iter().filter_map(|c| c.section.as_deref()) {
            if informs.contains_key(node) {
                continue;
            }
            let others: Vec<usize> = self
                .sections
                .get(node)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&j| j != i && !satisfied(self.state[j]))
                .collect();
            if others.is_empty() {
                continue;
            }
            let running = |j: &usize| self.state[*j] == TaskState::Running || picked.contains(j);
            if hold && others.iter().all(running) {
                return None;
            }
            let names: Vec<String> = others
                .iter()
                .map(|&j| format!("`{}`", self.order[j].task.id))
                .collect();
            let why = format!(
                "section `{node}` is not complete until {} {} landed",
                names.join(", "),
                if names.len() == 1 { "has" } else { "have" }
            );
            informs.insert(node, why);
        }
        // Every section check as of now: a mark an earlier start left (a follow-up copies
        // its task's checks, marks and all) is cleared where the section is complete.
        let marked =
            |c: &crate::attempt::Check| c.section.as_deref().and_then(|n| informs.get(n)).cloned();
        if order.checks.iter().all(|c| c.informs == marked(c)) {
            return Some(order.clone());
        }
        let mut started = (**order).clone();
        for c in &mut started.checks {
            c.informs = marked(c);
        }
        Some(Arc::new(started))
    }
}
