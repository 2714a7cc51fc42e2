//! The neutral merge agent, which reconciles a conflicted submission with the head. A submission that conflicts (two tasks changed the same lines)
//! is taken out of the VCS's merge queue and rebased onto today's head path by path: a path
//! the head did not change since the writer's base is taken as written, one both changed is
//! merged three ways, and one whose edits overlap goes to the `merger` role with the base,
//! both sides, both tasks' instructions and the decisions they read. The merger answers with
//! the file's content through a forced tool call; a resolution that adds lines found in
//! neither side nor their base is sent back once (E0409), then the conflict goes back to the
//! task, which runs again on the new head as before. The rebased submission goes through the
//! same commit protocol as any change. Calls queue for the `merger` role in the order they
//! come (its semaphore is fair), and each task has at most one conflict at a time, so
//! writers are served in turn.
//! design: runtime.merge-agent

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::json;
use specc_ir::{Diagnostic, codes};
use specc_llm::{Role, Tool};
use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, Conflict, FileAt, Outcome, Refusal, Submission};

use specc_plan::{ForcedCall, PlanError};

use crate::attempt::WorkOrder;
use crate::services::Services;

/// The tool the merger must call.
pub const TOOL: &str = "submit_resolution";

/// Times a rebased submission may meet a head that moved again before the task is sent back.
const ROUNDS: usize = 3;

/// How a conflicted submission ended.
#[derive(Debug)]
pub enum Merged {
    Landed {
        id: ObjectId,
        /// Paths merged three ways (by the VCS or here).
        merged: Vec<String>,
        /// Paths the merge agent resolved.
        resolved: Vec<String>,
    },
    /// The head already holds everything the submission changed.
    Unchanged,
    /// Not resolved: the task runs again on the new head.
    SentBack {
        path: String,
        reason: String,
    },
    Refused(Refusal),
    Budget,
}

/// What the merger answers.
#[derive(Clone, Debug, Deserialize)]
struct Resolution {
    content: String,
    #[serde(default)]
    explanation: String,
}

/// How a reconciliation ended, and the merger's explanations (for the journal).
#[derive(Debug)]
pub struct Reconciled {
    pub merged: Merged,
    pub notes: Vec<serde_json::Value>,
}

/// One round's rebased changes: what was merged three ways here and what the merger
/// resolved.
#[derive(Default)]
struct Round {
    changes: Vec<Change>,
    merged: Vec<String>,
    resolved: Vec<String>,
}

/// Rebases `submitted`, which met `conflict`, onto today's head with the merge agent's help,
/// and submits it.
pub async fn reconcile(
    s: &Services<'_>,
    order: &WorkOrder,
    submitted: &Submission,
    conflict: &Conflict,
) -> Reconciled {
    // The merge agent takes the conflict out of the queue: it is served now.
    let _ = s.repo.withdraw(&order.task.id);
    let mut notes = Vec::new();
    let mut last_path = conflict.path.clone();
    for round in 0..ROUNDS {
        let Ok((head, _)) = s.repo.read_head("").await else {
            let merged = sent_back(&last_path, "the VCS is unavailable");
            return Reconciled { merged, notes };
        };
        let mut made = Round::default();
        let at = (head, round);
        if let Err(merged) =
            rebase_all(s, order, (submitted, conflict), at, &mut made, &mut notes).await
        {
            return Reconciled { merged, notes };
        }
        if made.changes.is_empty() {
            // The head already holds all of it.
            return Reconciled {
                merged: Merged::Unchanged,
                notes,
            };
        }
        let Round {
            changes,
            mut merged,
            resolved,
        } = made;
        match s
            .repo
            .submit(rebased(submitted, at, changes, &resolved))
            .await
        {
            Outcome::Committed { id, merged: m, .. } => {
                merged.extend(m);
                merged.sort();
                merged.dedup();
                let merged = Merged::Landed {
                    id,
                    merged,
                    resolved,
                };
                return Reconciled { merged, notes };
            }
            // The head moved again: rebase once more (and take this conflict out of the
            // queue the submission put it in).
            Outcome::Conflict(c) => {
                let _ = s.repo.withdraw(&order.task.id);
                last_path = c.path;
            }
            Outcome::Refused(r) => {
                return Reconciled {
                    merged: Merged::Refused(r),
                    notes,
                };
            }
        }
    }
    let why = "the head kept moving while the merge agent worked";
    Reconciled {
        merged: sent_back(&last_path, why),
        notes,
    }
}

