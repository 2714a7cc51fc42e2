//! An id is decided once in the whole tree, and never against the spec.

use std::collections::HashMap;

use specc_ir::plan::PlannerAnswer;
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
                    format!("`{node}` decides `{}`, which `{owner}` owns", d.id),
                )
                .with_help(format!(
                    "one question has one owner: read `{}` as decided by `{owner}`, or ask it to change",
                    d.id
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
