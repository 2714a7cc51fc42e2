//! Reviewers: after a task lands, the `reviewer` role looks at it through lenses —
//! `transcript` (the worker's whole journal of the attempt that landed), `diff` (the landed
//! change only), `codebase` (the touched files as the head has them, and their neighbours,
//! no diff) — each lens with its own model if configured, on a sample of tasks, and answers
//! with a structured verdict through a forced tool call. Findings at or above the configured
//! severity become follow-up tasks under the same parent, scheduled like any leaf; the same
//! finding seen through two lenses is one follow-up. A review never edits code: it has no
//! tool but its verdict. Follow-ups are not reviewed again, so reviews cannot chain.
//! design: runtime.reviewers

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::json;
use specc_ir::plan::TaskNode;
use specc_llm::{Role, Tool};
use specc_vcs::object::ObjectId;

use specc_plan::ForcedCall;

use crate::attempt::WorkOrder;
use crate::services::Services;

use super::review_config::{Lens, ReviewConfig, Severity};

/// The tool a reviewer must call.
pub(crate) const TOOL: &str = "submit_review";

/// Characters of one file's text a reviewer is shown (head and tail kept).
const FILE_CHARS: usize = 12_000;

/// One finding of a verdict.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub(super) struct Finding {
    pub file: String,
    #[serde(default)]
    pub line: Option<u32>,
    pub severity: Severity,
    pub category: String,
    /// The requirement or decision concerned, if any.
    #[serde(default)]
    pub concerns: Option<String>,
    pub finding: String,
    #[serde(default)]
    pub fix: Option<String>,
    /// The lenses that saw it (filled by specc).
    #[serde(default, skip_deserializing)]
    pub lenses: Vec<Lens>,
}

#[derive(Clone, Debug, Deserialize)]
struct Verdict {
    #[serde(default)]
    findings: Vec<Finding>,
}

/// A task the build adds while it runs, and why.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct FollowUp {
    pub order: WorkOrder,
    pub why: String,
}

/// Whether `task` is in the sample: the same tasks every run, so recordings replay.
pub(super) fn sampled(task: &str, rate: f64) -> bool {
    if rate >= 1.0 {
        return true;
    }
    let h = blake3::hash(task.as_bytes());
    let x = u64::from_le_bytes(h.as_bytes()[..8].try_into().unwrap_or_default());
    (x as f64 / u64::MAX as f64) < rate
}

/// Reviews `order`'s landing (`commit`, made by `attempt`); returns the follow-ups its
/// findings call for, and the findings (for the journal).
pub(super) async fn review(
    s: &Services<'_>,
    cfg: &ReviewConfig,
    order: &WorkOrder,
    attempt: u32,
    commit: ObjectId,
) -> (Vec<FollowUp>, Vec<Finding>) {
    if cfg.lenses.is_empty() || order.origin.is_some() || !sampled(&order.task.id, cfg.sample) {
        return (Vec::new(), Vec::new());
    }
    let mut all: Vec<Finding> = Vec::new();
    for &lens in &cfg.lenses {
        let Some(view) = view(s, lens, order, attempt, commit).await else {
            continue;
        };
        let req = request(lens, order, view, s.policy.worker_max_tokens);
        let task = format!("review:{}:{}", lens.as_str(), order.task.id);
        let model = cfg.models.get(&lens).map(String::as_str);
        let asked = ForcedCall::<Verdict>::new(Role::Reviewer, &task, req, TOOL)
            .repairs(1)
            .model(model)
            .ask(s.client)
            .await;
        match asked {
            Ok(a) => {
                for mut f in a.answer.findings {
                    f.lenses = vec![lens];
                    all.push(f);
                }
            }
            Err(e) => {
                tracing::warn!(task = %order.task.id, lens = lens.as_str(), error = ?e, "a review failed")
            }
        }
    }
    let merged = dedupe(all);
    let followups = merged
        .iter()
        .filter(|f| f.severity >= cfg.severity)
        .enumerate()
        .map(|(n, f)| follow_up(order, f, n + 1))
        .collect();
    (followups, merged)
}

/// One finding per (file, line, category): the same finding through two lenses is merged,
/// keeping the most severe, and the lenses that saw it.
pub(super) fn dedupe(findings: Vec<Finding>) -> Vec<Finding> {
    let mut by: BTreeMap<(String, Option<u32>, String), Finding> = BTreeMap::new();
    for f in findings {
        let key = (f.file.clone(), f.line, f.category.trim().to_lowercase());
        match by.get_mut(&key) {
            Some(known) => {
                if f.severity > known.severity {
                    known.severity = f.severity;
                    known.finding.clone_from(&f.finding);
                    known.fix.clone_from(&f.fix);
                }
                for l in f.lenses {
                    if !known.lenses.contains(&l) {
                        known.lenses.push(l);
                    }
                }
            }
            None => {
                by.insert(key, f);
            }
        }
    }
    by.into_values().collect()
}

