//! One build: seed the repository with the plan's design documents, then run every work
//! leaf over the dependency DAG, up to `jobs` at once, never two with overlapping write
//! scopes, critical path first. A leaf starts when the leaves it depends on — its own
//! dependencies and its ancestors', a plan node standing for every leaf below it — have
//! landed. A failed leaf's dependents are skipped and everything else goes on; the budget
//! cap stops new work and lets running attempts end. A leaf whose fingerprint landed in an
//! earlier build is up to date. The leaves run here ([`attempt::run_task`]) or, for `specc
//! serve`, on remote workers through a [`Dispatch`].
//!
//! The scheduler's state is `ready.rs` (made in `start.rs`, leaves taken in as they end in
//! `ended.rs`), the DAG `dag.rs`, the seed commit `seed.rs`, the
//! re-checks of dependents `recheck.rs`, what a build runs and reports `plan.rs`, and
//! serve's side of remote work `dispatch/`.
//! design: runtime.scheduler

mod dag;
pub(crate) mod dispatch;
mod ended;
mod landings;
mod plan;
mod ready;
mod recheck;
mod sections;
mod seed;
mod start;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use tracing::Instrument as _;

pub use self::dispatch::Dispatch;
pub use self::landings::Landings;
pub use self::plan::{BuildReport, Plan, TaskReport};
use self::ready::Scheduler;
use crate::attempt::{self, WorkOrder};
use crate::events::Event;
use crate::services::Services;
use crate::task_end::TaskEnd;

/// How long the build waits, with nothing to do, before it commits the writes its tasks
/// queued (a task's state, a landing) without a paid answer to carry them. A crash in
/// between loses none of the work: a landing is found again by its idempotency key.
/// design: perf.orchestration
const IDLE_COMMIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Where a build's leaves run.
#[derive(Clone, Copy)]
pub enum Workers<'a> {
    /// In this process, `jobs` at once.
    Local { jobs: usize },
    /// On `specc worker`s that claim them through `dispatch`, `offered` offered at once.
    Remote {
        dispatch: &'a Dispatch,
        offered: usize,
    },
}

impl Workers<'_> {
    /// Leaves started (or offered) at once.
    fn jobs(&self) -> usize {
        match self {
            Workers::Local { jobs } => *jobs,
            Workers::Remote { offered, .. } => *offered,
        }
        .max(1)
    }

    fn dispatch(&self) -> Option<&Dispatch> {
        match self {
            Workers::Local { .. } => None,
            Workers::Remote { dispatch, .. } => Some(dispatch),
        }
    }
}

/// What a finished job was.
enum Job {
    Ran(TaskEnd),
    Rechecked(Result<(), recheck::RecheckFailed>),
}

/// A running job: the leaf's index and how it ended.
type Running<'s> = Pin<Box<dyn Future<Output = (usize, Job)> + 's>>;

/// Runs the build.
pub async fn build(s: &Services<'_>, plan: Plan, workers: Workers<'_>) -> BuildReport {
    let mut report = BuildReport::default();
    match seed::seed(s, &plan.seed).await {
        Ok(commit) => {
            report.commits += usize::from(commit.is_some());
            (s.events)(Event::Seeded {
                commit: commit.map(|c| c.hex()),
            });
        }
        Err(e) => {
            report.stopped = Some(e.to_string());
            return report;
        }
    }
    report.no_longer_planned = no_longer_planned(s, &plan);
    s.intents.add(&plan.orders);
    s.landings.bound(workers.jobs());
    let mut sched = Scheduler::new(s, &plan);
    let mut running: FuturesUnordered<Running<'_>> = FuturesUnordered::new();
    loop {
        sched.skip_blocked();
        // A halted client (a signal) starts nothing more; running attempts end at their
        // next model call (design: runtime.graceful-stop).
        if let Some(why) = s.client.halted() {
            sched.stop(why);
        }
        if sched.stopping.is_some() {
            if let Some(d) = workers.dispatch() {
                d.stop();
            }
        } else {
            start_jobs(s, &mut sched, workers, &mut running);
        }
        let (i, job) = match next_job(s, &mut sched, &mut running).await {
            Next::Ended(i, job) => (i, job),
            Next::ToVcs => continue, // a job may be free
            Next::None => {
                if wait_for_parked(s, &mut sched).await {
                    continue;
                }
                break;
            }
        };
        match job {
            Job::Ran(end) => sched.finish(i, end, &mut report),
            Job::Rechecked(result) => sched.rechecked(i, result),
        }
    }
    if let Some(d) = workers.dispatch() {
        d.stop(); // workers asking for more are told the build is over
    }
    sched.report(report).await
}

