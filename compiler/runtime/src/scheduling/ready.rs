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

use super::recheck::RecheckFailed;
use crate::attempt::{Check, WorkOrder};
use crate::checkouts::Scope;
use crate::events::Event;
use crate::landing::{SplitNeed, split_order};
use crate::services::Services;

/// Whether a leaf's dependents may start: it landed, now or in an earlier build.
pub(super) fn satisfied(st: TaskState) -> bool {
    matches!(st, TaskState::Landed | TaskState::UpToDate)
}

fn blocks(st: TaskState) -> bool {
    matches!(st, TaskState::Failed | TaskState::Skipped)
}

pub(super) struct Scheduler<'s> {
    pub(super) s: &'s Services<'s>,
    /// Leaves, critical path first: a leaf's index is its rank (leaves added during the
    /// build, follow-ups, come last).
    pub(super) order: Vec<Arc<WorkOrder>>,
    pub(super) deps: Vec<Vec<usize>>,
    pub(super) dependents: Vec<Vec<usize>>,
    pub(super) scopes: Vec<Scope>,
    pub(super) state: Vec<TaskState>,
    /// Dependencies not landed (nor up to date).
    pub(super) unmet: Vec<usize>,
    /// Pending leaves with no unmet dependency, by rank.
    pub(super) ready: BTreeSet<usize>,
    /// Pending leaves that may have a failed or skipped dependency: to be looked at.
    pub(super) blocked: Vec<usize>,
    pub(super) attempts: Vec<u32>,
    pub(super) running: Vec<usize>,
    /// Up-to-date leaves waiting to re-run their checks, and how many are at it.
    pub(super) to_recheck: VecDeque<usize>,
    pub(super) rechecking: usize,
    /// Parked leaves: not to start before then.
    pub(super) not_before: HashMap<usize, Instant>,
    /// The split leaf of each file that needed one.
    pub(super) splits: HashMap<String, usize>,
    /// The leaves whose checks include each spec section's test blocks (`sections.rs`).
    pub(super) sections: HashMap<String, Vec<usize>>,
    pub(super) stopping: Option<String>,
}

impl<'s> Scheduler<'s> {
    /// The split leaf of `need.path`: the one already added, or a new one whose checks are
    /// those of the leaves that landed and may write the file.
    pub(super) fn split_for(&mut self, need: &SplitNeed) -> usize {
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
    pub(super) fn add_new(&mut self, mut order: WorkOrder, why: &str, after: &[usize]) -> usize {
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
        if let Err(e) = self
            .s
            .journal
            .add_followup(self.s.run, &order.task.id, &order, why)
        {
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
        self.note_sections(i);
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
    pub(super) fn wait_for(&mut self, i: usize, on: usize) {
        self.deps[i].push(on);
        self.dependents[on].push(i);
        if !satisfied(self.state[on]) {
            self.unmet[i] += 1;
            self.ready.remove(&i);
        }
    }

    /// Records `st` for leaf `i`, in memory and in the journal. A journal that cannot
    /// record stops the build: its state would no longer be known.
    pub(super) fn set(
        &mut self,
        i: usize,
        st: TaskState,
        reason: Option<&str>,
        commit: Option<&str>,
    ) {
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
    pub(super) fn transition(&mut self, i: usize, st: TaskState) {
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
        let free = jobs.saturating_sub(self.s.landings.taken() + self.rechecking);
        let n = free.min(self.to_recheck.len());
        let taken: Vec<usize> = self.to_recheck.drain(..n).collect();
        let taken: Vec<(usize, Arc<WorkOrder>)> = taken
            .into_iter()
            .map(|i| {
                let order = self.section_start(i, &[], false);
                (i, order.unwrap_or_else(|| self.order[i].clone()))
            })
            .collect();
        self.rechecking += taken.len();
        taken
    }

    /// Takes in a re-check's result.
    pub(super) fn rechecked(&mut self, i: usize, result: Result<(), RecheckFailed>) {
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
            Err(failed) => {
                let reason = failed.to_string();
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
    pub(super) fn queue_dependents(&mut self, landed: usize) {
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
    /// scope overlaps no running leaf's (at the VCS or not), and not the last of a section
    /// while the rest of it still runs (`sections.rs`), up to `jobs` working (an attempt at
    /// the VCS holds no job: `landings.rs`). Each with its order as it starts.
    pub(super) fn ready(&mut self, jobs: usize) -> Vec<(usize, Arc<WorkOrder>)> {
        let now = Instant::now();
        let mut picked: Vec<usize> = Vec::new();
        let mut started: Vec<Arc<WorkOrder>> = Vec::new();
        for &i in &self.ready {
            if self.s.landings.taken() + self.rechecking + picked.len() >= jobs {
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
            if clash {
                continue;
            }
            // A decision settled since the order was made: the leaf reads the settled text,
            // and lands with a fingerprint over it (design: runtime.contested-decisions).
            if let Some(o) = self.s.settled.apply(&self.order[i]) {
                self.order[i] = Arc::new(o);
            }
            if let Some(order) = self.section_start(i, &picked, true) {
                picked.push(i);
                started.push(order);
            }
        }
        self.s.landings.started(picked.len());
        picked
            .into_iter()
            .zip(started)
            .map(|(i, order)| {
                self.set(i, TaskState::Running, None, None);
                self.running.push(i);
                (i, order)
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
}

pub(super) fn task_ref(o: &WorkOrder) -> TaskRef<'_> {
    TaskRef {
        id: &o.task.id,
        title: &o.task.title,
        fingerprint: &o.fingerprint,
    }
}
