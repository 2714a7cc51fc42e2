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
mod seed;

use std::collections::{BTreeMap, HashMap};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use specc_ir::plan::{ChildKind, TaskNode};
use specc_vcs::object::ObjectId;

pub use self::dag::{critical_path, dependencies};
use crate::attempt::{self, Services, TaskEnd};
use crate::context::WorkOrder;
use crate::journal::{TaskRef, TaskState};
use crate::scope::Scope;

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
    let mut sched = Scheduler::new(s, &plan);
    let mut running = FuturesUnordered::new();
    loop {
        sched.skip_blocked();
        if sched.stopping.is_none() {
            for order in sched.rechecks(jobs.max(1)) {
                running.push(Box::pin(async move {
                    (order, Job::Rechecked(recheck::recheck(s, order).await))
                })
                    as std::pin::Pin<Box<dyn std::future::Future<Output = _> + '_>>);
            }
            for order in sched.ready(jobs.max(1)) {
                running.push(Box::pin(async move {
                    (order, Job::Ran(attempt::run_task(s, order.clone()).await))
                }));
            }
        }
        let Some((order, job)) = running.next().await else {
            // Nothing runs: wait for the earliest parked task, if any may still start.
            match sched.next_wake() {
                Some(at) if sched.stopping.is_none() => {
                    tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
                    continue;
                }
                _ => break,
            }
        };
        match job {
            Job::Ran(end) => sched.finish(order, end, &mut report),
            Job::Rechecked(result) => sched.rechecked(order, result),
        }
    }
    sched.report(report).await
}

/// What a finished job was.
enum Job {
    Ran(TaskEnd),
    Rechecked(Result<(), String>),
}

/// The scheduler's state: each leaf's state, the leaves running, and what ordering needs.
struct Scheduler<'p, 's> {
    s: &'s Services<'s>,
    /// Leaves, critical path first.
    order: Vec<&'p WorkOrder>,
    deps: HashMap<&'p str, Vec<String>>,
    scopes: HashMap<&'p str, Scope>,
    state: HashMap<String, TaskState>,
    attempts: HashMap<String, u32>,
    running: Vec<&'p str>,
    /// Up-to-date leaves waiting to re-run their checks, and how many are at it.
    to_recheck: Vec<&'p WorkOrder>,
    rechecking: usize,
    /// Parked tasks: not to start before then.
    not_before: HashMap<String, std::time::Instant>,
    stopping: Option<String>,
}

impl<'p, 's> Scheduler<'p, 's> {
    fn new(s: &'s Services<'s>, plan: &'p Plan) -> Scheduler<'p, 's> {
        let deps = dependencies(&plan.tasks, &plan.orders);
        let length = critical_path(&deps);
        let mut order: Vec<&WorkOrder> = plan.orders.iter().collect();
        order.sort_by_key(|o| std::cmp::Reverse(length.get(o.task.id.as_str()).copied()));
        let scopes = plan
            .orders
            .iter()
            .map(|o| (o.task.id.as_str(), Scope::new(&o.task.write_scope)))
            .collect();
        let mut sched = Scheduler {
            s,
            order,
            deps,
            scopes,
            state: HashMap::new(),
            attempts: HashMap::new(),
            running: Vec::new(),
            to_recheck: Vec::new(),
            rechecking: 0,
            not_before: HashMap::new(),
            stopping: None,
        };
        for o in &plan.orders {
            let t = &o.task;
            let landed = s.journal.landed_fingerprint(&t.id).ok().flatten();
            let forced = plan.force.contains(&t.id);
            let st = if landed.as_deref() == Some(o.fingerprint.as_str()) && !forced {
                (s.events)(Event::UpToDate { task: t.id.clone() });
                TaskState::UpToDate
            } else {
                TaskState::Pending
            };
            sched.set(o, st, None, None);
        }
        sched
    }

    /// Records `st` for `t`, in memory and in the journal. A journal that cannot record
    /// stops the build: its state would no longer be known.
    fn set(&mut self, o: &WorkOrder, st: TaskState, reason: Option<&str>, commit: Option<&str>) {
        let t = &o.task;
        self.state.insert(t.id.clone(), st);
        let task = TaskRef {
            id: &t.id,
            title: &t.title,
            fingerprint: &o.fingerprint,
        };
        if let Err(e) = self
            .s
            .journal
            .set_task(self.s.run, task, st, reason, commit)
        {
            self.stop(e.to_string());
        }
    }

