//! One work task from start to landing: attempts (checkout → agent loop → acceptance →
//! submit) up the escalation ladder. Acceptance fails → the worker sees it once (in the
//! loop) → the planner re-plans the leaf with the failure → the `escalation` role's model,
//! if configured → the task fails. A submission that conflicts with work landed meanwhile
//! goes to the merge agent if a `merger` role is configured (`merge`); otherwise, or if the
//! merge agent sends it back, the task re-runs on the new head with the conflict shown (at
//! most [`MAX_CONFLICT_RERUNS`] times).
//! design: runtime.escalation
//! design: runtime.merge-agent
//! design: runtime.workspace

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::json;
use specc_llm::{Client, Role};
use specc_vcs::object::ObjectId;
use specc_vcs::{Outcome, Refusal, Repo, Submission};
use tracing::Instrument as _;

use crate::agent::{AgentLoop, AttemptId, AttemptLimits, LoopEnd};
use crate::context::{self, Retry, WorkOrder};
use crate::journal::{Journal, JournalError, StepKind};
use crate::runner::{CommandLimits, Runner};
use crate::scope::Scope;
use crate::tools::Toolbox;
use crate::{replan, workspace};

mod landing;
mod merging;
use landing::{reviewed, revisits};
use merging::merged;

/// Conflicts one task may meet before it fails.
pub const MAX_CONFLICT_RERUNS: u32 = 3;

/// What the build lends a task.
pub struct Services<'a> {
    pub client: &'a Client,
    pub journal: &'a Journal,
    pub repo: &'a Repo,
    pub runner: Arc<dyn Runner>,
    pub run: &'a str,
    /// `.specc/work/`: the checkout slots, and the commands' logs.
    pub work: PathBuf,
    /// The checkout slots under `work`.
    pub slots: &'a crate::slots::Slots,
    /// What each task intends: what the merge agent is told of both sides.
    pub intents: &'a crate::merge::Intents,
    /// `specc check` and `specc pin` on a checkout (the driver's), for deliberate breaks'
    /// revisits and the `pin` tool; `None`: no revisits.
    pub pins: Option<Arc<dyn crate::revisit::Pins>>,
    pub settings: &'a Settings,
    pub events: &'a dyn Fn(crate::Event),
    /// `specc serve`: leaves go to remote workers through it instead of running here.
    pub dispatch: Option<&'a crate::dispatch::Dispatch>,
}

/// Limits and switches of a build's attempts.
#[derive(Clone, Debug)]
pub struct Settings {
    pub attempt: AttemptLimits,
    /// For `run` commands and acceptance checks.
    pub commands: CommandLimits,
    pub guide_lines: usize,
    /// An `escalation` role is configured.
    pub escalation: bool,
    /// A `merger` role is configured: conflicts go to the merge agent, not back to the task.
    pub merger: bool,
    /// How landed tasks are reviewed (`[review]`; no lenses, no review).
    pub review: crate::review::ReviewConfig,
    pub worker_max_tokens: u32,
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskEnd {
    /// Landed (`None`: the task changed nothing).
    Landed {
        commit: Option<ObjectId>,
        merged: Vec<String>,
        attempts: u32,
        /// Tasks the reviewers' findings call for.
        followups: Vec<crate::review::FollowUp>,
        /// Files flagged for the megafile guard (by this task or before): each needs a split.
        flagged: Vec<crate::split::SplitNeed>,
    },
    /// The VCS refused to let a file grow past its line budget: the task waits for the
    /// file's split and runs again on top of it.
    Blocked {
        need: crate::split::SplitNeed,
        attempts: u32,
    },
    Failed {
        reason: String,
        attempts: u32,
    },
    /// The budget cap stopped it.
    Budget {
        attempts: u32,
    },
    /// The provider asked to wait: queue it again after `after` (its attempt is resumed).
    Parked {
        after: std::time::Duration,
    },
    /// The journal failed: the build must stop.
    Journal(JournalError),
}

/// The rungs of the escalation ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rung {
    Worker,
    Replanned,
    Escalation,
}