/// Rebases each of the submission's changes onto `head` into `made`: taken, merged three
/// ways, or resolved by the merger. `Err` ends the reconciliation.
async fn rebase_all(
    s: &Services<'_>,
    order: &WorkOrder,
    (submitted, conflict): (&Submission, &Conflict),
    (head, round): (ObjectId, usize),
    made: &mut Round,
    notes: &mut Vec<serde_json::Value>,
) -> Result<(), Merged> {
    for c in &submitted.changes {
        let (Ok(base), Ok(now)) = (
            s.repo.file(submitted.base, &c.path).await,
            s.repo.file(head, &c.path).await,
        ) else {
            return Err(sent_back(&c.path, "the VCS is unavailable"));
        };
        let mine: FileAt = c.new.clone().map(|b| (b, c.executable));
        let expected = now.as_ref().map(|(b, _)| ObjectId::of(Kind::Blob, b));
        let mode = merged_mode(&base, &now, c.executable);
        let new = match rebase(&base, &now, &mine) {
            Rebased::Take => mine.clone(),
            Rebased::Already => continue,
            Rebased::Merged(text) => {
                made.merged.push(c.path.clone());
                Some((text.into_bytes(), mode))
            }
            Rebased::Overlap { base, head, mine } => {
                let other = (c.path == conflict.path)
                    .then(|| conflict.head_task.clone())
                    .flatten();
                let sides = Sides {
                    path: &c.path,
                    base: &base,
                    head: &head,
                    mine: &mine,
                    head_intent: conflict.head_intent.as_deref(),
                    head_task: other.as_deref(),
                };
                let r = ask(s, order, submitted, &sides).await?;
                notes.push(json!({"path": c.path, "round": round,
                                  "explanation": r.explanation}));
                made.resolved.push(c.path.clone());
                Some((r.content.into_bytes(), mode))
            }
            Rebased::Unmergeable(why) => return Err(sent_back(&c.path, &why)),
        };
        made.changes.push(Change {
            path: c.path.clone(),
            expected,
            new: new.as_ref().map(|(b, _)| b.clone()),
            executable: new.is_some_and(|(_, x)| x),
        });
    }
    Ok(())
}

/// The submission rebased onto `head` in round `round`.
fn rebased(
    submitted: &Submission,
    (head, round): (ObjectId, usize),
    changes: Vec<Change>,
    resolved: &[String],
) -> Submission {
    let paths: Vec<&str> = resolved.iter().map(String::as_str).collect();
    Submission {
        base: head,
        message: if paths.is_empty() {
            submitted.message.clone()
        } else {
            format!(
                "{}\n\nMerge agent: resolved {}",
                submitted.message,
                paths.join(", ")
            )
        },
        task: submitted.task.clone(),
        // No key stays no key: a derived key would make unrelated merges one.
        idempotency_key: if submitted.idempotency_key.is_empty() {
            String::new()
        } else {
            format!("{}#merge{round}", submitted.idempotency_key)
        },
        changes,
    }
}

/// The mode of a path both sides changed: the writer's if it changed the mode, else the
/// head's (as the VCS decides a 3-way merge's mode).
fn merged_mode(base: &FileAt, now: &FileAt, mine: bool) -> bool {
    let base_mode = base.as_ref().map(|(_, x)| *x);
    match now.as_ref().map(|(_, x)| *x) {
        Some(head) if base_mode == Some(mine) => head,
        _ => mine,
    }
}

