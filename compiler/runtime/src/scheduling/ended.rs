//! What the scheduler does as a leaf ends (lands, waits for a split, fails, stops or parks),
//! and the build's report once nothing runs.
//! design: runtime.scheduler

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use specc_state::TaskState;

use super::plan::{BuildReport, TaskReport};
use super::ready::{Scheduler, satisfied};
use crate::events::Event;
use crate::landing::SplitNeed;
use crate::task_end::{Landed, TaskEnd};

impl Scheduler<'_> {
    /// Takes in a finished leaf.
    pub(super) fn finish(&mut self, i: usize, end: TaskEnd, report: &mut BuildReport) {
        self.running.retain(|r| *r != i);
        self.s.landings.ended();
        match end {
            TaskEnd::Landed(l) => {
                self.attempts[i] = l.attempts;
                report.commits += usize::from(l.commit.is_some());
                report.merged.extend(l.merged.iter().cloned());
                self.landed(i, l);
            }
            TaskEnd::Blocked { need, attempts } => {
                self.attempts[i] = attempts;
                self.blocked_on(i, &need);
            }
            TaskEnd::Failed { reason, attempts } => {
                self.attempts[i] = attempts;
                self.set(i, TaskState::Failed, Some(&reason), None);
                let task = self.order[i].task.id.clone();
                (self.s.events)(Event::Failed { task, reason });
            }
            TaskEnd::Budget { attempts } => {
                let reason = (self.s.client.halted())
                    .unwrap_or_else(|| "the budget cap was reached".to_owned());
                self.attempts[i] = attempts;
                self.set(i, TaskState::Stopped, Some(&reason), None);
                self.stopped(i, reason);
            }
            TaskEnd::Parked { after } => self.parked(i, after),
            TaskEnd::Journal(e) => self.stopped(i, e.to_string()),
        }
    }

    /// A leaf landed: its splits needed, its dependents queued, its follow-ups added (one
    /// whose fingerprint landed before is up to date: the same finding on the same task).
    fn landed(&mut self, i: usize, l: Landed) {
        if l.replanned {
            self.replanned(i, Some(self.s.run));
        }
        for need in &l.flagged {
            self.split_for(need);
        }
        // The ladder's last attempt read the decisions settled by then, and landed with a
        // fingerprint over them: the order kept here reads them too.
        if let Some(o) = self.s.settled.apply(&self.order[i]) {
            self.order[i] = Arc::new(o);
        }
        let hex = l.commit.map(|c| c.hex());
        self.set(i, TaskState::Landed, None, hex.as_deref());
        if l.commit.is_some() {
            self.queue_dependents(i);
        }
        (self.s.events)(Event::Landed {
            task: self.order[i].task.id.clone(),
            commit: hex,
            merged: l.merged,
        });
        for f in l.followups {
            let added = self.add_new(f.order, &f.why, &[i]);
            let landed = self
                .s
                .journal
                .landed_fingerprint(&self.order[added].task.id);
            let done =
                landed.ok().flatten().as_deref() == Some(self.order[added].fingerprint.as_str());
            if done && self.state[added] == TaskState::Pending {
                self.set(added, TaskState::UpToDate, None, None);
            }
        }
    }

    /// Leaf `i` as its journaled re-plans of `run` left it (its instructions, checks and
    /// scope), so that its re-checks and the splits after it check what it landed with.
    fn replanned(&mut self, i: usize, run: Option<&str>) {
        let task = self.order[i].task.id.clone();
        let Ok(mut replans) = self.s.journal.replans(run, Some(&task)) else {
            return;
        };
        let mut order = (*self.order[i]).clone();
        let mut changed = false;
        for body in replans.remove(&task).unwrap_or_default() {
            changed |= crate::attempt::apply_journaled(&mut order, &body);
        }
        if changed {
            self.scopes[i] = crate::checkouts::Scope::new(&order.task.write_scope);
            self.order[i] = std::sync::Arc::new(order);
        }
    }

    /// The VCS refused a leaf's commit for a file over the line budget: it waits for the
    /// file's split, or fails when waiting would never end (a split refused for its own
    /// file, or a file still over the budget after its split landed).
    fn blocked_on(&mut self, i: usize, need: &SplitNeed) {
        let task = self.order[i].task.id.clone();
        let split = self.split_for(need);
        if split == i || satisfied(self.state[split]) {
            let reason = format!(
                "the VCS refused it: {} would pass the line budget even after its split",
                need.path
            );
            self.set(i, TaskState::Failed, Some(&reason), None);
            (self.s.events)(Event::Failed { task, reason });
            return;
        }
        // Runs again once the split has landed.
        self.wait_for(i, split);
        let reason = format!("waiting for {}", self.order[split].task.id);
        self.set(i, TaskState::Pending, Some(&reason), None);
        // Committed now: when the task runs again, it reads its attempt back.
        if let Err(e) = self.s.journal.commit() {
            self.stop(e.to_string());
        }
        (self.s.events)(Event::Blocked {
            task,
            path: need.path.clone(),
            split: self.order[split].task.id.clone(),
        });
    }

    /// The provider asked the leaf's call to wait: it is queued again after `after`.
    fn parked(&mut self, i: usize, after: std::time::Duration) {
        let reason = format!("parked: the provider asked to wait {} s", after.as_secs());
        self.set(i, TaskState::Pending, Some(&reason), None);
        // Committed now: when the task runs again, it reads its attempt back.
        if let Err(e) = self.s.journal.commit() {
            self.stop(e.to_string());
        }
        self.not_before.insert(i, Instant::now() + after);
        (self.s.events)(Event::Parked {
            task: self.order[i].task.id.clone(),
            seconds: after.as_secs(),
        });
    }

    /// A leaf ended because the build is stopping (`reason`): so does the build.
    fn stopped(&mut self, i: usize, reason: String) {
        (self.s.events)(Event::TaskStopped {
            task: self.order[i].task.id.clone(),
            reason: reason.clone(),
        });
        self.stop(reason);
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