/// Carries out one work leaf. In a resumed run, its last attempt is done again from the
/// same base with the model responses it journaled (design: runtime.resume).
pub async fn run_task(s: &Services<'_>, mut order: WorkOrder) -> TaskEnd {
    let mut attempt = 0u32;
    let mut rung = Rung::Worker;
    let mut retry: Option<Retry> = None;
    let mut conflicts = 0u32;
    let mut resumed = resume(s, &mut order, &mut attempt, &mut rung);
    if let Some(id) = resumed.as_ref().and_then(|r| r.merged) {
        return TaskEnd::Landed {
            commit: Some(id),
            merged: Vec::new(),
            attempts: attempt + 1,
            followups: Vec::new(),
            flagged: Vec::new(),
        };
    }
    loop {
        attempt += 1;
        let role = if rung == Rung::Escalation {
            Role::Escalation
        } else {
            Role::Worker
        };
        let again = resumed.take();
        let mut notes = Notes::default();
        let ended = one_attempt(s, &order, attempt, role, retry.as_ref(), again, &mut notes);
        let span = tracing::error_span!("attempt", n = attempt, role = role.as_str());
        let failure = match ended.instrument(span).await {
            Attempted::Landed { commit, merged } => {
                let mut followups = match commit {
                    Some(id) => reviewed(s, &order, attempt, id).await,
                    None => Vec::new(),
                };
                if let Some(id) = commit.filter(|_| !notes.breaks.is_empty()) {
                    followups.extend(revisits(s, &order, &notes.breaks, id).await);
                }
                if !notes.contradictions.is_empty() {
                    let settled = crate::contradiction::settle(s, &order, &notes.contradictions);
                    followups.extend(settled.await);
                }
                let mut flagged = Vec::new();
                let mut paths = s.repo.flagged_now();
                paths.extend(notes.flagged.iter().cloned());
                paths.sort();
                paths.dedup();
                for path in paths {
                    flagged.extend(crate::split::need(s.repo, &path).await);
                }
                return TaskEnd::Landed {
                    commit,
                    merged,
                    attempts: attempt,
                    followups,
                    flagged,
                };
            }
            Attempted::Conflict { path, theirs } => {
                conflicts += 1;
                (s.events)(crate::Event::Conflict {
                    task: order.task.id.clone(),
                    path: path.clone(),
                });
                if conflicts > MAX_CONFLICT_RERUNS {
                    return TaskEnd::Failed {
                        reason: format!("{conflicts} conflicts in a row, the last in {path}"),
                        attempts: attempt,
                    };
                }
                retry = Some(Retry::Conflict { path, theirs });
                continue;
            }
            Attempted::Blocked(need) => {
                return TaskEnd::Blocked {
                    need,
                    attempts: attempt,
                };
            }
            Attempted::Refused(reason) | Attempted::Broken(reason) => {
                return TaskEnd::Failed {
                    reason,
                    attempts: attempt,
                };
            }
            Attempted::Budget => return TaskEnd::Budget { attempts: attempt },
            Attempted::Parked(after) => return TaskEnd::Parked { after },
            Attempted::Journal(e) => return TaskEnd::Journal(e),
            Attempted::Failed(f) => f,
        };
        (s.events)(crate::Event::AttemptFailed {
            task: order.task.id.clone(),
            attempt,
            reason: failure.clone(),
        });
        match rung {
            Rung::Worker => {
                rung = Rung::Replanned;
                // A re-plan journaled before the build died is not asked for again.
                let journaled = s.journal.replanned(s.run, &order.task.id, attempt + 1);
                let replanned = match journaled {
                    Ok(Some(instructions)) => Ok(instructions),
                    _ => replan::replan(s.client, &order, &failure).await,
                };
                match replanned {
                    Ok(instructions) => {
                        // Step 0 of the next attempt: the instructions it starts from.
                        let step = json!({"replanned": instructions, "after": failure});
                        if let Err(e) = s.journal.step(
                            s.run,
                            &order.task.id,
                            attempt + 1,
                            0,
                            StepKind::Replan,
                            &step,
                        ) {
                            return TaskEnd::Journal(e);
                        }
                        // A paid answer: committed before anything else happens.
                        if let Err(e) = s.journal.durable().await {
                            return TaskEnd::Journal(e);
                        }
                        order.task.instructions = instructions;
                        retry = Some(Retry::Failed { failure });
                    }
                    Err(e) if e.is_budget() => return TaskEnd::Budget { attempts: attempt },
                    Err(e) => {
                        tracing::warn!(task = %order.task.id, error = %e, "re-planning failed");
                        if !s.settings.escalation {
                            return TaskEnd::Failed {
                                reason: format!("{failure}; re-planning failed: {e}"),
                                attempts: attempt,
                            };
                        }
                        rung = Rung::Escalation;
                        retry = Some(Retry::Failed { failure });
                    }
                }
            }
            Rung::Replanned if s.settings.escalation => {
                rung = Rung::Escalation;
                retry = Some(Retry::Failed { failure });
            }
            Rung::Replanned | Rung::Escalation => {
                return TaskEnd::Failed {
                    reason: failure,
                    attempts: attempt,
                };
            }
        }
    }
}

