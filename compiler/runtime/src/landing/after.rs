//! What follows a landing, from an attempt: the reviewers' follow-ups (journaled as a
//! `review` step), and the revisits a deliberate break calls for.
//! design: runtime.reviewers
//! design: runtime.deliberate-breaking

use serde_json::json;
use specc_vcs::object::ObjectId;

use specc_state::StepKind;

use super::reported::Break;
use super::review::{FollowUp, review};
use super::revisit::revisits as revisits_of;
use crate::attempt::WorkOrder;
use crate::services::Services;

/// Reviews a landing, journals the findings (a `review` step after the attempt's last) and
/// returns the follow-ups they call for. A journal that cannot record them drops them: the
/// task landed either way.
pub(crate) async fn reviewed(
    s: &Services<'_>,
    order: &WorkOrder,
    attempt: u32,
    commit: ObjectId,
) -> Vec<FollowUp> {
    let (followups, findings) = review(s, &s.policy.review, order, attempt, commit).await;
    if findings.is_empty() {
        return followups;
    }
    let task = order.task.id.as_str();
    let step = s
        .journal
        .attempt_steps(s.run, task, attempt)
        .map_or(0, |st| st.last().map_or(0, |l| l.step))
        + 1;
    let body = json!({
        "findings": findings.iter().map(|f| json!({
            "file": f.file, "line": f.line, "severity": f.severity.as_str(),
            "category": f.category, "concerns": f.concerns, "finding": f.finding,
            "lenses": f.lenses.iter().map(|l| l.as_str()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "followups": followups.iter().map(|f| f.order.task.id.clone()).collect::<Vec<_>>(),
    });
    match s
        .journal
        .step(s.run, task, attempt, step, StepKind::Review, &body)
    {
        Ok(()) => followups,
        Err(_) => Vec::new(),
    }
}

/// The revisit tasks for what `breaks` changed: `specc check` on the landed commit finds
/// the references pinned to a decision's old text. A check that cannot run adds none.
pub(crate) async fn revisits(
    s: &Services<'_>,
    order: &WorkOrder,
    breaks: &[Break],
    commit: ObjectId,
) -> Vec<FollowUp> {
    let Some(pins) = &s.pins else {
        return Vec::new();
    };
    let Ok(lease) = s.slots.lease(s.repo, commit).await else {
        return Vec::new();
    };
    let stale = pins.stale(&lease.dir);
    revisits_of(order, breaks, &stale)
}