/// The follow-up task for finding `f` of `order`: under the same parent, the same scope,
/// checks and decisions, after `order`.
fn follow_up(order: &WorkOrder, f: &Finding, n: usize) -> FollowUp {
    let t = &order.task;
    let key = t.id.rsplit('/').next().unwrap_or(&t.id);
    let id = match &t.parent {
        Some(p) if !p.is_empty() => format!("{p}/{key}-review-{n}"),
        _ => format!("{key}-review-{n}"),
    };
    let at = f
        .line
        .map_or_else(|| f.file.clone(), |l| format!("{}:{l}", f.file));
    let concerns = f
        .concerns
        .as_deref()
        .map(|c| format!(", concerning {c}"))
        .unwrap_or_default();
    let instructions = format!(
        "A reviewer of `{}` found a {} {} problem in {at}{concerns}: {}{}\nFix exactly this \
         and change nothing else; the task's checks must still pass.",
        t.id,
        f.severity.as_str(),
        f.category,
        f.finding.trim(),
        f.fix
            .as_deref()
            .map(|x| format!("\nSuggested fix: {}", x.trim()))
            .unwrap_or_default(),
    );
    let mut h = blake3::Hasher::new();
    for part in [&t.fingerprint, &f.file, &f.category, &f.finding] {
        h.update(part.as_bytes());
        h.update(&[0]);
    }
    let task = TaskNode {
        id,
        parent: t.parent.clone(),
        kind: t.kind,
        role: t.role.clone(),
        model: t.model.clone(),
        title: format!("fix: {}", f.finding.chars().take(60).collect::<String>()),
        instructions,
        decisions_to_read: t.decisions_to_read.clone(),
        write_scope: t.write_scope.clone(),
        read_scope: t.read_scope.clone(),
        acceptance: t.acceptance.clone(),
        dependencies: vec![t.id.clone()],
        covers_requirements: t.covers_requirements.clone(),
        covers_nodes: t.covers_nodes.clone(),
        budget: t.budget,
        fingerprint: h.finalize().to_hex()[..16].to_owned(),
    };
    let mut o = WorkOrder {
        task,
        fingerprint: String::new(),
        decisions: order.decisions.clone(),
        requirements: order.requirements.clone(),
        checks: order.checks.clone(),
        parent: None,
        spec: order.spec.clone(),
        other_decisions: order.other_decisions.clone(),
        origin: Some(format!("review of {}", t.id)),
    };
    o.fingerprint = crate::attempt::fingerprint(&o);
    FollowUp {
        order: o,
        why: format!("{} ({at}, {})", f.finding.trim(), f.severity.as_str()),
    }
}

/// What a lens shows, or `None` when there is nothing to show.
async fn view(
    s: &Services<'_>,
    lens: Lens,
    order: &WorkOrder,
    attempt: u32,
    commit: ObjectId,
) -> Option<serde_json::Value> {
    let parent = s.repo.commit(commit).await.ok()?.parent?;
    let changes = s.repo.changes(parent, commit).await.ok()?;
    let touched: Vec<&str> = changes.iter().map(|(p, _)| p.as_str()).collect();
    match lens {
        Lens::Transcript => {
            let steps = s
                .journal
                .attempt_steps(s.run, &order.task.id, attempt)
                .ok()?;
            let steps: Vec<serde_json::Value> = steps
                .into_iter()
                .map(|st| json!({"step": st.step, "kind": st.kind, "body": cap(&st.body)}))
                .collect();
            Some(json!({"lens": "transcript", "steps": steps}))
        }
        Lens::Diff => {
            let mut files = Vec::new();
            for (path, after) in &changes {
                let before = s.repo.file(parent, path).await.ok().flatten();
                files.push(json!({"path": path,
                    "before": before.map(|(b, _)| cap(&String::from_utf8_lossy(&b))),
                    "after": after.as_ref().map(|(b, _)| cap(&String::from_utf8_lossy(b)))}));
            }
            Some(json!({"lens": "diff", "files": files}))
        }
        Lens::Codebase => {
            let head = s.repo.read_head("").await.ok()?.0;
            let mut files = Vec::new();
            for path in &touched {
                if let Ok(Some((b, _))) = s.repo.file(head, path).await {
                    files.push(json!({"path": path, "text": cap(&String::from_utf8_lossy(&b))}));
                }
            }
            let listing = s.repo.files(head).await.unwrap_or_default();
            let dirs: Vec<&str> = touched
                .iter()
                .map(|p| p.rsplit_once('/').map_or("", |(d, _)| d))
                .collect();
            let neighbours: Vec<&str> = listing
                .iter()
                .map(|f| f.path.as_str())
                .filter(|p| dirs.contains(&p.rsplit_once('/').map_or("", |(d, _)| d)))
                .filter(|p| !touched.contains(p))
                .take(200)
                .collect();
            Some(json!({"lens": "codebase", "files": files, "neighbours": neighbours}))
        }
    }
}

