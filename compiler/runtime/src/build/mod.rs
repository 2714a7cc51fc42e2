//! One build: seed the repository with the plan's design documents, then run every work
//! leaf over the dependency DAG, up to `jobs` at once, never two with overlapping write
//! scopes, critical path first. A leaf starts when the leaves it depends on — its own
//! dependencies and its ancestors', a plan node standing for every leaf below it — have
//! landed. A failed leaf's dependents are skipped and everything else goes on; the budget
//! cap stops new work and lets running attempts end. A leaf whose fingerprint landed in an
//! earlier build is up to date.
//! design: runtime.scheduler

mod dag;
mod recheck;
mod sched;
mod seed;

use std::collections::BTreeMap;

use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use specc_ir::plan::{ChildKind, TaskNode};
use specc_vcs::object::ObjectId;
use tracing::Instrument as _;

pub use self::dag::{critical_path, dependencies};
use self::sched::Scheduler;
use crate::attempt::{self, Services, TaskEnd};
use crate::context::WorkOrder;
use crate::journal::TaskState;

/// What the build runs.
pub struct Plan {
    /// Every task of the Task IR (plan nodes too: dependencies may name them).
    pub tasks: Vec<TaskNode>,
    /// The work leaves, ready to run.
    pub orders: Vec<WorkOrder>,
    /// Files the repository must hold before any leaf runs (the planned design documents,
    /// the field guide's first text): path → content.
    pub seed: BTreeMap<String, String>,
    /// Leaves to run again even if up to date (`--force`).
    pub force: Vec<String>,
}

/// Something that happened, for progress output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Seeded {
        commit: Option<String>,
    },
    UpToDate {
        task: String,
    },
    /// An up-to-date leaf whose dependency landed again ran its checks on the new head:
    /// `passed`, it stays up to date; otherwise it runs again.
    Rechecked {
        task: String,
        passed: bool,
        reason: Option<String>,
    },
    /// A leaf that landed in an earlier build is no longer in the plan: its code stays.
    NoLongerPlanned {
        task: String,
    },
    AttemptStarted {
        task: String,
        attempt: u32,
        role: String,
    },
    AttemptFailed {
        task: String,
        attempt: u32,
        reason: String,
    },
    Conflict {
        task: String,
        path: String,
    },
    /// A conflicted submission went to the merge agent.
    Merging {
        task: String,
        path: String,
    },
    /// The merge agent's resolution landed (`paths`: the ones it resolved).
    Merged {
        task: String,
        paths: Vec<String>,
    },
    /// The merge agent did not resolve it: the task runs again on the new head.
    MergeSentBack {
        task: String,
        path: String,
        reason: String,
    },
    Landed {
        task: String,
        commit: Option<String>,
        merged: Vec<String>,
    },
    Failed {
        task: String,
        reason: String,
    },
    Skipped {
        task: String,
        because: String,
    },
    /// The provider asked a task's model call to wait: the task is queued again after
    /// `seconds`, its job slot free meanwhile.
    Parked {
        task: String,
        seconds: u64,
    },
    /// A worker of `task` found decisions `a` and `b` contradicting each other; the
    /// coordinator merged them and the merged text replaced both.
    DecisionsMerged {
        task: String,
        a: String,
        b: String,
    },
    /// The VCS refused to let `path` grow past its line budget: `task` waits for `split`.
    Blocked {
        task: String,
        path: String,
        split: String,
    },
    /// The build added a task while it ran: a reviewer's follow-up of `after`, or a split.
    FollowUp {
        task: String,
        after: Vec<String>,
        why: String,
    },
    /// A running task ended without landing because the build is stopping.
    TaskStopped {
        task: String,
        reason: String,
    },
    /// The build stops starting work (once).
    Stopped {
        reason: String,
    },
}

/// A leaf's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskReport {
    pub id: String,
    pub title: String,
    pub state: TaskState,
    pub reason: Option<String>,
    pub attempts: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildReport {
    pub tasks: Vec<TaskReport>,
    /// Commits landed by this build (the seed included).
    pub commits: usize,
    pub conflicts: usize,
    /// Paths that needed a 3-way merge when they landed.
    pub merged: Vec<String>,
    pub head: Option<ObjectId>,
    /// Leaves that landed before and are no longer in the plan (their code stays).
    pub no_longer_planned: Vec<String>,
    /// Why the build stopped early (budget, journal), if it did.
    pub stopped: Option<String>,
}

