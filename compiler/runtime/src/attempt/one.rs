//! One attempt: its start journaled, a checkout slot of its base leased, the tools bound to
//! it, the agent loop run, the checkout's difference from the base submitted to the VCS,
//! and its outcome (a conflict handed to the merge agent when one is configured).
//! design: runtime.escalation
//! design: runtime.merge-agent
//! design: runtime.workspace

use serde_json::json;
use specc_llm::{Response, Role};
use specc_state::{JournalError, StepKind};
use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Outcome, Submission};

use super::agent::{AgentLoop, AttemptId, LoopEnd};
use super::carry::carry;
use super::context::{self, CarriedNote, Retry, WorkOrder};
use super::ending::{Attempted, Failure, Notes, describe, end, flag, refused, theirs};
use super::handoff::merged;
use super::resume::Resumed;
use crate::checkouts::{Diff, Lease, Scope, logs_for};
use crate::events::Event;
use crate::services::{OnConflict, Services};
use crate::tools::{Base, Toolbox};

/// What one attempt starts from besides its task.
pub(super) struct Start<'a> {
    pub(super) attempt: u32,
    pub(super) role: Role,
    /// Why there is this attempt, when it is not the first.
    pub(super) retry: Option<&'a Retry>,
    /// The earlier attempt's work, written into the checkout first.
    pub(super) carried: &'a [Change],
    /// A journaled attempt to do again.
    pub(super) resumed: Option<Resumed>,
}

/// Makes attempt `start.attempt` of `order`. What its tools reported that outlives it goes
/// into `notes`.
pub(super) async fn one_attempt(
    s: &Services<'_>,
    order: &WorkOrder,
    how: Start<'_>,
    notes: &mut Notes,
) -> Attempted {
    let Start {
        attempt,
        role,
        retry,
        carried,
        resumed,
    } = how;
    let task = order.task.id.as_str();
    let (base, replay) = match start(s, task, attempt, role, resumed) {
        Ok(started) => started,
        Err(a) => return a,
    };
    let (lease, tools, carried) = match checkout(s, order, base, attempt, carried).await {
        Ok(ready) => ready,
        Err(e) => {
            return end(
                s,
                task,
                attempt,
                Attempted::Broken(format!("checkout: {e}")),
            );
        }
    };
    let guide = guide(&lease, s.policy.guide_lines);
    let opening = match opening(s, order, attempt, &guide, retry, carried.as_ref()) {
        Ok(opening) => opening,
        Err(e) => return Attempted::Journal(e),
    };
    let (covers, allowance) = covers_and_allowance(order);
    let ended = agent(s, order, (attempt, role), &tools, (&covers, &allowance))
        .run(opening, replay)
        .await;
    // Flags reach the VCS, which makes them durable: the answers that asked for them are
    // committed first (design: llm.answer-durability). The loop waited at its other ends.
    let flags = matches!(&ended, LoopEnd::Done { flagged, .. } if !flagged.is_empty());
    if flags && let Err(e) = s.client.durable().await {
        return Attempted::Journal(e.into());
    }
    let (summary, steps, diff) = match done(s, ended, notes) {
        Ok(done) => done,
        Err(Attempted::Journal(e)) => return Attempted::Journal(e),
        Err(Attempted::Failed(mut f)) if f.keep => {
            // Failed in its checks (or disputed one): its in-scope work is kept for the next
            // attempt (design: runtime.carried-work); none if it cannot be read.
            if let Ok(d) = tools.landing_diff().await {
                f.work = d.changes;
            }
            return end(s, task, attempt, Attempted::Failed(f));
        }
        Err(other) => return end(s, task, attempt, other),
    };
    notes.breaks = tools.breaks();
    notes.contradictions = tools
        .contradictions
        .lock()
        .map(|c| c.clone())
        .unwrap_or_default();
    if diff.changes.is_empty() {
        let landed = Attempted::Landed {
            commit: None,
            merged: Vec::new(),
        };
        return end(s, task, attempt, landed);
    }
    let submission = submission(s, order, (base, attempt), &summary, &diff);
    let ends = ends_at_landing(s, notes);
    // The change is in memory: the slot goes back to the pool before the landing, so an
    // attempt at the VCS holds neither a job nor a checkout.
    drop(tools);
    drop(lease);
    let submitted = submit(s, order, &submission, &diff, (attempt, steps), ends).await;
    end(s, task, attempt, submitted)
}

