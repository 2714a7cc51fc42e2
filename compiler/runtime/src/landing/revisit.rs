//! Deliberate breaking and revisits. A worker that judges core code must change may patch a
//! file outside its write scope (`break_scope`), within a small line budget, if the patch
//! references the decision it changes and the decision's text is updated with the reason.
//! Once the task lands, `specc check` on the head finds the references pinned to the old
//! text; each becomes a revisit task for the code that relied on it, told the reason and
//! the decision's old and new text, which ends with the reference re-pinned (`pin`).
//! design: runtime.deliberate-breaking

use specc_ir::plan::{ChildKind, TaskNode};

use super::pins::StaleRef;
use super::reported::Break;
use super::review::FollowUp;
use crate::attempt::{DecisionText, WorkOrder};

/// The revisit tasks `stale` calls for after `breaks` landed: one per stale reference to a
/// decision a break changed.
pub(super) fn revisits(by: &WorkOrder, breaks: &[Break], stale: &[StaleRef]) -> Vec<FollowUp> {
    let mut out = Vec::new();
    for r in stale {
        let Some(b) = breaks.iter().find(|b| b.decision == r.decision) else {
            continue;
        };
        let slug: String = format!("{}-{}-{}", r.path, r.line, b.decision)
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let instructions = format!(
            "Task `{}` changed the decision `{}` on purpose: {}\nOld text: {}\nNew text: {}\n\
             The code at {}:{} relied on the old text. Read it; if it no longer agrees with \
             the new text, change it so it does (within your write scope). Then call `pin` \
             with path `{}` and line {} to re-pin its reference to the new text.",
            by.task.id,
            b.decision,
            b.why.trim(),
            b.old_text.trim(),
            b.new_text.trim(),
            r.path,
            r.line,
            r.path,
            r.line
        );
        let mut h = blake3::Hasher::new();
        for part in [&b.decision, &b.new_text, &r.path] {
            h.update(part.as_bytes());
            h.update(&[0]);
        }
        let task = TaskNode {
            id: format!("revisit-{slug}"),
            parent: Some(String::new()),
            kind: ChildKind::Work,
            role: "worker".to_owned(),
            model: String::new(),
            title: format!("revisit {}:{} for `{}`", r.path, r.line, b.decision),
            instructions,
            decisions_to_read: vec![b.decision.clone()],
            write_scope: vec![r.path.clone()],
            read_scope: Vec::new(),
            acceptance: Vec::new(),
            dependencies: vec![by.task.id.clone()],
            covers_requirements: Vec::new(),
            covers_nodes: Vec::new(),
            budget: by.task.budget,
            fingerprint: h.finalize().to_hex()[..16].to_owned(),
        };
        let mut o = WorkOrder {
            task,
            fingerprint: String::new(),
            decisions: vec![DecisionText {
                id: b.decision.clone(),
                text: b.new_text.clone(),
                rationale: b.why.clone(),
                spec: false,
            }],
            requirements: Vec::new(),
            checks: Vec::new(),
            parent: None,
            spec: Vec::new(),
            other_decisions: Vec::new(),
            origin: Some(format!("revisit after {}", by.task.id)),
        };
        o.fingerprint = crate::attempt::fingerprint(&o);
        if !out.iter().any(|f: &FollowUp| f.order.task.id == o.task.id) {
            out.push(FollowUp {
                order: o,
                why: format!("{}: `{}` changed ({})", r.path, b.decision, b.why.trim()),
            });
        }
    }
    out
}

/// `doc` with the entry `{#id}`'s `Decision:` line replaced by `text`, and `why` added to its
/// rationale; `None` with the old text if the entry is not there. Returns (new doc, old text).
pub(crate) fn update_decision(
    doc: &str,
    id: &str,
    text: &str,
    why: &str,
) -> Option<(String, String)> {
    let mut lines: Vec<String> = doc.lines().map(str::to_owned).collect();
    let heading = lines
        .iter()
        .position(|l| l.starts_with('#') && l.contains(&format!("{{#{id}}}")))?;
    let end = lines[heading + 1..]
        .iter()
        .position(|l| l.starts_with('#'))
        .map_or(lines.len(), |i| heading + 1 + i);
    let at = (heading + 1..end).find(|&i| lines[i].starts_with("Decision:"))?;
    let old = lines[at].trim_start_matches("Decision:").trim().to_owned();
    lines[at] = format!("Decision: {}", text.trim());
    let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
    match (heading + 1..end).find(|&i| lines[i].starts_with("Rationale:")) {
        Some(r) => lines[r] = format!("{} Changed on purpose: {why}", lines[r].trim_end()),
        None => lines.insert(at + 1, format!("Rationale: Changed on purpose: {why}")),
    }
    let mut out = lines.join("\n");
    if doc.ends_with('\n') {
        out.push('\n');
    }
    Some((out, old))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_entry_is_updated_in_place() {
        let doc = "# Core\n\n## Format {#core.format}\nDecision: JSON lines.\nRationale: simple.\nStatus: accepted\n\n## Other {#core.other}\nDecision: x\n";
        let (new, old) =
            update_decision(doc, "core.format", "CBOR.", "JSON is too slow").expect("found");
        assert_eq!(old, "JSON lines.");
        assert!(new.contains(
            "Decision: CBOR.\nRationale: simple. Changed on purpose: JSON is too slow\n"
        ));
        assert!(new.contains("## Other {#core.other}\nDecision: x\n"));
        assert!(update_decision(doc, "core.missing", "y", "z").is_none());
    }
}