/// How one attempt ended.
enum Attempted {
    Landed {
        commit: Option<ObjectId>,
        merged: Vec<String>,
    },
    Conflict {
        path: String,
        theirs: String,
    },
    Refused(String),
    /// Refused: a file of the head would pass the line budget; it needs a split first.
    Blocked(crate::split::SplitNeed),
    /// The worker's attempt failed: the next rung of the ladder may do better.
    Failed(String),
    /// specc's own machinery failed (the VCS, the checkout): no model can fix that, so the
    /// task fails without climbing the ladder.
    Broken(String),
    Budget,
    Parked(std::time::Duration),
    Journal(JournalError),
}

/// What an attempt's tools reported that outlives it: deliberate breaks and contradictions.
#[derive(Debug, Default)]
struct Notes {
    /// Files the worker flagged as too big: the VCS may not have published them yet when
    /// the task lands without a commit.
    flagged: Vec<String>,
    breaks: Vec<crate::revisit::Break>,
    contradictions: Vec<crate::contradiction::Contradiction>,
}

/// An attempt done again after the build died: its base and its journaled responses.
struct Resumed {
    base: ObjectId,
    replay: Vec<specc_llm::Response>,
    /// The merge agent landed the attempt before the build died: its commit.
    merged: Option<ObjectId>,
}

/// Where a task of a resumed run stands: its last attempt is to be done again (so
/// `attempt` is set one before it), on the rung it was on, with the instructions a re-plan
/// gave it. `None` when the task has no attempt in this run.
fn resume(
    s: &Services<'_>,
    order: &mut WorkOrder,
    attempt: &mut u32,
    rung: &mut Rung,
) -> Option<Resumed> {
    let task = order.task.id.clone();
    let last = s.journal.last_attempt(s.run, &task).ok().flatten()?;
    if last.state == "blocked" {
        // It waited for a split: the next attempt starts afresh on top of it.
        *attempt = last.attempt;
        return None;
    }
    let base = ObjectId::from_hex(&last.base)?;
    let replay = s.journal.model_responses(s.run, &task, last.attempt).ok()?;
    // A merge the agent landed is not done again: replaying would re-submit the conflicted
    // submission, pay the merger again and land a second commit.
    let merged = s
        .journal
        .attempt_steps(s.run, &task, last.attempt)
        .unwrap_or_default()
        .iter()
        .filter(|st| st.kind == "merge")
        .filter_map(|st| serde_json::from_str::<serde_json::Value>(&st.body).ok())
        .find_map(|b| {
            b["outcome"]["committed"]
                .as_str()
                .and_then(ObjectId::from_hex)
        });
    *attempt = last.attempt - 1;
    if let Ok(Some(instructions)) = s.journal.replanned(s.run, &task, last.attempt) {
        order.task.instructions = instructions;
        *rung = Rung::Replanned;
    }
    if last.role == Role::Escalation.as_str() {
        *rung = Rung::Escalation;
    }
    Some(Resumed {
        base,
        replay,
        merged,
    })
}