/// What the attempt submits: its diff on its base, under the task's title and the
/// worker's summary.
fn submission(
    s: &Services<'_>,
    order: &WorkOrder,
    (base, attempt): (ObjectId, u32),
    summary: &str,
    diff: &Diff,
) -> Submission {
    let task = order.task.id.as_str();
    Submission {
        base,
        message: format!("{}\n\n{}", order.task.title, summary.trim()),
        task: task.to_owned(),
        idempotency_key: format!("{}/{task}/{attempt}", s.run),
        changes: diff.changes.clone(),
    }
}

/// Landed with nothing to follow (no review, no revisit, no contradiction), the attempt
/// ends at once: it takes its job back without waiting for one.
fn ends_at_landing(s: &Services<'_>, notes: &Notes) -> bool {
    let review = &s.policy.review;
    (review.lenses.is_empty() || review.sample <= 0.0)
        && notes.breaks.is_empty()
        && notes.contradictions.is_empty()
}

/// A leased checkout of `base`, the tools bound to it, and the earlier attempt's work
/// written into it (with the note the worker is told about it).
async fn checkout<'s>(
    s: &'s Services<'_>,
    order: &WorkOrder,
    base: ObjectId,
    attempt: u32,
    carried: &[Change],
) -> std::io::Result<(Lease<'s>, Toolbox, Option<CarriedNote>)> {
    let lease = s.slots.lease_lazily(s.repo, base).await?;
    let tools = toolbox(s, order, &lease, base, attempt);
    if carried.is_empty() {
        return Ok((lease, tools, None));
    }
    tools.ready().await?;
    let note = carry(
        s.repo,
        base,
        &lease.dir,
        &tools.tracked,
        (carried, &tools.scope),
    )
    .await?;
    Ok((lease, tools, Some(note)))
}

/// The requirement ids the task covers, and the text a worker's scope is allowed by (its
/// instructions and decisions).
fn covers_and_allowance(order: &WorkOrder) -> (Vec<String>, String) {
    let covers = order.requirements.iter().map(|r| r.id.clone()).collect();
    let allowance = std::iter::once(order.task.instructions.as_str())
        .chain(order.decisions.iter().map(|d| d.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    (covers, allowance)
}

/// The agent loop of one attempt, over its tools.
fn agent<'a>(
    s: &'a Services<'_>,
    order: &'a WorkOrder,
    (attempt, role): (u32, Role),
    tools: &'a Toolbox,
    (covers, allowance): (&'a [String], &'a str),
) -> AgentLoop<'a> {
    AgentLoop {
        client: s.client,
        journal: s.journal,
        id: AttemptId {
            run: s.run,
            task: order.task.id.as_str(),
            attempt,
            role,
        },
        tools,
        checks: &order.checks,
        covers,
        allowance,
        limits: s.policy.attempt,
        max_tokens_per_call: s.policy.worker_max_tokens,
        events: s.events,
        decisions: &order.decisions,
        settled: &s.settled,
        spec: &s.spec,
    }
}

/// The attempt's opening messages. A resumed attempt says again what it said (as
/// journaled), so a killed and resumed build sends the requests an uninterrupted one does
/// (design: runtime.resume); a new one is told its task, journaled for `specc show`.
fn opening(
    s: &Services<'_>,
    order: &WorkOrder,
    attempt: u32,
    guide: &str,
    retry: Option<&Retry>,
    carried: Option<&CarriedNote>,
) -> Result<Vec<specc_llm::Message>, JournalError> {
    let task = order.task.id.as_str();
    let journaled = s
        .journal
        .journaled_context(s.run, task, attempt)?
        .and_then(|v| serde_json::from_value::<Vec<specc_llm::Message>>(v).ok());
    if let Some(opening) = journaled {
        return Ok(opening);
    }
    let opening = context::messages(order, guide, s.repo.line_budget(), retry, carried);
    s.journal
        .attempt_context(s.run, task, attempt, &json!(opening))?;
    Ok(opening)
}

/// The loop's end: its summary, last step and what lands when the worker is done and the
/// checks passed (the files it flagged flagged), else how the attempt ended.
fn done(
    s: &Services<'_>,
    ended: LoopEnd,
    notes: &mut Notes,
) -> Result<(String, u32, Diff), Attempted> {
    match ended {
        LoopEnd::Done {
            summary,
            flagged,
            steps,
            diff,
        } => {
            flag(s.repo, &flagged);
            notes.flagged = flagged;
            Ok((summary, steps, diff))
        }
        LoopEnd::Failed {
            reason,
            flagged,
            checks,
        } => {
            flag(s.repo, &flagged);
            Err(Attempted::Failed(Failure {
                keep: checks.is_some(),
                detail: checks.unwrap_or_default(),
                ..Failure::new(reason)
            }))
        }
        LoopEnd::Disputed { dispute, flagged } => {
            flag(s.repo, &flagged);
            Err(Attempted::Failed(Failure {
                reason: format!("disputed {}: {}", dispute.check, dispute.evidence.trim()),
                dispute: Some(dispute),
                keep: true,
                ..Failure::default()
            }))
        }
        LoopEnd::Budget => Err(Attempted::Budget),
        LoopEnd::Parked(after) => Err(Attempted::Parked(after)),
        LoopEnd::Journal(e) => Err(Attempted::Journal(e)),
    }
}

