//! Decision conflicts found during execution. A worker that finds two decisions
//! contradicting each other reports it (`report_contradiction`); once its task lands, the
//! coordinator merges the two as it merges planners' decisions of one question, each with
//! its own rationale, the merged text replaces both entries in the design documents (one
//! commit), and the code pinned to either old text gets revisit tasks, as after a
//! deliberate break. A decision a worker contested and the coordinator settled while it
//! worked (`settled.rs`) has its entry rewritten the same way when that task lands.
//! design: runtime.decision-conflicts
//! design: runtime.contested-decisions

use specc_ir::FileId;
use specc_ir::plan::PlannedDecision;
use specc_passes::plan::{Conflict, Owned};
use specc_state::SettledRow;
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
    rationale: String,
}

/// One rewrite of decision entries to one text, committed at once.
struct Rewrite<'a> {
    /// The ids, each with its entry, that take `text`.
    entries: Vec<(&'a str, &'a Entry)>,
    text: &'a str,
    why: String,
    message: String,
    key: String,
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
        let Ok((head, _)) = s.repo.read_head("").await else {
            break;
        };
        let (Some(a), Some(b)) = (entry(s, head, &c.a).await, entry(s, head, &c.b).await) else {
            tracing::warn!(a = %c.a, b = %c.b, "a reported contradiction names a decision no document holds");
            continue;
        };
        // Each side with its own rationale: the coordinator must see why each was chosen.
        let side = |id: &str, e: &Entry| Owned {
            owner: format!("decision `{id}`"),
            decision: PlannedDecision {
                id: id.to_owned(),
                decision: e.text.clone(),
                rationale: e.rationale.clone(),
            },
        };
        let conflict = Conflict {
            id: c.a.clone(),
            settled_first: false,
            sides: vec![side(&c.a, &a), side(&c.b, &b)],
        };
        let mut req = specc_plan::coordinator::request(&conflict, s.policy.worker_max_tokens);
        req.messages.push(specc_llm::Message::user(format!(
            "A worker found these two decisions contradicting each other: {}",
            c.explanation.trim()
        )));
        let Ok((merged, _)) = specc_plan::coordinator::merge(s.client, &conflict, req).await else {
            continue;
        };
        let why = format!(
            "`{}` and `{}` contradicted each other: {}",
            c.a,
            c.b,
            c.explanation.trim()
        );
        let rewrite = Rewrite {
            entries: vec![(&c.a, &a), (&c.b, &b)],
            text: &merged.decision,
            message: format!("coordinator: merged `{}` and `{}`\n\n{why}", c.a, c.b),
            key: format!("{}/coordinate/{}/{}+{}", s.run, order.task.id, c.a, c.b),
            why,
        };
        if let Some(f) = commit(s, order, head, rewrite).await {
            (s.events)(Event::DecisionsMerged {
                task: order.task.id.clone(),
                a: c.a.clone(),
                b: c.b.clone(),
            });
            followups.extend(f);
        }
    }
    followups
}

/// Rewrites the entry of each decision `order`'s attempt contested and the coordinator
/// settled (`settled`) to the settled text, and returns the revisits for the code pinned to
/// the old one.
pub(crate) async fn record_settled(
    s: &Services<'_>,
    order: &WorkOrder,
    settled: &[SettledRow],
) -> Vec<FollowUp> {
    let mut followups = Vec::new();
    for row in settled {
        let Ok((head, _)) = s.repo.read_head("").await else {
            break;
        };
        let Some(e) = entry(s, head, &row.decision).await else {
            tracing::warn!(decision = %row.decision, "a settled decision no document holds");
            continue;
        };
        if e.text.split_whitespace().eq(row.text.split_whitespace()) {
            continue;
        }
        let why = format!(
            "task `{}` contested it: {} The coordinator settled it: {}",
            row.by_task,
            row.evidence.trim(),
            row.rationale.trim()
        );
        let rewrite = Rewrite {
            entries: vec![(&row.decision, &e)],
            text: &row.text,
            message: format!("coordinator: settled `{}`\n\n{why}", row.decision),
            key: format!("{}/settle/{}/{}", s.run, order.task.id, row.decision),
            why,
        };
        followups.extend(commit(s, order, head, rewrite).await.unwrap_or_default());
    }
    followups
}

/// Commits `r` on `head` (one commit for every entry) and returns the revisits of the code
/// pinned to the old texts; `None` when nothing was committed.
async fn commit(
    s: &Services<'_>,
    order: &WorkOrder,
    head: ObjectId,
    r: Rewrite<'_>,
) -> Option<Vec<FollowUp>> {
    let mut docs: Vec<(String, String)> = Vec::new();
    for (id, e) in &r.entries {
        let current = match docs.iter().find(|(d, _)| *d == e.doc) {
            Some((_, text)) => text.clone(),
            None => file_text(s, head, &e.doc).await.unwrap_or_default(),
        };
        if let Some((updated, _)) = update_decision(&current, id, r.text, &r.why) {
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
            .ok()
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
        message: r.message,
        task: format!("coordinate:{}", order.task.id),
        idempotency_key: r.key,
    };
    let Outcome::Committed { id: at, .. } = s.repo.submit(submission).await else {
        return None;
    };
    let changed: Vec<Break> = r
        .entries
        .iter()
        .map(|(id, e)| Break {
            path: String::new(),
            doc: e.doc.clone(),
            decision: (*id).to_owned(),
            old_text: e.text.clone(),
            new_text: r.text.to_owned(),
            why: r.why.clone(),
            lines: 0,
        })
        .collect();
    Some(super::after::revisits(s, order, &changed, at).await)
}

async fn file_text(s: &Services<'_>, commit: ObjectId, path: &str) -> Option<String> {
    let (bytes, _) = s.repo.file(commit, path).await.ok()??;
    String::from_utf8(bytes).ok()
}

/// The entry of decision `id` in the head's design documents, with its rationale.
async fn entry(s: &Services<'_>, head: ObjectId, id: &str) -> Option<Entry> {
    let files = s.repo.files(head).await.ok()?;
    files
        .iter()
        .filter(|f| f.path.starts_with("design-docs/") && f.path.ends_with(".md"))
        .find_map(|f| {
            let text = String::from_utf8_lossy(&f.bytes);
            // Reading the entry is replacing its text with itself.
            let (_, old) = update_decision(&text, id, "-", "-")?;
            let (parsed, _) = specc_passes::design_docs::parse_design_doc(FileId(0), &text);
            let rationale = parsed
                .into_iter()
                .find(|d| d.id == id)
                .and_then(|d| d.rationale)
                .unwrap_or_default();
            Some(Entry {
                doc: f.path.clone(),
                text: old,
                rationale,
            })
        })
}
