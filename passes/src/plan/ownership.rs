//! An id is decided once in the whole tree, and never against the spec.

use std::collections::{BTreeMap, HashMap};

use specc_ir::plan::{PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, IntentTree, codes};

use crate::front_end::text::normalize_ws;

/// Decisions of `answer` (made at `node`) that take a question from its owner: an id that
/// `owned` records with another text, or an id the answer itself decides twice, differently.
/// Repeating an owned decision with its owner's text (whitespace aside) is allowed.
pub fn check_ownership(
    node: &str,
    answer: &PlannerAnswer,
    owned: &BTreeMap<String, Owned>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut mine: HashMap<&str, &str> = HashMap::new();
    for d in &answer.decisions {
        let text = normalize_ws(&d.decision);
        if let Some(o) = owned.get(&d.id)
            && normalize_ws(&o.decision.decision) != text
        {
            let owner = super::words::task_name(&o.owner);
            out.push(
                Diagnostic::new(
                    codes::DECISION_OWNED_ELSEWHERE,
                    format!(
                        "{} decides `{}`, which {owner} owns",
                        super::words::task_name(node),
                        d.id
                    ),
                )
                .with_help(format!(
                    "one question has one owner: {owner} decided `{}` as \"{}\"; restate that text word for word, or leave the id out, or name your own question with an id of your own area; if it is wrong for your node, contest it under `contested` with the spec's words as evidence",
                    d.id, o.decision.decision
                )),
            );
        } else if let Some(first) = mine.get(d.id.as_str())
            && normalize_ws(first) != text
        {
            out.push(
                Diagnostic::new(
                    codes::DECISION_OWNED_ELSEWHERE,
                    format!(
                        "{} decides `{}` twice, differently",
                        super::words::task_name(node),
                        d.id
                    ),
                )
                .with_help("decide each question once"),
            );
        }
        mine.entry(&d.id).or_insert(&d.decision);
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

/// A decision's text as compared with another's: white space runs collapsed, ends trimmed.
/// Every check of "the same decision" goes through this, so they cannot disagree.
pub fn decision_key(text: &str) -> String {
    normalize_ws(text)
}

/// Who decided an id, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owned {
    /// The task that owns it.
    pub owner: String,
    pub decision: PlannedDecision,
}

/// One question decided differently by two or more accepted answers: the repairs did not
/// make the later planners yield. It goes to one coordinator call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub id: String,
    /// Whether the first side is an earlier merge rather than an owner's own text.
    pub settled_first: bool,
    /// The owner first, then each other decision of the id, in the order met.
    pub sides: Vec<Owned>,
}

/// Registers the decisions of `answer`, made at `task`, in `owned`, in order. A decision of
/// an id already owned with the owner's text (whitespace aside) is a repetition: it stays in
/// the answer (the task's subtree reads it) but the owner keeps the id. Other texts are a
/// conflict, one per id, returned for the coordinator.
/// design: passes.plan-checks
pub fn claim_decisions(
    task: &str,
    answer: &PlannerAnswer,
    owned: &mut BTreeMap<String, Owned>,
) -> Vec<Conflict> {
    let mut conflicts: Vec<Conflict> = Vec::new();
    for d in &answer.decisions {
        let Some(first) = owned.get(&d.id) else {
            owned.insert(
                d.id.clone(),
                Owned {
                    owner: task.to_owned(),
                    decision: d.clone(),
                },
            );
            continue;
        };
        if normalize_ws(&first.decision.decision) == normalize_ws(&d.decision) {
            continue;
        }
        let side = Owned {
            owner: task.to_owned(),
            decision: d.clone(),
        };
        match conflicts.iter_mut().find(|c| c.id == d.id) {
            Some(c) => {
                if !c
                    .sides
                    .iter()
                    .any(|s| normalize_ws(&s.decision.decision) == normalize_ws(&d.decision))
                {
                    c.sides.push(side);
                }
            }
            None => conflicts.push(Conflict {
                id: d.id.clone(),
                settled_first: false,
                sides: vec![first.clone(), side],
            }),
        }
    }
    conflicts
}
