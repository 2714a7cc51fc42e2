//! The scheduler's state: each leaf's state, and what deciding the next leaf needs, kept so
//! that every event costs time in proportion to the leaves it touches, never to the plan:
//! leaves by index in critical-path order, each with its dependencies and dependents, a
//! count of its dependencies not yet landed, and the set of pending leaves whose count is
//! zero. A 10,000-leaf build must not scan 10,000 leaves per landing
//! (`cargo bench -p specc-tests --bench scheduler`).
//! design: runtime.scheduler
//! design: perf.orchestration

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

use specc_state::{TaskRef, TaskState};

use super::dag::{critical_path, dependencies};
use super::plan::{BuildReport, Plan, TaskReport};
use crate::attempt::{Check, WorkOrder};
use crate::checkouts::Scope;
use crate::events::Event;
use crate::landing::{BLOCKED_SUFFIX, SplitNeed, split_order};
use crate::services::Services;
use crate::task_end::TaskEnd;

/// Whether a leaf's dependents may start: it landed, now or in an earlier build.
fn satisfied(st: TaskState) -> bool {
    matches!(st, TaskState::Landed | TaskState::UpToDate)
}

fn blocks(st: TaskState) -> bool {
    matches!(st, TaskState::Failed | TaskState::Skipped)
}

pub(super) struct Scheduler<'s> {
    s: &'s Services<'s>,
    /// Leaves, critical path first: a leaf's index is its rank (leaves added during the
    /// build, follow-ups, come last).
    pub(super) order: Vec<Arc<WorkOrder>>,
    deps: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
    scopes: Vec<Scope>,
    state: Vec<TaskState>,
    /// Dependencies not landed (nor up to date).
    unmet: Vec<usize>,
    /// Pending leaves with no unmet dependency, by rank.
    ready: BTreeSet<usize>,
    /// Pending leaves that may have a failed or skipped dependency: to be looked at.
    blocked: Vec<usize>,
    attempts: Vec<u32>,
    running: Vec<usize>,
    /// Up-to-date leaves waiting to re-run their checks, and how many are at it.
    to_recheck: VecDeque<usize>,
    rechecking: usize,
    /// Parked leaves: not to start before then.
    not_before: HashMap<usize, Instant>,
    /// The split leaf of each file that needed one.
    splits: HashMap<String, usize>,
    pub(super) stopping: Option<String>,
}