    fn stop(&mut self, reason: String) {
        if self.stopping.is_none() {
            (self.s.events)(Event::Stopped {
                reason: reason.clone(),
            });
            self.stopping = Some(reason);
        }
    }

    fn is(&self, id: &str, states: &[TaskState]) -> bool {
        self.state.get(id).is_some_and(|st| states.contains(st))
    }

    /// When the earliest parked task that is still pending may start.
    fn next_wake(&self) -> Option<std::time::Instant> {
        self.not_before
            .iter()
            .filter(|(id, _)| self.is(id, &[TaskState::Pending]))
            .map(|(_, at)| *at)
            .min()
    }

    /// Takes up to the free job slots of the leaves waiting to re-run their checks; they
    /// count as running until the result is in (their dependents wait for it).
    fn rechecks(&mut self, jobs: usize) -> Vec<&'p WorkOrder> {
        let free = jobs.saturating_sub(self.running.len() + self.rechecking);
        let n = free.min(self.to_recheck.len());
        let taken: Vec<&WorkOrder> = self.to_recheck.drain(..n).collect();
        self.rechecking += taken.len();
        taken
    }

    /// Takes in a re-check's result.
    fn rechecked(&mut self, order: &WorkOrder, result: Result<(), String>) {
        self.rechecking -= 1;
        let task = order.task.id.clone();
        match result {
            Ok(()) => {
                self.set(order, TaskState::UpToDate, None, None);
                (self.s.events)(Event::Rechecked {
                    task,
                    passed: true,
                    reason: None,
                });
            }
            Err(reason) => {
                self.set(order, TaskState::Pending, Some(&reason), None);
                (self.s.events)(Event::Rechecked {
                    task,
                    passed: false,
                    reason: Some(reason),
                });
            }
        }
    }

    /// After `landed` landed again: every up-to-date leaf that depends on it, directly or
    /// through others, waits for a re-check (marked running, so its dependents wait too).
    fn queue_dependents(&mut self, landed: &str) {
        let mut frontier = vec![landed.to_owned()];
        while let Some(id) = frontier.pop() {
            for i in 0..self.order.len() {
                let o = self.order[i];
                let dep = &o.task.id;
                if self.deps[dep.as_str()].contains(&id) && self.is(dep, &[TaskState::UpToDate]) {
                    self.set(o, TaskState::Running, Some("re-checking"), None);
                    self.to_recheck.push(o);
                    frontier.push(dep.clone());
                }
            }
        }
    }

    /// Starts what may start: pending leaves whose dependencies landed and whose write
    /// scope overlaps no running leaf's, up to `jobs` running.
    fn ready(&mut self, jobs: usize) -> Vec<&'p WorkOrder> {
        let mut started = Vec::new();
        for i in 0..self.order.len() {
            if self.running.len() >= jobs {
                break;
            }
            if self.running.len() + self.rechecking >= jobs {
                break;
            }
            let o = self.order[i];
            let id = o.task.id.as_str();
            let waiting = self
                .not_before
                .get(id)
                .is_some_and(|at| *at > std::time::Instant::now());
            let ready = !waiting
                && self.is(id, &[TaskState::Pending])
                && self.deps[id]
                    .iter()
                    .all(|d| self.is(d, &[TaskState::Landed, TaskState::UpToDate]));
            let clash = self
                .running
                .iter()
                .any(|r| self.scopes[r].overlaps(&self.scopes[id]));
            if ready && !clash {
                self.set(o, TaskState::Running, None, None);
                self.running.push(id);
                started.push(o);
            }
        }
        started
    }

    /// Marks pending leaves whose dependencies failed or were skipped as skipped.
    fn skip_blocked(&mut self) {
        loop {
            let mut changed = false;
            for i in 0..self.order.len() {
                let o = self.order[i];
                let id = o.task.id.as_str();
                if !self.is(id, &[TaskState::Pending]) {
                    continue;
                }
                let blocker = self.deps[id]
                    .iter()
                    .find(|d| self.is(d, &[TaskState::Failed, TaskState::Skipped]))
                    .cloned();
                if let Some(b) = blocker {
                    let because = format!("depends on {b}, which did not land");
                    self.set(o, TaskState::Skipped, Some(&because), None);
                    (self.s.events)(Event::Skipped {
                        task: id.to_owned(),
                        because,
                    });
                    changed = true;
                }
            }
            if !changed {
                return;
            }
        }
    }

    /// Takes in a finished leaf.
    fn finish(&mut self, order: &WorkOrder, end: TaskEnd, report: &mut BuildReport) {
        let task = &order.task;
        self.running.retain(|r| *r != task.id);
        let id = task.id.clone();
        match end {
            TaskEnd::Landed {
                commit,
                merged,
                attempts,
            } => {
                report.commits += usize::from(commit.is_some());
                report.merged.extend(merged.iter().cloned());
                self.attempts.insert(id.clone(), attempts);
                let hex = commit.map(|c| c.hex());
                self.set(order, TaskState::Landed, None, hex.as_deref());
                if commit.is_some() {
                    self.queue_dependents(&task.id);
                }
                (self.s.events)(Event::Landed {
                    task: id,
                    commit: hex,
                    merged,
                });
            }
            TaskEnd::Failed { reason, attempts } => {
                self.attempts.insert(id.clone(), attempts);
                self.set(order, TaskState::Failed, Some(&reason), None);
                (self.s.events)(Event::Failed { task: id, reason });
            }
            TaskEnd::Budget { attempts } => {
                let reason = "the budget cap was reached".to_owned();
                self.attempts.insert(id.clone(), attempts);
                self.set(order, TaskState::Stopped, Some(&reason), None);
                (self.s.events)(Event::TaskStopped {
                    task: id,
                    reason: reason.clone(),
                });
                self.stop(reason);
            }
            TaskEnd::Parked { after } => {
                let reason = format!("parked: the provider asked to wait {} s", after.as_secs());
                self.set(order, TaskState::Pending, Some(&reason), None);
                self.not_before
                    .insert(id.clone(), std::time::Instant::now() + after);
                (self.s.events)(Event::Parked {
                    task: id,
                    seconds: after.as_secs(),
                });
            }
            TaskEnd::Journal(e) => {
                (self.s.events)(Event::TaskStopped {
                    task: id,
                    reason: e.clone(),
                });
                self.stop(e);
            }
        }
    }

    /// The report, once nothing runs: leaves never started are stopped.
    async fn report(mut self, mut report: BuildReport) -> BuildReport {
        let because = self
            .stopping
            .clone()
            .unwrap_or_else(|| "never became ready".to_owned());
        for i in 0..self.order.len() {
            let o = self.order[i];
            if self.is(&o.task.id, &[TaskState::Pending]) {
                self.set(o, TaskState::Stopped, Some(&because), None);
            }
        }
        let stats = self.s.repo.stats().await;
        report.head = stats.head;
        report.conflicts = stats.conflicts.iter().map(|(_, n)| *n as usize).sum();
        report.stopped = self.stopping.clone();
        let reasons: HashMap<String, Option<String>> = self
            .s
            .journal
            .tasks(self.s.run)
            .unwrap_or_default()
            .into_iter()
            .map(|r| (r.task, r.reason))
            .collect();
        let mut leaves: Vec<&WorkOrder> = self.order.clone();
        leaves.sort_by(|a, b| a.task.id.cmp(&b.task.id));
        for o in leaves {
            let id = &o.task.id;
            report.tasks.push(TaskReport {
                id: id.clone(),
                title: o.task.title.clone(),
                state: self.state.get(id).copied().unwrap_or(TaskState::Pending),
                reason: reasons.get(id).cloned().flatten(),
                attempts: self.attempts.get(id).copied().unwrap_or(0),
            });
        }
        report
    }
}

/// The leaves that landed in earlier builds and are not in `plan`.
fn no_longer_planned(s: &Services<'_>, plan: &Plan) -> Vec<String> {
    let planned: std::collections::HashSet<&str> =
        plan.orders.iter().map(|o| o.task.id.as_str()).collect();
    let gone: Vec<String> = s
        .journal
        .landed_tasks()
        .unwrap_or_default()
        .into_iter()
        .filter(|t| !planned.contains(t.as_str()))
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
