//! An id is decided once in the whole tree, and never against the spec.

use std::collections::{BTreeMap, HashMap};

use specc_ir::plan::{PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentTree, codes};

use crate::front_end::text::normalize_ws;

/// Decisions of `answer` (made at `node`) whose id another node already owns; `owners` maps
/// each owned id to the node that decided it.
pub fn check_ownership(
    node: &str,
    answer: &PlannerAnswer,
    owners: &HashMap<String, String>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for d in &answer.decisions {
        let other = owners
            .get(&d.id)
            .filter(|o| o.as_str() != node)
            .map(String::as_str);
        let twice = seen.contains(&d.id.as_str()).then_some(node);
        if let Some(owner) = other.or(twice) {
            out.push(
                Diagnostic::new(
                    codes::DECISION_OWNED_ELSEWHERE,
                    format!(
                        "{} decides `{}`, which {} owns",
                        super::task_name(node),
                        d.id,
                        super::task_name(owner)
                    ),
                )
                .with_help(format!(
                    "one question has one owner: read `{}` as decided by {}, or ask it to change",
                    d.id,
                    super::task_name(owner)
                )),
            );
        }
        seen.push(&d.id);
    }
    out
}

/// Decisions of `answer` whose id the spec fixed with a different text.
pub fn check_spec_decisions(answer: &PlannerAnswer, spec: &IntentTree) -> Vec<Diagnostic> {
    let fixed: HashMap<&str, &str> = spec
        .nodes()
        .flat_map(|n| n.decisions.iter())
        .filter_map(|d| Some((d.id.as_deref()?, d.text.as_str())))
        .collect();
    answer
        .decisions
        .iter()
        .filter_map(|d| {
            let text = fixed.get(d.id.as_str())?;
            (normalize_ws(text) != normalize_ws(&d.decision)).then(|| {
                Diagnostic::new(
                    codes::CONTRADICTS_SPEC_DECISION,
                    format!("the planner decided `{}` differently from the spec", d.id),
                )
                .with_help(format!("the spec fixed it: \"{text}\"; keep that decision"))
            })
        })
        .collect()
}

/// Who decided an id, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owned {
    /// The task that owns it.
    pub owner: String,
    pub decision: PlannedDecision,
}

/// One question two tasks decided differently, both answers accepted: the repairs did not
/// make the second planner yield. It goes to one coordinator call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub first: Owned,
    pub second: Owned,
}

/// Registers the decisions of `answer`, made at `task`, in `owned`, in order. A decision of
/// an id already owned with the owner's text (whitespace aside) is a repetition: it stays in
/// the answer (the task's subtree reads it) but the owner keeps the id. With another text it
/// is a conflict, returned for the coordinator.
/// design: passes.plan-checks
pub fn claim_decisions(
    task: &str,
    answer: &PlannerAnswer,
    owned: &mut BTreeMap<String, Owned>,
) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    for d in &answer.decisions {
        match owned.get(&d.id) {
            None => {
                owned.insert(
                    d.id.clone(),
                    Owned {
                        owner: task.to_owned(),
                        decision: d.clone(),
                    },
                );
            }
            Some(first) => {
                if normalize_ws(&first.decision.decision) != normalize_ws(&d.decision) {
                    conflicts.push(Conflict {
                        first: first.clone(),
                        second: Owned {
                            owner: task.to_owned(),
                            decision: d.clone(),
                        },
                    });
                }
            }
        }
    }
    conflicts
}