async fn one_attempt(
    s: &Services<'_>,
    order: &WorkOrder,
    attempt: u32,
    role: Role,
    retry: Option<&Retry>,
    resumed: Option<Resumed>,
    notes: &mut Notes,
) -> Attempted {
    let task = order.task.id.as_str();
    let (base, replay) = match resumed {
        Some(r) => (r.base, r.replay),
        None => match s.repo.head_now() {
            Some(head) => (head, Vec::new()),
            None => return Attempted::Broken("the VCS is unavailable".to_owned()),
        },
    };
    if let Err(e) = s
        .journal
        .start_attempt(s.run, task, attempt, role.as_str(), &base.hex())
    {
        return Attempted::Journal(e);
    }
    (s.events)(crate::Event::AttemptStarted {
        task: task.to_owned(),
        attempt,
        role: role.as_str().to_owned(),
    });
    let logs = workspace::logs_for(&s.work, task, attempt);
    let lease = match s.slots.lease(s.repo, base).await {
        Ok(l) => l,
        Err(e) => {
            return end(
                s,
                task,
                attempt,
                Attempted::Broken(format!("checkout: {e}")),
            );
        }
    };
    let dir = lease.dir.clone();
    let guide = crate::field_guide::load(&dir, s.settings.guide_lines).text;
    let scope = Scope::new(&order.task.write_scope);
    let tools = Toolbox {
        root: dir.clone(),
        scope: scope.clone(),
        runner: s.runner.clone(),
        limits: s.settings.commands.clone(),
        logs,
        guide_lines: s.settings.guide_lines,
        base: crate::tools::Base::new(s.repo.clone(), base),
        tracked: lease.tracked.clone(),
        pins: s.pins.clone(),
        breaks: std::sync::Mutex::new(Vec::new()),
        contradictions: std::sync::Mutex::new(Vec::new()),
    };
    let agent = AgentLoop {
        client: s.client,
        journal: s.journal,
        id: AttemptId {
            run: s.run,
            task,
            attempt,
            role,
        },
        tools: &tools,
        checks: &order.checks,
        limits: s.settings.attempt,
        max_tokens_per_call: s.settings.worker_max_tokens,
    };
    let ended = agent
        .run(context::messages(order, &guide, retry), replay)
        .await;
    let (summary, flagged, steps) = match ended {
        LoopEnd::Done {
            summary,
            flagged,
            steps,
        } => (summary, flagged, steps),
        LoopEnd::Failed {
            reason, flagged, ..
        } => {
            flag(s.repo, &flagged);
            return end(s, task, attempt, Attempted::Failed(reason));
        }
        LoopEnd::Budget(_) => return end(s, task, attempt, Attempted::Budget),
        LoopEnd::Parked(after) => return end(s, task, attempt, Attempted::Parked(after)),
        LoopEnd::Journal(e) => return Attempted::Journal(e),
    };
    flag(s.repo, &flagged);
    notes.flagged = flagged;
    notes.breaks = tools.breaks();
    notes.contradictions = tools
        .contradictions
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    // What lands: the write scope, and the files deliberate breaks patched.
    let scope = tools.landing_scope();
    let diff = match tools.tracked.known() {
        Some(paths) => workspace::diff_tracked(s.repo, base, &dir, &paths, &scope).await,
        None => match tools.base.files().await {
            Ok(files) => workspace::diff(&dir, files, &scope),
            Err(e) => Err(e),
        },
    };
    let diff = match diff {
        Ok(d) => d,
        Err(e) => return end(s, task, attempt, Attempted::Broken(format!("diff: {e}"))),
    };
    if diff.changes.is_empty() {
        let landed = Attempted::Landed {
            commit: None,
            merged: Vec::new(),
        };
        return end(s, task, attempt, landed);
    }
    let submission = Submission {
        base,
        message: format!("{}\n\n{}", order.task.title, summary.trim()),
        task: task.to_owned(),
        idempotency_key: format!("{}/{task}/{attempt}", s.run),
        changes: diff.changes.clone(),
    };
    let outcome = s.repo.submit(submission.clone()).await;
    let record =
        json!({"paths": diff.paths(), "left_out": diff.left_out, "outcome": describe(&outcome)});
    if let Err(e) = s
        .journal
        .step(s.run, task, attempt, steps + 1, StepKind::Submit, &record)
    {
        return Attempted::Journal(e);
    }
    let outcome = match outcome {
        Outcome::Conflict(c) if s.settings.merger => {
            return end(
                s,
                task,
                attempt,
                merged(s, order, &submission, &c, attempt, steps + 2).await,
            );
        }
        other => other,
    };
    let attempted = match outcome {
        Outcome::Committed { id, merged, .. } => Attempted::Landed {
            commit: Some(id),
            merged,
        },
        Outcome::Conflict(c) => Attempted::Conflict {
            path: c.path,
            theirs: c
                .head_intent
                .map(|m| m.lines().next().unwrap_or_default().to_owned())
                .unwrap_or_else(|| "another task's change".to_owned()),
        },
        Outcome::Refused(r) => refused(s, r).await,
    };
    end(s, task, attempt, attempted)
}

