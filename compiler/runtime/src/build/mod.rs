//! One build: seed the repository with the plan's design documents, then run every work
//! leaf over the dependency DAG, up to `jobs` at once, never two with overlapping write
//! scopes, critical path first. A leaf starts when the leaves it depends on — its own
//! dependencies and its ancestors', a plan node standing for every leaf below it — have
//! landed. A failed leaf's dependents are skipped and everything else goes on; the budget
//! cap stops new work and lets running attempts end. A leaf whose fingerprint landed in an
//! earlier build is up to date.
//! design: runtime.scheduler

mod dag;
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
    let mut sched = Scheduler::new(s, &plan);
    let mut running = FuturesUnordered::new();
    loop {
        sched.skip_blocked();
        if sched.stopping.is_none() {
            for order in sched.ready(jobs.max(1)) {
                running.push(async move {
                    let end = attempt::run_task(s, order.clone()).await;
                    (order, end)
                });
            }
        }
        let Some((order, end)) = running.next().await else {
            break;
        };
        sched.finish(&order.task, end, &mut report);
    }
    sched.report(report).await
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
            stopping: None,
        };
        for o in &plan.orders {
            let t = &o.task;
            let landed = s.journal.landed_fingerprint(&t.id).ok().flatten();
            let st = if landed.as_deref() == Some(t.fingerprint.as_str()) {
                (s.events)(Event::UpToDate { task: t.id.clone() });
                TaskState::UpToDate
            } else {
                TaskState::Pending
            };
            sched.set(t, st, None, None);
        }
        sched
    }

    /// Records `st` for `t`, in memory and in the journal. A journal that cannot record
    /// stops the build: its state would no longer be known.
    fn set(&mut self, t: &TaskNode, st: TaskState, reason: Option<&str>, commit: Option<&str>) {
        self.state.insert(t.id.clone(), st);
        let task = TaskRef {
            id: &t.id,
            title: &t.title,
            fingerprint: &t.fingerprint,
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

    /// Starts what may start: pending leaves whose dependencies landed and whose write
    /// scope overlaps no running leaf's, up to `jobs` running.
    fn ready(&mut self, jobs: usize) -> Vec<&'p WorkOrder> {
        let mut started = Vec::new();
        for i in 0..self.order.len() {
            if self.running.len() >= jobs {
                break;
            }
            let o = self.order[i];
            let id = o.task.id.as_str();
            let ready = self.is(id, &[TaskState::Pending])
                && self.deps[id]
                    .iter()
                    .all(|d| self.is(d, &[TaskState::Landed, TaskState::UpToDate]));
            let clash = self
                .running
                .iter()
                .any(|r| self.scopes[r].overlaps(&self.scopes[id]));
            if ready && !clash {
                self.set(&o.task, TaskState::Running, None, None);
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
                    self.set(&o.task, TaskState::Skipped, Some(&because), None);
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
    fn finish(&mut self, task: &TaskNode, end: TaskEnd, report: &mut BuildReport) {
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
                self.set(task, TaskState::Landed, None, hex.as_deref());
                (self.s.events)(Event::Landed {
                    task: id,
                    commit: hex,
                    merged,
                });
            }
            TaskEnd::Failed { reason, attempts } => {
                self.attempts.insert(id.clone(), attempts);
                self.set(task, TaskState::Failed, Some(&reason), None);
                (self.s.events)(Event::Failed { task: id, reason });
            }
            TaskEnd::Budget { attempts } => {
                let reason = "the budget cap was reached".to_owned();
                self.attempts.insert(id.clone(), attempts);
                self.set(task, TaskState::Stopped, Some(&reason), None);
                (self.s.events)(Event::TaskStopped {
                    task: id,
                    reason: reason.clone(),
                });
                self.stop(reason);
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
            let t = &self.order[i].task;
            if self.is(&t.id, &[TaskState::Pending]) {
                self.set(t, TaskState::Stopped, Some(&because), None);
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

/// Leaves of `tasks`.
pub fn leaves(tasks: &[TaskNode]) -> impl Iterator<Item = &TaskNode> {
    tasks.iter().filter(|t| t.kind == ChildKind::Work)
}
