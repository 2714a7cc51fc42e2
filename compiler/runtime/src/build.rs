//! One build: seed the repository with the plan's design documents, then run every work
//! leaf over the dependency DAG, up to `jobs` at once, never two with overlapping write
//! scopes, critical path first. A leaf starts when the leaves it depends on — its own
//! dependencies and its ancestors', a plan node standing for every leaf below it — have
//! landed. A failed leaf's dependents are skipped and everything else goes on; the budget
//! cap stops new work and lets running attempts end.
//! design: runtime.scheduler

use std::collections::{BTreeMap, HashMap, HashSet};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use specc_ir::plan::{ChildKind, TaskNode};
use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, Outcome, Submission};

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
    match seed(s, &plan.seed).await {
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
    let deps = dependencies(&plan.tasks, &plan.orders);
    let depth = critical_path(&plan.orders, &deps);
    let scopes: HashMap<&str, Scope> = plan
        .orders
        .iter()
        .map(|o| (o.task.id.as_str(), Scope::new(&o.task.write_scope)))
        .collect();
    let mut state: HashMap<String, TaskState> = HashMap::new();
    let mut attempts: HashMap<String, (u32, Option<String>)> = HashMap::new();
    for o in &plan.orders {
        let t = &o.task;
        let fresh = s
            .journal
            .landed_fingerprint(&t.id)
            .ok()
            .flatten()
            .as_deref()
            == Some(t.fingerprint.as_str());
        let st = if fresh {
            (s.events)(Event::UpToDate { task: t.id.clone() });
            TaskState::UpToDate
        } else {
            TaskState::Pending
        };
        record(s, t, st, None, None);
        state.insert(t.id.clone(), st);
    }
    let mut order: Vec<&WorkOrder> = plan.orders.iter().collect();
    order.sort_by_key(|o| std::cmp::Reverse(depth.get(o.task.id.as_str()).copied().unwrap_or(0)));
    let mut running = FuturesUnordered::new();
    let mut active: HashSet<String> = HashSet::new();
    let mut stopping: Option<String> = None;
    loop {
        skip_blocked(s, &order, &deps, &mut state);
        if stopping.is_none() {
            for o in &order {
                let id = o.task.id.as_str();
                if active.len() >= jobs.max(1) {
                    break;
                }
                let ready = state.get(id) == Some(&TaskState::Pending)
                    && deps[id].iter().all(|d| {
                        matches!(state.get(d), Some(TaskState::Landed | TaskState::UpToDate))
                    });
                let clash = active
                    .iter()
                    .any(|a| scopes[a.as_str()].overlaps(&scopes[id]));
                if !ready || clash {
                    continue;
                }
                state.insert(id.to_owned(), TaskState::Running);
                record(s, &o.task, TaskState::Running, None, None);
                active.insert(id.to_owned());
                let order = (*o).clone();
                running.push(async move {
                    let id = order.task.id.clone();
                    (id, attempt::run_task(s, order).await)
                });
            }
        }
        let Some((id, end)) = running.next().await else {
            break;
        };
        active.remove(&id);
        let Some(task) = plan
            .orders
            .iter()
            .find(|o| o.task.id == id)
            .map(|o| &o.task)
        else {
            continue;
        };
        let (st, reason) = match end {
            TaskEnd::Landed {
                commit,
                merged,
                attempts: n,
            } => {
                report.commits += usize::from(commit.is_some());
                report.merged.extend(merged.iter().cloned());
                attempts.insert(id.clone(), (n, None));
                let hex = commit.map(|c| c.hex());
                record(s, task, TaskState::Landed, None, hex.as_deref());
                (s.events)(Event::Landed {
                    task: id.clone(),
                    commit: hex,
                    merged,
                });
                (TaskState::Landed, None)
            }
            TaskEnd::Failed { reason } => {
                (s.events)(Event::Failed {
                    task: id.clone(),
                    reason: reason.clone(),
                });
                (TaskState::Failed, Some(reason))
            }
            TaskEnd::Budget => {
                let why = "the budget cap was reached".to_owned();
                if stopping.is_none() {
                    (s.events)(Event::Stopped {
                        reason: why.clone(),
                    });
                }
                stopping = Some(why.clone());
                (TaskState::Stopped, Some(why))
            }
            TaskEnd::Journal(e) => {
                stopping = Some(e.clone());
                (TaskState::Stopped, Some(e))
            }
        };
        if st != TaskState::Landed {
            record(s, task, st, reason.as_deref(), None);
        }
        attempts.entry(id.clone()).or_insert((0, reason.clone()));
        state.insert(id, st);
    }
    for o in &plan.orders {
        let id = &o.task.id;
        if state.get(id) == Some(&TaskState::Pending) {
            let because = stopping
                .clone()
                .unwrap_or_else(|| "never became ready".to_owned());
            record(s, &o.task, TaskState::Stopped, Some(&because), None);
            state.insert(id.clone(), TaskState::Stopped);
        }
    }
    let stats = s.repo.stats().await;
    report.head = stats.head;
    report.conflicts = stats.conflicts.iter().map(|(_, n)| *n as usize).sum();
    report.stopped = stopping;
    let reasons: HashMap<String, Option<String>> = s
        .journal
        .tasks(s.run)
        .unwrap_or_default()
        .into_iter()
        .map(|r| (r.task, r.reason))
        .collect();
    for o in &plan.orders {
        let id = &o.task.id;
        report.tasks.push(TaskReport {
            id: id.clone(),
            title: o.task.title.clone(),
            state: state.get(id).copied().unwrap_or(TaskState::Pending),
            reason: reasons.get(id).cloned().flatten(),
            attempts: attempts.get(id).map_or(0, |a| a.0),
        });
    }
    report
}

