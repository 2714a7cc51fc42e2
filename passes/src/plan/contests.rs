//! A planner may contest an ancestor's decision instead of deciding its id again: the
//! contest names a decision it was given, the text it should have, and the evidence (the
//! spec's words). The coordinator settles it with the decision's owner (design:
//! runtime.contested-decisions).

use specc_ir::plan::{PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, codes};

use crate::front_end::text::normalize_ws;

/// What is wrong with `answer`'s contests, made at `node` under the decisions `above`: a
/// contest of a decision it was not given, without a text or evidence, or of a text the
/// decision already has; a decision of the same id beside its contest.
pub fn check_contests(
    node: &str,
    answer: &PlannerAnswer,
    above: &[PlannedDecision],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let who = super::words::task_name(node);
    for c in &answer.contested {
        let Some(given) = above.iter().find(|d| d.id == c.id) else {
            let ids: Vec<String> = above.iter().map(|d| format!("`{}`", d.id)).collect();
            out.push(contest_invalid(
                format!("{who} contests `{}`, which is not a decision it was given", c.id),
                if ids.is_empty() {
                    "only an ancestor's decision (ancestor_decisions) can be contested, and this node has none".to_owned()
                } else {
                    format!("only an ancestor's decision can be contested: {}", ids.join(", "))
                },
            ));
            continue;
        };
        if c.decision.trim().is_empty() || c.evidence.trim().is_empty() {
            out.push(contest_invalid(
                format!("{who} contests `{}` without a text or without evidence", c.id),
                "give the text the decision should have and the evidence: quote the spec's words it contradicts".to_owned(),
            ));
        } else if normalize_ws(&c.decision) == normalize_ws(&given.decision) {
            out.push(contest_invalid(
                format!("{who} contests `{}` with the text it already has", c.id),
                "contest a decision only to change it; leave it out of `contested` to follow it"
                    .to_owned(),
            ));
        }
        if answer.decisions.iter().any(|d| d.id == c.id) {
            out.push(contest_invalid(
                format!("{who} both contests and decides `{}`", c.id),
                "leave the id out of `decisions`: the coordinator settles the contest, and the settled text reaches this node".to_owned(),
            ));
        }
    }
    out
}

#[cold]
fn contest_invalid(message: String, help: String) -> Diagnostic {
    Diagnostic::new(codes::CONTEST_INVALID, message).with_help(help)
}
