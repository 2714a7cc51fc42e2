//! A build's scheduler as it starts: the leaves in critical-path order with their
//! dependencies, each leaf's first state (up to date when its fingerprint landed before),
//! and in a resumed run the follow-ups it had added and the leaves that waited for a split.
//! design: runtime.scheduler
//! design: perf.orchestration

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use specc_state::{TaskRef, TaskState};

use super::dag::{critical_path, dependencies};
use super::plan::Plan;
use super::ready::{Scheduler, task_ref};
use crate::attempt::WorkOrder;
use crate::checkouts::Scope;
use crate::events::Event;
use crate::landing::BLOCKED_SUFFIX;
use crate::services::Services;

/// The leaves in critical-path order, and each one's dependencies and dependents by index.
struct Ranked {
    order: Vec<Arc<WorkOrder>>,
    deps: Vec<Vec<usize>>,
    dependents: Vec<Vec<usize>>,
}

fn ranked(plan: &Plan) -> Ranked {
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
    Ranked {
        order,
        deps,
        dependents,
    }
}

impl<'s> Scheduler<'s> {
    pub(super) fn new(s: &'s Services<'s>, plan: &Plan) -> Scheduler<'s> {
        let Ranked {
            order,
            deps,
            dependents,
        } = ranked(plan);
        // The decisions settled in earlier builds, so that up to date means up to date with
        // them (design: runtime.contested-decisions).
        let order: Vec<Arc<WorkOrder>> = order
            .into_iter()
            .map(|o| s.settled.apply(&o).map_or(o, Arc::new))
            .collect();
        let n = order.len();
        let sections = super::sections::covering(&order);
        let mut sched = Scheduler {
            s,
            scopes: order
                .iter()
                .map(|o| Scope::new(&o.task.write_scope))
                .collect(),
            order,
            unmet: deps.iter().map(Vec::len).collect(),
            deps,
            dependents,
            state: vec![TaskState::Pending; n],
            ready: BTreeSet::new(),
            blocked: Vec::new(),
            attempts: vec![0; n],
            running: Vec::new(),
            to_recheck: VecDeque::new(),
            rechecking: 0,
            not_before: HashMap::new(),
            splits: HashMap::new(),
            sections,
            stopping: None,
        };
        let landed = s.journal.landed_fingerprints().unwrap_or_default();
        sched.first_states(&landed, &plan.force);
        sched.resume_followups(&landed);
        sched.resume_blocked(n);
        sched
    }

    /// Every leaf's first state, journaled in one transaction: up to date if it landed
    /// with this fingerprint (unless forced), else pending.
    fn first_states(&mut self, landed: &HashMap<String, String>, force: &[String]) {
        let s = self.s;
        let order: Vec<Arc<WorkOrder>> = self.order.clone();
        for (i, o) in order.iter().enumerate() {
            let up_to_date =
                landed.get(&o.task.id) == Some(&o.fingerprint) && !force.contains(&o.task.id);
            let st = if up_to_date {
                (s.events)(Event::UpToDate {
                    task: o.task.id.clone(),
                });
                TaskState::UpToDate
            } else {
                TaskState::Pending
            };
            self.transition(i, st);
        }
        // A leaf that was re-planned when it landed, and whose plan has not changed since,
        // is re-checked (or forced to run again) with what it landed with, not the plan's
        // checks and scope (design: runtime.disputes).
        let replans = s.journal.replans(None, None).unwrap_or_default();
        for (i, o) in order.iter().enumerate() {
            let Some(bodies) = replans.get(&o.task.id) else {
                continue;
            };
            if landed.get(&o.task.id) != Some(&o.fingerprint) {
                continue;
            }
            let mut o = (**o).clone();
            let mut changed = false;
            for body in bodies {
                changed |= crate::attempt::apply_journaled(&mut o, body);
            }
            if changed {
                self.scopes[i] = crate::checkouts::Scope::new(&o.task.write_scope);
                self.order[i] = Arc::new(o);
            }
        }
        let first: Vec<(TaskRef<'_>, TaskState)> = order
            .iter()
            .enumerate()
            .map(|(i, o)| (task_ref(o), self.state[i]))
            .collect();
        if let Err(e) = s.journal.set_tasks(s.run, &first) {
            self.stop(e.to_string());
        }
    }

    /// A resumed run's follow-ups, after the leaves they follow (a follow-up of a leaf no
    /// longer in the plan is dropped).
    fn resume_followups(&mut self, landed: &HashMap<String, String>) {
        let s = self.s;
        for (order, why) in s.journal.followups::<WorkOrder>(s.run).unwrap_or_default() {
            let after: Vec<usize> = order
                .task
                .dependencies
                .iter()
                .filter_map(|d| self.order.iter().position(|o| &o.task.id == d))
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
            let i = self.add(order, &why, &after);
            if up_to_date {
                self.set(i, TaskState::UpToDate, None, None);
            }
            if let Some(path) = split {
                self.splits.insert(path, i);
            }
        }
    }

    /// A leaf (of the first `n`) whose last attempt in this run was blocked waits for its
    /// file's split again, rather than paying for an attempt the VCS would refuse once more.
    fn resume_blocked(&mut self, n: usize) {
        if self.splits.is_empty() {
            return;
        }
        let s = self.s;
        for i in 0..n {
            let last = s.journal.last_attempt(s.run, &self.order[i].task.id);
            let Some(path) = last
                .ok()
                .flatten()
                .filter(|l| l.state == "blocked")
                .and_then(|l| l.reason)
                .and_then(|r| r.strip_suffix(BLOCKED_SUFFIX).map(str::to_owned))
            else {
                continue;
            };
            if let Some(&split) = self.splits.get(&path) {
                self.wait_for(i, split);
            }
        }
    }
}