impl<'s> Scheduler<'s> {
    pub(super) fn new(s: &'s Services<'s>, plan: &Plan) -> Scheduler<'s> {
        let by_id = dependencies(&plan.tasks, &plan.orders);
        let length = critical_path(&by_id);
        let mut order: Vec<&WorkOrder> = plan.orders.iter().collect();
        // Critical path first; ties in plan order (the sort is stable).
        order.sort_by_key(|o| std::cmp::Reverse(length.get(o.task.id.as_str()).copied()));
        let rank: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, o)| (o.task.id.as_str(), i))
            .collect();
        let order: Vec<Arc<WorkOrder>> = order.into_iter().map(|o| Arc::new(o.clone())).collect();
        let n = order.len();
        let mut deps = vec![Vec::new(); n];
        let mut dependents = vec![Vec::new(); n];
        for (i, o) in order.iter().enumerate() {
            for d in by_id.get(o.task.id.as_str()).into_iter().flatten() {
                if let Some(&j) = rank.get(d.as_str()) {
                    deps[i].push(j);
                    dependents[j].push(i);
                }
            }
        }
        let unmet = deps.iter().map(Vec::len).collect();
        let mut sched = Scheduler {
            s,
            scopes: order
                .iter()
                .map(|o| Scope::new(&o.task.write_scope))
                .collect(),
            order,
            deps,
            dependents,
            state: vec![TaskState::Pending; n],
            unmet,
            ready: BTreeSet::new(),
            blocked: Vec::new(),
            attempts: vec![0; n],
            running: Vec::new(),
            to_recheck: VecDeque::new(),
            rechecking: 0,
            not_before: HashMap::new(),
            splits: HashMap::new(),
            stopping: None,
        };
        let landed = s.journal.landed_fingerprints().unwrap_or_default();
        let mut first = Vec::with_capacity(n);
        for i in 0..n {
            let o = sched.order[i].clone();
            let up_to_date =
                landed.get(&o.task.id) == Some(&o.fingerprint) && !plan.force.contains(&o.task.id);
            let st = if up_to_date {
                (s.events)(Event::UpToDate {
                    task: o.task.id.clone(),
                });
                TaskState::UpToDate
            } else {
                TaskState::Pending
            };
            sched.transition(i, st);
            first.push(o);
        }
        let first: Vec<(TaskRef<'_>, TaskState)> = first
            .iter()
            .enumerate()
            .map(|(i, o)| (task_ref(o), sched.state[i]))
            .collect();
        // Every leaf's first state in one transaction.
        if let Err(e) = s.journal.set_tasks(s.run, &first) {
            sched.stop(e.to_string());
        }
        // A resumed run's follow-ups, after the leaves they follow (a follow-up of a leaf
        // no longer in the plan is dropped).
        for (order, why) in s.journal.followups::<WorkOrder>(s.run).unwrap_or_default() {
            let after: Vec<usize> = order
                .task
                .dependencies
                .iter()
                .filter_map(|d| sched.order.iter().position(|o| &o.task.id == d))
                .collect();
            let split = order
                .origin
                .as_deref()
                .and_then(|o| o.strip_prefix("split of "))
                .map(str::to_owned);
            if after.is_empty() && split.is_none() {
                continue;
            }
            let up_to_date = landed.get(&order.task.id) == Some(&order.fingerprint);
            let i = sched.add(order, &why, &after);
            if up_to_date {
                sched.set(i, TaskState::UpToDate, None, None);
            }
            if let Some(path) = split {
                sched.splits.insert(path, i);
            }
        }
        // A leaf whose last attempt in this run was blocked waits for its file's split again,
        // rather than paying for an attempt the VCS would refuse once more.
        if !sched.splits.is_empty() {
            for i in 0..n {
                let last = s.journal.last_attempt(s.run, &sched.order[i].task.id);
                let Some(path) = last
                    .ok()
                    .flatten()
                    .filter(|l| l.state == "blocked")
                    .and_then(|l| l.reason)
                    .and_then(|r| {
                        r.strip_suffix(BLOCKED_SUFFIX)
                            .map(str::to_owned)
                    })
                else {
                    continue;
                };
                if let Some(&split) = sched.splits.get(&path) {
                    sched.wait_for(i, split);
                }
            }
        }
        sched
    }

    /// The split leaf of `need.path`: the one already added, or a new one whose checks are
    /// those of the leaves that landed and may write the file.
    fn split_for(&mut self, need: &SplitNeed) -> usize {
        if let Some(&i) = self.splits.get(&need.path) {
            return i;
        }
        let mut checks: Vec<Check> = Vec::new();
        for (j, o) in self.order.iter().enumerate() {
            if satisfied(self.state[j]) && self.scopes[j].allows(&need.path) {
                for c in &o.checks {
                    if !checks.iter().any(|k| k.script == c.script) {
                        checks.push(c.clone());
                    }
                }
            }
        }
        let budget = self.s.repo.line_budget();
        let order = split_order(&need.path, need.lines, budget, &need.refs, checks);
        let why = format!("{} is over the line budget of {budget} lines", need.path);
        let i = self.add_new(order, &why, &[]);
        self.splits.insert(need.path.clone(), i);
        i
    }

    /// [`Scheduler::add`] for a leaf found while the build runs, journaled so that a resumed
    /// run schedules it again. A leaf of the same id and fingerprint is the one already
    /// added; another with the same id gets `-2`, `-3`, … so that two leaves never share an
    /// id (and with it an attempt's journal and idempotency keys).
    fn add_new(&mut self, mut order: WorkOrder, why: &str, after: &[usize]) -> usize {
        let id = order.task.id.clone();
        if let Some(j) = self
            .order
            .iter()
            .position(|o| o.task.id == id && o.fingerprint == order.fingerprint)
        {
            return j;
        }
        let mut n = 1;
        while self.order.iter().any(|o| o.task.id == order.task.id) {
            n += 1;
            order.task.id = format!("{id}-{n}");
        }
        if let Err(e) = self.s.journal.add_followup(self.s.run, &order.task.id, &order, why) {
            self.stop(e.to_string());
        }
        self.add(order, why, after)
    }

    /// Adds a leaf the build found it needs (a reviewer's follow-up, a split, a revisit),
    /// after leaves `after`; it is scheduled like any other. Returns its index.
    pub(super) fn add(&mut self, order: WorkOrder, why: &str, after: &[usize]) -> usize {
        let i = self.order.len();
        self.s.intents.add(std::slice::from_ref(&order));
        (self.s.events)(Event::FollowUp {
            task: order.task.id.clone(),
            after: after
                .iter()
                .map(|&d| self.order[d].task.id.clone())
                .collect(),
            why: why.to_owned(),
        });
        self.scopes.push(Scope::new(&order.task.write_scope));
        self.order.push(Arc::new(order));
        self.deps.push(after.to_vec());
        self.dependents.push(Vec::new());
        for &d in after {
            self.dependents[d].push(i);
        }
        let unmet = after.iter().filter(|&&d| !satisfied(self.state[d])).count();
        self.unmet.push(unmet);
        self.attempts.push(0);
        // Not pending yet, so that becoming pending files it as ready.
        self.state.push(TaskState::Stopped);
        self.set(i, TaskState::Pending, Some(why), None);
        i
    }

    /// Makes leaf `i` wait for leaf `on` as well.
    fn wait_for(&mut self, i: usize, on: usize) {
        self.deps[i].push(on);
        self.dependents[on].push(i);
        if !satisfied(self.state[on]) {
            self.unmet[i] += 1;
            self.ready.remove(&i);
        }
    }

    /// Records `st` for leaf `i`, in memory and in the journal. A journal that cannot
    /// record stops the build: its state would no longer be known.
    fn set(&mut self, i: usize, st: TaskState, reason: Option<&str>, commit: Option<&str>) {
        self.transition(i, st);
        let o = self.order[i].clone();
        if let Err(e) = self
            .s
            .journal
            .set_task(self.s.run, task_ref(&o), st, reason, commit)
        {
            self.stop(e.to_string());
        }
    }

    /// Moves leaf `i` to `st` in memory, keeping the counts and sets in step.
    fn transition(&mut self, i: usize, st: TaskState) {
        let old = std::mem::replace(&mut self.state[i], st);
        if old == TaskState::Pending {
            self.ready.remove(&i);
        }
        if satisfied(old) != satisfied(st) {
            for k in 0..self.dependents[i].len() {
                let d = self.dependents[i][k];
                if satisfied(st) {
                    self.unmet[d] -= 1;
                } else {
                    self.unmet[d] += 1;
                }
                if self.state[d] == TaskState::Pending {
                    if self.unmet[d] == 0 {
                        self.ready.insert(d);
                    } else {
                        self.ready.remove(&d);
                    }
                }
            }
        }
        if st == TaskState::Pending {
            if self.unmet[i] == 0 {
                self.ready.insert(i);
            }
            if self.deps[i].iter().any(|&d| blocks(self.state[d])) {
                self.blocked.push(i);
            }
        }
        if blocks(st) {
            for &d in &self.dependents[i] {
                if self.state[d] == TaskState::Pending {
                    self.blocked.push(d);
                }
            }
        }
    }

    pub(super) fn stop(&mut self, reason: String) {
        if self.stopping.is_none() {
            (self.s.events)(Event::Stopped {
                reason: reason.clone(),
            });
            self.stopping = Some(reason);
        }
    }

    /// When the earliest parked leaf that is still pending may start.
    pub(super) fn next_wake(&self) -> Option<Instant> {
        self.not_before
            .iter()
            .filter(|(i, _)| self.state[**i] == TaskState::Pending)
            .map(|(_, at)| *at)
            .min()
    }

    /// Takes up to the free job slots of the leaves waiting to re-run their checks; they
    /// count as running until the result is in (their dependents wait for it).
    pub(super) fn rechecks(&mut self, jobs: usize) -> Vec<(usize, Arc<WorkOrder>)> {
        let free = jobs.saturating_sub(self.running.len() + self.rechecking);
        let n = free.min(self.to_recheck.len());
        let taken: Vec<(usize, Arc<WorkOrder>)> = self
            .to_recheck
            .drain(..n)
            .map(|i| (i, self.order[i].clone()))
            .collect();
        self.rechecking += taken.len();
        taken
    }

    /// Takes in a re-check's result.
    pub(super) fn rechecked(&mut self, i: usize, result: Result<(), String>) {
        self.rechecking -= 1;
        let task = self.order[i].task.id.clone();
        match result {
            Ok(()) => {
                self.set(i, TaskState::UpToDate, None, None);
                (self.s.events)(Event::Rechecked {
                    task,
                    passed: true,
                    reason: None,
                });
            }
            Err(reason) => {
                self.set(i, TaskState::Pending, Some(&reason), None);
                (self.s.events)(Event::Rechecked {
                    task,
                    passed: false,
                    reason: Some(reason),
                });
            }
        }
    }

    /// After leaf `landed` landed again: every up-to-date leaf that depends on it, directly
    /// or through others, waits for a re-check (marked running, so its dependents wait too).
    fn queue_dependents(&mut self, landed: usize) {
        let mut frontier = vec![landed];
        while let Some(i) = frontier.pop() {
            for k in 0..self.dependents[i].len() {
                let d = self.dependents[i][k];
                if self.state[d] == TaskState::UpToDate {
                    self.set(d, TaskState::Running, Some("re-checking"), None);
                    self.to_recheck.push_back(d);
                    frontier.push(d);
                }
            }
        }
    }

    /// Starts what may start: ready leaves, critical path first, not parked, whose write
    /// scope overlaps no running leaf's, up to `jobs` running.
    pub(super) fn ready(&mut self, jobs: usize) -> Vec<(usize, Arc<WorkOrder>)> {
        let now = Instant::now();
        let mut picked: Vec<usize> = Vec::new();
        for &i in &self.ready {
            if self.running.len() + self.rechecking + picked.len() >= jobs {
                break;
            }
            if self.not_before.get(&i).is_some_and(|at| *at > now) {
                continue;
            }
            let clash = self
                .running
                .iter()
                .chain(&picked)
                .any(|&r| self.scopes[r].overlaps(&self.scopes[i]));
            if !clash {
                picked.push(i);
            }
        }
        picked
            .into_iter()
            .map(|i| {
                self.set(i, TaskState::Running, None, None);
                self.running.push(i);
                (i, self.order[i].clone())
            })
            .collect()
    }

    /// Marks pending leaves whose dependencies failed or were skipped as skipped.
    pub(super) fn skip_blocked(&mut self) {
        while let Some(i) = self.blocked.pop() {
            if self.state[i] != TaskState::Pending {
                continue;
            }
            let Some(&b) = self.deps[i].iter().find(|&&d| blocks(self.state[d])) else {
                continue;
            };
            let because = format!("depends on {}, which did not land", self.order[b].task.id);
            self.set(i, TaskState::Skipped, Some(&because), None);
            (self.s.events)(Event::Skipped {
                task: self.order[i].task.id.clone(),
                because,
            });
        }
    }

    /// Takes in a finished leaf.
    pub(super) fn finish(&mut self, i: usize, end: TaskEnd, report: &mut BuildReport) {
        self.running.retain(|r| *r != i);
        let id = self.order[i].task.id.clone();
        match end {
            TaskEnd::Landed {
                commit,
                merged,
                attempts,
                followups,
                flagged,
            } => {
                for need in &flagged {
                    self.split_for(need);
                }
                report.commits += usize::from(commit.is_some());
                report.merged.extend(merged.iter().cloned());
                self.attempts[i] = attempts;
                let hex = commit.map(|c| c.hex());
                self.set(i, TaskState::Landed, None, hex.as_deref());
                if commit.is_some() {
                    self.queue_dependents(i);
                }
                (self.s.events)(Event::Landed {
                    task: id.clone(),
                    commit: hex,
                    merged,
                });
                for f in followups {
                    let added = self.add_new(f.order, &f.why, &[i]);
                    // The same finding on the same task landed before: nothing to do.
                    let landed = self
                        .s
                        .journal
                        .landed_fingerprint(&self.order[added].task.id);
                    let done = landed.ok().flatten().as_deref()
                        == Some(self.order[added].fingerprint.as_str());
                    if done && self.state[added] == TaskState::Pending {
                        self.set(added, TaskState::UpToDate, None, None);
                    }
                }
            }
            TaskEnd::Blocked { need, attempts } => {
                self.attempts[i] = attempts;
                let split = self.split_for(&need);
                // A split refused for its own file, or a file still over the budget after its
                // split landed: waiting would never end.
                if split == i || satisfied(self.state[split]) {
                    let reason = format!(
                        "the VCS refused it: {} would pass the line budget even after its split",
                        need.path
                    );
                    self.set(i, TaskState::Failed, Some(&reason), None);
                    (self.s.events)(Event::Failed { task: id, reason });
                } else {
                    // Runs again once the split has landed.
                    self.wait_for(i, split);
                    let reason = format!("waiting for {}", self.order[split].task.id);
                    self.set(i, TaskState::Pending, Some(&reason), None);
                    // Committed now: when the task runs again, it reads its attempt back.
                    if let Err(e) = self.s.journal.commit() {
                        self.stop(e.to_string());
                    }
                    (self.s.events)(Event::Blocked {
                        task: id,
                        path: need.path.clone(),
                        split: self.order[split].task.id.clone(),
                    });
                }
            }
            TaskEnd::Failed { reason, attempts } => {
                self.attempts[i] = attempts;
                self.set(i, TaskState::Failed, Some(&reason), None);
                (self.s.events)(Event::Failed { task: id, reason });
            }
            TaskEnd::Budget { attempts } => {
                let reason = (self.s.client.halted())
                    .unwrap_or_else(|| "the budget cap was reached".to_owned());
                self.attempts[i] = attempts;
                self.set(i, TaskState::Stopped, Some(&reason), None);
                (self.s.events)(Event::TaskStopped {
                    task: id,
                    reason: reason.clone(),
                });
                self.stop(reason);
            }
            TaskEnd::Parked { after } => {
                let reason = format!("parked: the provider asked to wait {} s", after.as_secs());
                self.set(i, TaskState::Pending, Some(&reason), None);
                // Committed now: when the task runs again, it reads its attempt back.
                if let Err(e) = self.s.journal.commit() {
                    self.stop(e.to_string());
                }
                self.not_before.insert(i, Instant::now() + after);
                (self.s.events)(Event::Parked {
                    task: id,
                    seconds: after.as_secs(),
                });
            }
            TaskEnd::Journal(e) => {
                (self.s.events)(Event::TaskStopped {
                    task: id,
                    reason: e.to_string(),
                });
                self.stop(e.to_string());
            }
        }
    }

    /// The report, once nothing runs: leaves never started are stopped.
    pub(super) async fn report(mut self, mut report: BuildReport) -> BuildReport {
        let because = self
            .stopping
            .clone()
            .unwrap_or_else(|| "never became ready".to_owned());
        for i in 0..self.order.len() {
            if self.state[i] == TaskState::Pending {
                self.set(i, TaskState::Stopped, Some(&because), None);
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
        let mut leaves: Vec<usize> = (0..self.order.len()).collect();
        leaves.sort_by(|a, b| self.order[*a].task.id.cmp(&self.order[*b].task.id));
        for i in leaves {
            let o = self.order[i].clone();
            let id = &o.task.id;
            report.tasks.push(TaskReport {
                id: id.clone(),
                title: o.task.title.clone(),
                state: self.state[i],
                reason: reasons.get(id).cloned().flatten(),
                attempts: self.attempts[i],
            });
        }
        report
    }
}

fn task_ref(o: &WorkOrder) -> TaskRef<'_> {
    TaskRef {
        id: &o.task.id,
        title: &o.task.title,
        fingerprint: &o.fingerprint,
    }
}