fn sent_back(path: &str, reason: &str) -> Merged {
    Merged::SentBack {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// What rebasing one path onto the head gives.
#[derive(Debug, PartialEq, Eq)]
enum Rebased {
    /// The head has the base's file: the writer's change applies as written.
    Take,
    /// The head already has what the writer wrote.
    Already,
    /// Both changed it and the edits merge.
    Merged(String),
    /// Both changed the same lines of a text file: for the merge agent.
    Overlap {
        base: String,
        head: String,
        mine: String,
    },
    /// A deletion against an edit, or not text: the task runs again.
    Unmergeable(String),
}

fn rebase(base: &FileAt, now: &FileAt, mine: &FileAt) -> Rebased {
    if now == base {
        return Rebased::Take;
    }
    if now == mine {
        return Rebased::Already;
    }
    let text = |f: &FileAt| f.as_ref().map(|(b, _)| String::from_utf8(b.clone()).ok());
    match (text(base), text(now), text(mine)) {
        (base, Some(Some(head)), Some(Some(mine))) => {
            let base = match base {
                None => String::new(),
                Some(Some(b)) => b,
                Some(None) => return Rebased::Unmergeable("not text".to_owned()),
            };
            match specc_vcs::merge::merge3(&base, &head, &mine) {
                Some(m) => Rebased::Merged(m),
                None => Rebased::Overlap { base, head, mine },
            }
        }
        (_, None, _) | (_, _, None) => {
            Rebased::Unmergeable("one side deleted the file the other changed".to_owned())
        }
        _ => Rebased::Unmergeable("not text".to_owned()),
    }
}

/// Both sides of one overlapping path.
struct Sides<'a> {
    path: &'a str,
    base: &'a str,
    head: &'a str,
    mine: &'a str,
    head_intent: Option<&'a str>,
    head_task: Option<&'a str>,
}

/// Lines of `resolution` found in neither side nor their base (blank lines aside).
fn added_lines(resolution: &str, sides: [&str; 3]) -> Vec<String> {
    let known: BTreeSet<&str> = sides
        .iter()
        .flat_map(|t| t.lines())
        .map(str::trim_end)
        .collect();
    let mut out: Vec<String> = resolution
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !known.contains(l))
        .map(str::to_owned)
        .collect();
    out.dedup();
    out
}

/// What the merger is told it is.
const SYSTEM: &str = "You are specc's merge agent, neutral between two tasks that changed \
    the same lines of one file. Write the file's whole content so that it keeps what each task \
    needed, following the decisions both read. Combine, reorder or drop what the sides wrote; \
    add nothing of your own: every line you write must be in the base or in one of the sides \
    (blank lines aside). Answer only by calling submit_resolution.";

/// The tool the merger answers with.
fn tool() -> Tool {
    Tool {
        name: TOOL.to_owned(),
        description: "Submit the merged content of the file.".to_owned(),
        parameters: json!({
            "type": "object", "required": ["content"],
            "properties": {
                "content": {"type": "string", "description": "The file's whole merged content: every line from the base or one of the sides."},
                "explanation": {"type": "string", "description": "How the two sides were combined."}
            }
        }),
    }
}

/// The merger's brief: the file's three versions, both tasks and the decisions both read.
fn brief(
    s: &Services<'_>,
    order: &WorkOrder,
    submitted: &Submission,
    sides: &Sides<'_>,
) -> serde_json::Value {
    let other = sides.head_task.and_then(|t| s.intents.get(t));
    let mut decisions = order.decisions.clone();
    for d in other.iter().flat_map(|o| o.decisions.iter()) {
        if !decisions.iter().any(|x| x.id == d.id) {
            decisions.push(d.clone());
        }
    }
    json!({
        "path": sides.path,
        "base": sides.base,
        "landed": {
            "task": sides.head_task,
            "title": other.as_ref().map(|o| o.title.clone()),
            "instructions": other.as_ref().map(|o| o.instructions.clone()),
            "commit_message": sides.head_intent,
            "content": sides.head,
        },
        "submitted": {
            "task": order.task.id,
            "title": order.task.title,
            "instructions": order.task.instructions,
            "commit_message": submitted.message,
            "content": sides.mine,
        },
        "decisions": decisions,
    })
}