/// Starts the re-checks and the leaves that may start now. Every job runs in a span naming
/// its task: whatever it logs says which (ERROR level, so the span is on whenever any
/// event is; design: runtime.metrics).
fn start_jobs<'s>(
    s: &'s Services<'s>,
    sched: &mut Scheduler<'_>,
    workers: Workers<'s>,
    running: &mut FuturesUnordered<Running<'s>>,
) {
    let jobs = workers.jobs();
    for (i, order) in sched.rechecks(jobs) {
        let span = tracing::error_span!("recheck", task = %order.task.id);
        running.push(Box::pin(
            async move { (i, Job::Rechecked(recheck::recheck(s, &order).await)) }.instrument(span),
        ));
    }
    for (i, order) in sched.ready(jobs) {
        let span =
            tracing::error_span!("task", task = %order.task.id, outcome = tracing::field::Empty);
        running.push(Box::pin(
            async move {
                let end = run_leaf(s, workers, order, i).await;
                // For the build's trace (design: runtime.traces).
                tracing::Span::current().record("outcome", end.word());
                (i, Job::Ran(end))
            }
            .instrument(span),
        ));
    }
}

/// Runs leaf `i` where the build's leaves run.
async fn run_leaf(
    s: &Services<'_>,
    workers: Workers<'_>,
    order: Arc<WorkOrder>,
    i: usize,
) -> TaskEnd {
    match workers.dispatch() {
        // Critical path first, as here (design: state.deployment).
        Some(d) => d.run_task(order, -(i as i64)).await,
        None => attempt::run_task(s, (*order).clone()).await,
    }
}

/// What the build's loop waits for.
enum Next {
    /// A job ended.
    Ended(usize, Job),
    /// An attempt went to the VCS: its job is free.
    ToVcs,
    /// No job runs.
    None,
}

/// The next job to end, or an attempt going to the VCS. While jobs are ready, take them:
/// what they queued rides with the next paid answer's commit; if none comes within
/// `IDLE_COMMIT`, it is committed here.
async fn next_job(
    s: &Services<'_>,
    sched: &mut Scheduler<'_>,
    running: &mut FuturesUnordered<Running<'_>>,
) -> Next {
    if let Some(next) = running.next().now_or_never() {
        return ended(next);
    }
    match tokio::time::timeout(IDLE_COMMIT, ended_or_to_vcs(s, running)).await {
        Ok(next) => next,
        Err(_) => {
            if let Err(e) = s.journal.commit() {
                sched.stop(e.to_string());
            }
            ended_or_to_vcs(s, running).await
        }
    }
}

/// The next job to end, or an attempt going to the VCS, whichever comes first.
async fn ended_or_to_vcs(s: &Services<'_>, running: &mut FuturesUnordered<Running<'_>>) -> Next {
    tokio::select! {
        next = running.next() => ended(next),
        () = s.landings.went.notified() => Next::ToVcs,
    }
}

fn ended(next: Option<(usize, Job)>) -> Next {
    next.map_or(Next::None, |(i, j)| Next::Ended(i, j))
}

/// With nothing running, waits for the earliest parked task if any may still start:
/// `false` when the build is over.
async fn wait_for_parked(s: &Services<'_>, sched: &mut Scheduler<'_>) -> bool {
    let Some(at) = sched.next_wake().filter(|_| sched.stopping.is_none()) else {
        return false;
    };
    // Nothing else will carry what was queued while the build sleeps.
    if let Err(e) = s.journal.commit() {
        sched.stop(e.to_string());
    }
    // In steps of a second at most: a halt (a signal) is seen within one.
    let step = std::time::Instant::now() + std::time::Duration::from_secs(1);
    tokio::time::sleep_until(tokio::time::Instant::from_std(at.min(step))).await;
    true
}

/// The leaves that landed in earlier builds and are not in `plan`.
fn no_longer_planned(s: &Services<'_>, plan: &Plan) -> Vec<String> {
    let planned: std::collections::HashSet<&str> =
        plan.orders.iter().map(|o| o.task.id.as_str()).collect();
    // Follow-ups were never in the plan: they do not leave it.
    let followups: std::collections::HashSet<String> = s
        .journal
        .followup_ids()
        .unwrap_or_default()
        .into_iter()
        .collect();
    let gone: Vec<String> = s
        .journal
        .landed_tasks()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| !planned.contains(t.as_str()) && !followups.contains(t))
        .collect();
    for task in &gone {
        (s.events)(Event::NoLongerPlanned { task: task.clone() });
    }
    gone
}