fn cap(text: &str) -> String {
    if text.len() <= FILE_CHARS {
        return text.to_owned();
    }
    let mut head = FILE_CHARS / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - FILE_CHARS / 2;
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n… ({} bytes left out) …\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

fn request(
    lens: Lens,
    order: &WorkOrder,
    view: serde_json::Value,
    max_tokens: u32,
) -> specc_llm::Request {
    let system = format!(
        "You are specc's reviewer, looking at one landed task through the `{}` lens. Report \
         real problems only: a requirement not met, a decision not followed, a bug, a missing \
         test. Give each finding its file, line if you know it, severity (minor, major or \
         critical), category and the requirement or decision it concerns. You cannot change \
         the code. Answer only by calling submit_review; no findings is a valid answer.",
        lens.as_str()
    );
    let user = json!({
        "task": {"id": order.task.id, "title": order.task.title,
                 "instructions": order.task.instructions},
        "requirements": order.requirements,
        "decisions": order.decisions,
        // The spec's sections the task covers, as written: what the code is held to
        // (design: spec.node-text).
        "spec": order.spec.iter().filter(|s| !s.text.is_empty()).map(|s| &s.text).collect::<Vec<_>>(),
        "view": view,
    });
    let finding = json!({
        "type": "object", "required": ["file", "severity", "category", "finding"],
        "properties": {
            "file": {"type": "string", "description": "The file, relative to the repository's root."},
            "line": {"type": "integer", "description": "The 1-based line, if you know it."},
            "severity": {"type": "string", "enum": ["minor", "major", "critical"], "description": "How much it matters: a critical or major finding becomes a follow-up task."},
            "category": {"type": "string", "description": "A word for the kind: bug, requirement, decision, test, style."},
            "concerns": {"type": "string", "description": "The requirement or decision id it concerns, if any."},
            "finding": {"type": "string", "description": "What is wrong, specifically."},
            "fix": {"type": "string", "description": "What would fix it."}
        }
    });
    specc_plan::ask::request(
        &system,
        &user,
        Tool {
            name: TOOL.to_owned(),
            description: "Submit the review's findings.".to_owned(),
            parameters: json!({"type": "object", "required": ["findings"],
                "properties": {"findings": {"type": "array", "items": finding,
                    "description": "The problems found; an empty list when there are none."}}}),
        },
        max_tokens,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(file: &str, line: u32, sev: Severity, lens: Lens) -> Finding {
        Finding {
            file: file.into(),
            line: Some(line),
            severity: sev,
            category: "bug".into(),
            concerns: None,
            finding: format!("{sev:?} at {line}"),
            fix: None,
            lenses: vec![lens],
        }
    }

    #[test]
    fn a_finding_seen_through_two_lenses_is_one() {
        let merged = dedupe(vec![
            f("a.rs", 3, Severity::Minor, Lens::Diff),
            f("a.rs", 3, Severity::Major, Lens::Codebase),
            f("a.rs", 9, Severity::Minor, Lens::Diff),
        ]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].severity, Severity::Major);
        assert_eq!(merged[0].lenses, [Lens::Diff, Lens::Codebase]);
    }

    #[test]
    fn sampling_is_the_same_every_time() {
        let picked: Vec<bool> = (0..200).map(|i| sampled(&format!("t{i}"), 0.25)).collect();
        let again: Vec<bool> = (0..200).map(|i| sampled(&format!("t{i}"), 0.25)).collect();
        assert_eq!(picked, again);
        let n = picked.iter().filter(|p| **p).count();
        assert!((30..=70).contains(&n), "{n} of 200 at 0.25");
        assert!(sampled("x", 1.0));
        assert!(!sampled("x", 0.0));
    }
}