/// A refusal; one that keeps a file of the head from growing past the budget blocks the
/// task until the file is split.
async fn refused(s: &Services<'_>, r: Refusal) -> Attempted {
    if let Refusal::Megafile { path, .. } = &r
        && let Some(need) = crate::split::need(s.repo, path).await
    {
        return Attempted::Blocked(need);
    }
    Attempted::Refused(refusal(&r))
}

/// Journals how the attempt ended and passes the result on.
fn end(s: &Services<'_>, task: &str, attempt: u32, a: Attempted) -> Attempted {
    let (state, reason) = match &a {
        Attempted::Landed { .. } => ("landed", None),
        Attempted::Conflict { path, .. } => ("conflict", Some(format!("conflict in {path}"))),
        Attempted::Refused(r) => ("refused", Some(r.clone())),
        Attempted::Blocked(n) => (
            "blocked",
            Some(format!("{}{}", n.path, crate::split::BLOCKED_SUFFIX)),
        ),
        Attempted::Failed(r) => ("failed", Some(r.clone())),
        Attempted::Broken(r) => ("broken", Some(r.clone())),
        Attempted::Budget => ("stopped", Some("budget".to_owned())),
        Attempted::Parked(d) => (
            "parked",
            Some(format!("the provider asked to wait {} s", d.as_secs())),
        ),
        Attempted::Journal(_) => return a,
    };
    match s
        .journal
        .end_attempt(s.run, task, attempt, state, reason.as_deref())
    {
        Ok(()) => a,
        Err(e) => Attempted::Journal(e),
    }
}

fn flag(repo: &Repo, paths: &[String]) {
    for p in paths {
        repo.flag(p);
    }
}

fn describe(o: &Outcome) -> serde_json::Value {
    match o {
        Outcome::Committed { id, seq, merged } => {
            json!({"committed": id.hex(), "seq": seq, "merged": merged})
        }
        Outcome::Conflict(c) => json!({"conflict": c.path}),
        Outcome::Refused(r) => json!({"refused": refusal(r)}),
    }
}

/// A refusal in words.
pub(crate) fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::Megafile {
            path,
            lines,
            budget,
            ..
        } => format!(
            "the VCS refused the commit: {path} would have {lines} lines, over the budget of {budget} (split it first)"
        ),
        Refusal::UnknownBase => "the VCS refused the commit: unknown base".to_owned(),
        Refusal::Unavailable => "the VCS is unavailable".to_owned(),
        Refusal::ExpectedMismatch { path } => {
            format!("the VCS refused the commit: {path} is not what the base holds")
        }
        Refusal::InvalidPath { path } => format!("the VCS refused the path `{path}`"),
        Refusal::PathCollision { path } => {
            format!("the VCS refused `{path}`: a file and a directory collide")
        }
    }
}