impl BuildReport {
    pub fn count(&self, state: TaskState) -> usize {
        self.tasks.iter().filter(|t| t.state == state).count()
    }
}

/// How long the build waits, with nothing to do, before it commits the writes its tasks
/// queued (a task's state, a landing) without a paid answer to carry them. A crash in
/// between loses none of the work: a landing is found again by its idempotency key.
/// design: perf.orchestration
const IDLE_COMMIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Runs the build.
pub async fn build(s: &Services<'_>, plan: Plan, jobs: usize) -> BuildReport {
    let mut report = BuildReport::default();
    match seed::seed(s, &plan.seed).await {
        Ok(commit) => {
            report.commits += usize::from(commit.is_some());
            (s.events)(Event::Seeded {
                commit: commit.map(|c| c.hex()),
            });
        }
        Err(e) => {
            report.stopped = Some(e);
            return report;
        }
    }
    report.no_longer_planned = no_longer_planned(s, &plan);
    s.intents.add(&plan.orders);
    let mut sched = Scheduler::new(s, &plan);
    let mut running = FuturesUnordered::new();
    loop {
        sched.skip_blocked();
        // A halted client (a signal) starts nothing more; running attempts end at their
        // next model call (design: runtime.graceful-stop).
        if let Some(why) = s.client.halted() {
            sched.stop(why);
        }
        if let Some(d) = s.dispatch.filter(|_| sched.stopping.is_some()) {
            d.stop();
        }
        if sched.stopping.is_none() {
            // Every job runs in a span naming its task: whatever it logs says which
            // (ERROR level, so the span is on whenever any event is; design: runtime.metrics).
            for (i, order) in sched.rechecks(jobs.max(1)) {
                let span = tracing::error_span!("recheck", task = %order.task.id);
                running.push(Box::pin(
                    async move { (i, Job::Rechecked(recheck::recheck(s, &order).await)) }
                        .instrument(span),
                )
                    as std::pin::Pin<Box<dyn std::future::Future<Output = _> + '_>>);
            }
            for (i, order) in sched.ready(jobs.max(1)) {
                let span = tracing::error_span!("task", task = %order.task.id);
                running.push(Box::pin(
                    async move {
                        let end = match s.dispatch {
                            // Critical path first, as here (design: state.deployment).
                            Some(d) => d.run_task(order, -(i as i64)).await,
                            None => attempt::run_task(s, (*order).clone()).await,
                        };
                        (i, Job::Ran(end))
                    }
                    .instrument(span),
                ));
            }
        }
        // While jobs are ready, take them. What they queued rides with the next paid
        // answer's commit; if none comes within `IDLE_COMMIT`, it is committed here.
        let next = match running.next().now_or_never() {
            Some(next) => next,
            None => match tokio::time::timeout(IDLE_COMMIT, running.next()).await {
                Ok(next) => next,
                Err(_) => {
                    if let Err(e) = s.journal.commit() {
                        sched.stop(e.to_string());
                    }
                    running.next().await
                }
            },
        };
        let Some((i, job)) = next else {
            // Nothing runs: wait for the earliest parked task, if any may still start.
            match sched.next_wake() {
                Some(at) if sched.stopping.is_none() => {
                    // Nothing else will carry what was queued while the build sleeps.
                    if let Err(e) = s.journal.commit() {
                        sched.stop(e.to_string());
                    }
                    // In steps of a second at most: a halt (a signal) is seen within one.
                    let step = std::time::Instant::now() + std::time::Duration::from_secs(1);
                    tokio::time::sleep_until(tokio::time::Instant::from_std(at.min(step))).await;
                    continue;
                }
                _ => break,
            }
        };
        match job {
            Job::Ran(end) => sched.finish(i, end, &mut report),
            Job::Rechecked(result) => sched.rechecked(i, result),
        }
    }
    if let Some(d) = s.dispatch {
        d.stop(); // workers asking for more are told the build is over
    }
    sched.report(report).await
}

/// What a finished job was.
enum Job {
    Ran(TaskEnd),
    Rechecked(Result<(), String>),
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

/// Leaves of `tasks`.
pub fn leaves(tasks: &[TaskNode]) -> impl Iterator<Item = &TaskNode> {
    tasks.iter().filter(|t| t.kind == ChildKind::Work)
}
