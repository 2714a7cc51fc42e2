//! Decision conflicts found during execution. A worker that finds two decisions
//! contradicting each other reports it (`report_contradiction`); once its task lands, the
//! coordinator merges the two as it merges planners' decisions of one question, the merged
//! text replaces both entries in the design documents (one commit), and the code pinned to
//! either old text gets revisit tasks, as after a deliberate break.
//! design: runtime.decision-conflicts

use specc_ir::plan::PlannedDecision;
use specc_passes::plan::{Conflict, Owned};
use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Outcome, Submission};

use super::reported::{Break, Contradiction};
use super::review::FollowUp;
use super::revisit::update_decision;
use crate::attempt::WorkOrder;
use crate::events::Event;
use crate::services::Services;

/// A decision's entry as a design document holds it.
struct Entry {
    doc: String,
    text: String,
}

/// Merges each contradiction on the head (after `order` landed), commits the merged texts,
/// and returns the revisits for the code pinned to the old ones.
pub(crate) async fn settle(
    s: &Services<'_>,
    order: &WorkOrder,
    found: &[Contradiction],
) -> Vec<FollowUp> {
    let mut followups = Vec::new();
    for c in found {
        let Some((head, _)) = s.repo.read_head("").await else {
            break;
        };
        let (Some(a), Some(b)) = (entry(s, head, &c.a).await, entry(s, head, &c.b).await) else {
            tracing::warn!(a = %c.a, b = %c.b, "a reported contradiction names a decision no document holds");
            continue;
        };
        let side = |id: &str, text: &str| Owned {
            owner: format!("decision `{id}`"),
            decision: PlannedDecision {
                id: id.to_owned(),
                decision: text.to_owned(),
                rationale: c.explanation.clone(),
            },
        };
        let conflict = Conflict {
            id: c.a.clone(),
            settled_first: false,
            sides: vec![side(&c.a, &a.text), side(&c.b, &b.text)],
        };
        let req = specc_plan::coordinator::request(&conflict, s.policy.worker_max_tokens);
        let Ok((merged, _)) = specc_plan::coordinator::merge(s.client, &conflict, req).await else {
            continue;
        };
        let why = format!(
            "`{}` and `{}` contradicted each other: {}",
            c.a,
            c.b,
            c.explanation.trim()
        );
        // Both entries take the merged text, in one commit.
        let mut docs: Vec<(String, String)> = Vec::new();
        for (id, e) in [(&c.a, &a), (&c.b, &b)] {
            let current = match docs.iter().find(|(d, _)| *d == e.doc) {
                Some((_, text)) => text.clone(),
                None => file_text(s, head, &e.doc).await.unwrap_or_default(),
            };
            if let Some((updated, _)) = update_decision(&current, id, &merged.decision, &why) {
                docs.retain(|(d, _)| *d != e.doc);
                docs.push((e.doc.clone(), updated));
            }
        }
        let mut changes = Vec::new();
        for (doc, text) in docs {
            let expected = s
                .repo
                .file(head, &doc)
                .await
                .flatten()
                .map(|(b, _)| ObjectId::of(specc_vcs::object::Kind::Blob, &b));
            changes.push(Change {
                path: doc,
                expected,
                new: Some(text.into_bytes()),
                executable: false,
            });
        }
        let submission = Submission {
            base: head,
            changes,
            message: format!("coordinator: merged `{}` and `{}`\n\n{why}", c.a, c.b),
            task: format!("coordinate:{}", order.task.id),
            idempotency_key: format!("{}/coordinate/{}/{}+{}", s.run, order.task.id, c.a, c.b),
        };
        let Outcome::Committed { id: at, .. } = s.repo.submit(submission).await else {
            continue;
        };
        (s.events)(Event::DecisionsMerged {
            task: order.task.id.clone(),
            a: c.a.clone(),
            b: c.b.clone(),
        });
        let changed = [(&c.a, &a), (&c.b, &b)].map(|(id, e)| Break {
            path: String::new(),
            doc: e.doc.clone(),
            decision: id.clone(),
            old_text: e.text.clone(),
            new_text: merged.decision.clone(),
            why: why.clone(),
            lines: 0,
        });
        followups.extend(super::after::revisits(s, order, &changed, at).await);
    }
    followups
}

async fn file_text(s: &Services<'_>, commit: ObjectId, path: &str) -> Option<String> {
    let (bytes, _) = s.repo.file(commit, path).await??;
    String::from_utf8(bytes).ok()
}

/// The entry of decision `id` in the head's design documents.
async fn entry(s: &Services<'_>, head: ObjectId, id: &str) -> Option<Entry> {
    let files = s.repo.files(head).await?;
    files
        .iter()
        .filter(|f| f.path.starts_with("design-docs/") && f.path.ends_with(".md"))
        .find_map(|f| {
            let text = String::from_utf8_lossy(&f.bytes);
            // Reading the entry is replacing its text with itself.
            let (_, old) = update_decision(&text, id, "-", "-")?;
            Some(Entry {
                doc: f.path.clone(),
                text: old,
            })
        })
}