/// Asks the merger for one path's content.
async fn ask(
    s: &Services<'_>,
    order: &WorkOrder,
    submitted: &Submission,
    sides: &Sides<'_>,
) -> Result<Resolution, Merged> {
    let user = brief(s, order, submitted, sides);
    let req = specc_plan::ask::request(SYSTEM, &user, tool(), s.policy.worker_max_tokens);
    let check = |r: &Resolution| {
        let added = added_lines(&r.content, [sides.base, sides.head, sides.mine]);
        if added.is_empty() {
            return Vec::new();
        }
        let quoted: Vec<String> = added.iter().take(5).map(|l| format!("`{l}`")).collect();
        vec![
            Diagnostic::new(
                codes::MERGE_ADDS_LINES,
                format!(
                    "the resolution adds {} line(s) found in neither side: {}",
                    added.len(),
                    quoted.join(", ")
                ),
            )
            .with_help("write only lines of the base or of one of the sides"),
        ]
    };
    let task = format!("merge:{}", order.task.id);
    let asked = ForcedCall::new(Role::Merger, &task, req, TOOL)
        .check(&check)
        .repairs(1)
        .ask(s.client)
        .await;
    match asked {
        Ok(a) => Ok(a.answer),
        Err(PlanError::Model(e)) if e.is_stop() => Err(Merged::Budget),
        Err(PlanError::Model(e)) => Err(sent_back(sides.path, &format!("the merge agent: {e}"))),
        Err(PlanError::Invalid { problems, .. }) => Err(sent_back(
            sides.path,
            &problems
                .first()
                .map_or_else(|| "no resolution".to_owned(), |d| d.message.clone()),
        )),
        Err(PlanError::Unsettled(_) | PlanError::CallLimit(_)) => {
            Err(sent_back(sides.path, "no resolution"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(text: &str) -> FileAt {
        Some((text.as_bytes().to_vec(), false))
    }

    #[test]
    fn rebasing_one_path() {
        assert_eq!(rebase(&f("a\n"), &f("a\n"), &f("b\n")), Rebased::Take);
        assert_eq!(rebase(&f("a\n"), &f("b\n"), &f("b\n")), Rebased::Already);
        assert_eq!(
            rebase(&f("1\n2\n3\n"), &f("0\n2\n3\n"), &f("1\n2\n4\n")),
            Rebased::Merged("0\n2\n4\n".to_owned())
        );
        assert!(matches!(
            rebase(&f("1\n"), &f("2\n"), &f("3\n")),
            Rebased::Overlap { .. }
        ));
        assert!(matches!(
            rebase(&f("1\n"), &None, &f("3\n")),
            Rebased::Unmergeable(_)
        ));
    }

    #[test]
    fn a_mode_only_the_head_changed_is_kept() {
        let exec = |t: &str| Some((t.as_bytes().to_vec(), true));
        // The head made it executable; the writer did not touch the mode.
        assert!(merged_mode(&f("a\n"), &exec("b\n"), false));
        // The writer made it executable; the head did not.
        assert!(merged_mode(&f("a\n"), &f("b\n"), true));
        // Neither did.
        assert!(!merged_mode(&f("a\n"), &f("b\n"), false));
    }

    #[test]
    fn lines_of_neither_side_are_found() {
        let sides = ["a\nb\n", "a\nc\n", "a\nd\n"];
        assert!(added_lines("a\nc\nd\n\n", sides).is_empty());
        assert_eq!(added_lines("a\nc\nnew feature\n", sides), ["new feature"]);
    }
}