/// Journals the attempt's start and says so: its base (a resumed attempt's, or the head)
/// and the responses to replay.
fn start(
    s: &Services<'_>,
    task: &str,
    attempt: u32,
    role: Role,
    resumed: Option<Resumed>,
) -> Result<(ObjectId, Vec<Response>), Attempted> {
    let (base, replay) = match resumed {
        Some(r) => (r.base, r.replay),
        None => match s.repo.head_now() {
            Some(head) => (head, Vec::new()),
            None => return Err(Attempted::Broken("the VCS is unavailable".to_owned())),
        },
    };
    s.journal
        .start_attempt(s.run, task, attempt, role.as_str(), &base.hex())
        .map_err(Attempted::Journal)?;
    (s.events)(Event::AttemptStarted {
        task: task.to_owned(),
        attempt,
        role: role.as_str().to_owned(),
    });
    Ok((base, replay))
}

/// The field guide at the lease's base: read from its directory, or from what the
/// directory still owes the base (design: runtime.lazy-checkouts).
fn guide(lease: &Lease<'_>, lines: usize) -> String {
    use specc_plan::field_guide::{PATH, from_bytes, load};
    match lease.tracked.owed(PATH) {
        None => load(&lease.dir, lines).text,
        Some(None) => String::new(),
        Some(Some((bytes, _))) => from_bytes(&lease.dir.join(PATH), bytes, lines).text,
    }
}

/// The attempt's tools, bound to its leased checkout of `base`.
fn toolbox(
    s: &Services<'_>,
    order: &WorkOrder,
    lease: &Lease<'_>,
    base: ObjectId,
    attempt: u32,
) -> Toolbox {
    Toolbox {
        root: lease.dir.clone(),
        scope: Scope::new(&order.task.write_scope),
        runner: s.runner.clone(),
        limits: s.policy.commands.clone(),
        logs: logs_for(&s.work, &order.task.id, attempt),
        guide_lines: s.policy.guide_lines,
        base: Base::new(s.repo.clone(), base),
        tracked: lease.tracked.clone(),
        pins: s.pins.clone(),
        breaks: std::sync::Mutex::new(Vec::new()),
        contradictions: std::sync::Mutex::new(Vec::new()),
        git: Default::default(),
    }
}

/// Submits the attempt's change, journals the outcome (the step after the loop's last), and
/// hands a conflict to the merge agent when one is configured.
async fn submit(
    s: &Services<'_>,
    order: &WorkOrder,
    submission: &Submission,
    diff: &Diff,
    (attempt, steps): (u32, u32),
    ends: bool,
) -> Attempted {
    let task = order.task.id.as_str();
    // At the VCS, the attempt holds no job (design: runtime.scheduler).
    let at_vcs = s.landings.to_vcs();
    // The worker's last answer is committed before its work leaves the attempt; the
    // attempt waits for that here, holding no job (design: llm.answer-durability).
    if let Err(e) = s.client.durable().await {
        at_vcs.back(false).await;
        return Attempted::Journal(e.into());
    }
    let outcome = s.repo.submit(submission.clone()).await;
    at_vcs
        .back(ends && matches!(outcome, Outcome::Committed { .. }))
        .await;
    let record = json!({"paths": diff.paths(), "left_out": diff.left_out, "generated": diff.generated,
               "outcome": describe(&outcome)});
    if let Err(e) = s
        .journal
        .step(s.run, task, attempt, steps + 1, StepKind::Submit, &record)
    {
        return Attempted::Journal(e);
    }
    match outcome {
        Outcome::Conflict(c) if s.policy.on_conflict == OnConflict::MergeAgent => {
            merged(s, order, submission, &c, attempt, steps + 2).await
        }
        Outcome::Committed { id, merged, .. } => Attempted::Landed {
            commit: Some(id),
            merged,
        },
        Outcome::Conflict(c) => Attempted::Conflict {
            path: c.path,
            theirs: theirs(c.head_intent),
        },
        Outcome::Refused(r) => refused(s, r, &submission.changes).await,
    }
}