fn record(
    s: &Services<'_>,
    t: &TaskNode,
    st: TaskState,
    reason: Option<&str>,
    commit: Option<&str>,
) {
    let task = TaskRef {
        id: &t.id,
        title: &t.title,
        fingerprint: &t.fingerprint,
    };
    if let Err(e) = s.journal.set_task(s.run, task, st, reason, commit) {
        tracing::error!(task = %t.id, error = %e, "the journal could not record a task");
    }
}

/// Marks pending leaves whose dependencies failed (or were skipped or stopped) as skipped.
fn skip_blocked(
    s: &Services<'_>,
    order: &[&WorkOrder],
    deps: &HashMap<&str, Vec<String>>,
    state: &mut HashMap<String, TaskState>,
) {
    loop {
        let mut changed = false;
        for o in order {
            let id = o.task.id.as_str();
            if state.get(id) != Some(&TaskState::Pending) {
                continue;
            }
            let blocker = deps[id].iter().find(|d| {
                matches!(
                    state.get(d.as_str()),
                    Some(TaskState::Failed | TaskState::Skipped)
                )
            });
            if let Some(b) = blocker {
                let because = format!("depends on {b}, which did not land");
                record(s, &o.task, TaskState::Skipped, Some(&because), None);
                (s.events)(Event::Skipped {
                    task: id.to_owned(),
                    because,
                });
                state.insert(id.to_owned(), TaskState::Skipped);
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

/// The leaves each leaf waits for: the leaves under every dependency of the leaf and of
/// each of its ancestors (a dependency on a plan node is a dependency on all its leaves).
pub fn dependencies<'a>(
    tasks: &[TaskNode],
    orders: &'a [WorkOrder],
) -> HashMap<&'a str, Vec<String>> {
    let by_id: HashMap<&str, &TaskNode> = tasks.iter().map(|t| (t.id.as_str(), t)).collect();
    let leaves: Vec<&str> = orders.iter().map(|o| o.task.id.as_str()).collect();
    let under = |id: &str| -> Vec<String> {
        let prefix = format!("{id}/");
        leaves
            .iter()
            .filter(|l| **l == id || l.starts_with(&prefix))
            .map(|l| (*l).to_owned())
            .collect()
    };
    let mut out = HashMap::new();
    for o in orders {
        let mut need: Vec<String> = Vec::new();
        let mut at = Some(&o.task);
        while let Some(t) = at {
            for d in &t.dependencies {
                need.extend(under(d));
            }
            at = t.parent.as_deref().and_then(|p| by_id.get(p).copied());
        }
        need.sort();
        need.dedup();
        need.retain(|d| d != &o.task.id);
        out.insert(o.task.id.as_str(), need);
    }
    out
}

/// For each leaf, the length of the longest chain of leaves that wait on it (itself
/// included): what critical-path-first orders by.
fn critical_path<'a>(
    orders: &'a [WorkOrder],
    deps: &HashMap<&'a str, Vec<String>>,
) -> HashMap<&'a str, usize> {
    let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
    for (id, ds) in deps {
        for d in ds {
            if let Some(o) = orders.iter().find(|o| &o.task.id == d) {
                dependents.entry(o.task.id.as_str()).or_default().push(id);
            }
        }
    }
    let mut memo: HashMap<&str, usize> = HashMap::new();
    // Leaves in an order where dependents come first: repeat until stable (the DAG is
    // small relative to this, and a cycle, which the plan checks refuse, cannot loop).
    for _ in 0..orders.len() + 1 {
        let mut changed = false;
        for o in orders {
            let id = o.task.id.as_str();
            let below = dependents.get(id).map_or(0, |ds| {
                ds.iter()
                    .map(|d| memo.get(d).copied().unwrap_or(1))
                    .max()
                    .unwrap_or(0)
            });
            let v = below + 1;
            if memo.get(id) != Some(&v) {
                memo.insert(id, v);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    memo
}

/// Commits the seed files the head does not already hold. Returns the new commit, if any.
async fn seed(
    s: &Services<'_>,
    files: &BTreeMap<String, String>,
) -> Result<Option<ObjectId>, String> {
    let mut changes = Vec::new();
    let mut base = None;
    for (path, text) in files {
        let (head, current) = s
            .repo
            .read_head(path)
            .await
            .ok_or("the VCS is unavailable")?;
        base.get_or_insert(head);
        // The field guide belongs to the agents once it exists: seeded, never overwritten.
        if path == crate::tools::GUIDE && current.is_some() {
            continue;
        }
        if current
            .as_ref()
            .is_some_and(|f| f.bytes.as_slice() == text.as_bytes() && !f.executable)
        {
            continue;
        }
        changes.push(Change {
            path: path.clone(),
            expected: current.map(|f| f.blob),
            new: Some(text.clone().into_bytes()),
            executable: false,
        });
    }
    let Some(base) = base.filter(|_| !changes.is_empty()) else {
        return Ok(None);
    };
    let digest = blake3::hash(format!("{files:?}").as_bytes()).to_hex();
    let submission = Submission {
        base,
        changes,
        message: "plan: design decisions and field guide".to_owned(),
        task: "plan".to_owned(),
        idempotency_key: format!("seed/{}", &digest[..16]),
    };
    match s.repo.submit(submission).await {
        Outcome::Committed { id, .. } => Ok(Some(id)),
        other => Err(format!(
            "the plan's documents could not be committed: {other:?}"
        )),
    }
}

/// The blob id the VCS gives `bytes`.
pub fn blob_id(bytes: &[u8]) -> ObjectId {
    ObjectId::of(Kind::Blob, bytes)
}

/// Leaves of `tasks`.
pub fn leaves(tasks: &[TaskNode]) -> impl Iterator<Item = &TaskNode> {
    tasks.iter().filter(|t| t.kind == ChildKind::Work)
}
