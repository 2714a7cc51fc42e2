//! `specc serve`'s side of remote work: the build's scheduler hands a ready leaf to
//! [`Dispatch::run_task`] instead of running it; the leaf is offered as a task lease, a
//! `specc worker` claims it, runs it against its replica of the repository, submits through
//! [`Dispatch::submit`] and reports how it ended through [`Dispatch::finish`], which ends the
//! scheduler's wait. Every write a worker makes for a claim carries the claim's attempt
//! number, the fencing token: once its lease expired or another worker claimed the task,
//! its heartbeats, submissions and its end are refused.
//!
//! A submission and a claim of the same task take the task's lock, so a claim never slips
//! between a submission's check of its token and its landing. A worker that landed a
//! commit and died before it reported its end is found by the next claim of its task: the
//! task ends as landed with that commit (its reviews are not done; design:
//! state.deployment), and it lands once.
//! design: state.leases
//! design: state.deployment

pub mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use specc_state::{Claim, LeaseError, LeaseStore, StateError, StepRecord};
use specc_vcs::object::ObjectId;
use specc_vcs::{Outcome, Repo, Submission};
use tokio::sync::oneshot;

use crate::attempt::WorkOrder;
use crate::task_end::{Landed, TaskEnd};

/// A leaf the scheduler waits for.
struct Waiting {
    order: Arc<WorkOrder>,
    done: oneshot::Sender<TaskEnd>,
    /// The claim that holds it, and when its holder was last heard from.
    held: Option<(i64, Instant)>,
    /// When it was offered (or last released).
    offered: Instant,
}

/// A commit a claim of the task landed.
#[derive(Clone, Debug)]
struct Landing {
    commit: ObjectId,
    merged: Vec<String>,
}

/// Counts for the metrics endpoint.
#[derive(Debug, Default)]
pub struct Counters {
    pub claims: AtomicU64,
    pub submissions: AtomicU64,
    pub commits: AtomicU64,
    pub conflicts: AtomicU64,
    /// Writes refused because their token no longer holds.
    pub fenced: AtomicU64,
    /// The state store's time in the claims that handed out a leaf (the lease latency),
    /// in microseconds.
    pub claim_micros: AtomicU64,
    /// The time leaves waited between their offer and their claim, in microseconds.
    pub ready_micros: AtomicU64,
}

pub struct Dispatch {
    store: LeaseStore,
    run: String,
    lease: Duration,
    repo: Repo,
    waiting: Mutex<HashMap<String, Waiting>>,
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Landing>>>>>,
    stopping: AtomicBool,
    /// A permit per leaf offered or released: wakes one claim waiting in
    /// [`Dispatch::claim_within`].
    ready: tokio::sync::Notify,
    /// Claims ended here: [`Dispatch::take_ended`].
    ended: Mutex<Vec<Claim>>,
    pub counters: Counters,
}

/// What a claim hands a worker.
pub struct Claimed {
    pub claim: Claim,
    pub order: Arc<WorkOrder>,
}

impl Dispatch {
    pub fn new(store: LeaseStore, run: &str, lease: Duration, repo: Repo) -> Dispatch {
        Dispatch {
            store,
            run: run.to_owned(),
            lease,
            repo,
            waiting: Mutex::default(),
            locks: Mutex::default(),
            stopping: AtomicBool::new(false),
            ready: tokio::sync::Notify::new(),
            ended: Mutex::default(),
            counters: Counters::default(),
        }
    }

    pub fn run_id(&self) -> &str {
        &self.run
    }

    pub fn lease(&self) -> Duration {
        self.lease
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// Offers `order` to workers (higher `priority` first) and waits until a worker reports
    /// its end. Once the build is stopping, a leaf no live worker holds ends as stopped.
    pub async fn run_task(&self, order: Arc<WorkOrder>, priority: i64) -> TaskEnd {
        let task = order.task.id.clone();
        let (tx, mut rx) = oneshot::channel();
        if let Ok(mut w) = self.waiting.lock() {
            w.insert(
                task.clone(),
                Waiting {
                    order,
                    done: tx,
                    held: None,
                    offered: Instant::now(),
                },
            );
        }
        if let Err(e) = self
            .store
            .offer(&self.run, &[(task.clone(), priority)])
            .await
        {
            self.forget(&task);
            return TaskEnd::Failed {
                reason: format!("the state store could not offer it: {e}"),
                attempts: 0,
            };
        }
        self.ready.notify_one();
        loop {
            let tick = tokio::time::sleep(Duration::from_millis(200));
            tokio::select! {
                end = &mut rx => {
                    return end.unwrap_or(TaskEnd::Budget { attempts: 0 });
                }
                () = tick => {
                    if self.stopping.load(Ordering::SeqCst) && !self.held_alive(&task) {
                        let attempts = self.forget(&task).map_or(0, |(a, _)| a);
                        return TaskEnd::Budget { attempts: u32::try_from(attempts).unwrap_or(0) };
                    }
                }
            }
        }
    }

    /// Stops handing out work: unclaimed leaves end as stopped, claimed ones when their
    /// worker reports or its lease runs out.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        self.ready.notify_waiters();
    }

    /// Whether the build is over or stopping: no more work will be handed out.
    pub fn stopped(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Whether a worker holds `task` and was heard from within a lease.
    fn held_alive(&self, task: &str) -> bool {
        let w = self.waiting.lock();
        w.ok()
            .and_then(|w| w.get(task).and_then(|w| w.held))
            .is_some_and(|(_, at)| at.elapsed() < self.lease)
    }

    /// Removes `task`'s wait; its holder, if any.
    fn forget(&self, task: &str) -> Option<(i64, Instant)> {
        self.waiting.lock().ok()?.remove(task)?.held
    }

    fn lock_of(&self, task: &str) -> Arc<tokio::sync::Mutex<Option<Landing>>> {
        match self.locks.lock() {
            Ok(mut l) => l.entry(task.to_owned()).or_default().clone(),
            Err(_) => Arc::default(),
        }
    }

    fn resolve(&self, task: &str, end: TaskEnd) {
        if let Some(w) = self.waiting.lock().ok().and_then(|mut w| w.remove(task)) {
            let _ = w.done.send(end);
        }
    }

    /// Claims this dispatch ended itself, for [`Dispatch::take_ended`].
    fn note_ended(&self, claim: &Claim) {
        if let Ok(mut e) = self.ended.lock() {
            e.push(Claim {
                task: claim.task.clone(),
                attempt: claim.attempt - 1,
            });
        }
    }

    /// The claims ended here rather than by their workers since the last call (a claim
    /// that found its task landed by an earlier one ends it, and that earlier one is over):
    /// serve gives back what they held.
    pub fn take_ended(&self) -> Vec<Claim> {
        self.ended
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }

    /// Counts and logs a write refused by its token.
    fn note_fenced<T>(
        &self,
        claim: &Claim,
        what: &str,
        r: Result<T, LeaseError>,
    ) -> Result<T, LeaseError> {
        if matches!(r, Err(LeaseError::Fenced)) {
            self.counters.fenced.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                task = %claim.task,
                claim = claim.attempt,
                "a {what} under a lost claim was refused (fencing token)"
            );
        }
        r
    }

    /// [`Dispatch::claim`], waiting up to `window` for a leaf to be offered, so that an idle
    /// worker's claim is held here instead of repeated, and a leaf offered is claimed at
    /// once. A lease that expires wakes no one: it is found by the next claim, within a
    /// window. `None`: nothing to do yet, or the build is over.
    pub async fn claim_within(
        &self,
        holder: &str,
        window: Duration,
    ) -> Result<Option<Claimed>, StateError> {
        let until = tokio::time::Instant::now() + window;
        loop {
            // Registered before the claim looks, so no offer between the two is missed.
            let notified = self.ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(c) = self.claim(holder).await? {
                return Ok(Some(c));
            }
            if self.stopped() || tokio::time::timeout_at(until, notified).await.is_err() {
                return Ok(None);
            }
        }
    }

    /// Claims the next ready leaf for `holder`. `None`: nothing to do now.
    pub async fn claim(&self, holder: &str) -> Result<Option<Claimed>, StateError> {
        loop {
            if self.stopping.load(Ordering::SeqCst) {
                return Ok(None);
            }
            let asked = Instant::now();
            let Some(claim) = self.store.claim(&self.run, holder, self.lease).await? else {
                return Ok(None);
            };
            let store_time = asked.elapsed();
            let lock = self.lock_of(&claim.task);
            let mut landed = lock.lock().await;
            if let Some(l) = landed.clone() {
                // An earlier claim landed it and never reported: it ends as landed, once.
                self.note_ended(&claim);
                if self.store.finish(&self.run, &claim, true).await.is_ok() {
                    *landed = None;
                    let end = TaskEnd::Landed(Landed::unreported(
                        Some(l.commit),
                        l.merged,
                        claim.attempt,
                    ));
                    self.resolve(&claim.task, end);
                }
                continue;
            }
            let order = match self.waiting.lock() {
                Ok(mut w) => w.get_mut(&claim.task).map(|w| {
                    w.held = Some((claim.attempt, Instant::now()));
                    let waited = std::mem::replace(&mut w.offered, Instant::now()).elapsed();
                    (w.order.clone(), waited)
                }),
                Err(_) => None,
            };
            match order {
                Some((order, waited)) => {
                    let c = &self.counters;
                    c.claims.fetch_add(1, Ordering::Relaxed);
                    c.claim_micros
                        .fetch_add(micros(store_time), Ordering::Relaxed);
                    c.ready_micros.fetch_add(micros(waited), Ordering::Relaxed);
                    return Ok(Some(Claimed { claim, order }));
                }
                // Offered by an earlier serve of this run: no job waits for it now.
                None => {
                    self.note_ended(&claim);
                    let _ = self.store.finish(&self.run, &claim, true).await;
                }
            }
        }
    }

    /// Extends `claim`'s lease; refused once it is lost.
    #[tracing::instrument(level = "info", skip_all, fields(task = %claim.task, claim = claim.attempt))]
    pub async fn heartbeat(&self, claim: &Claim) -> Result<(), LeaseError> {
        let r = self.store.heartbeat(&self.run, claim, self.lease).await;
        if r.is_ok()
            && let Ok(mut w) = self.waiting.lock()
            && let Some(w) = w.get_mut(&claim.task)
        {
            w.held = Some((claim.attempt, Instant::now()));
        }
        self.note_fenced(claim, "heartbeat", r)
    }

    /// Lands `s` for `claim` if its lease holds: the check extends the lease, and the task's
    /// lock keeps a claim from slipping in before the landing.
    #[tracing::instrument(level = "info", skip_all, fields(task = %claim.task, claim = claim.attempt))]
    pub async fn submit(&self, claim: &Claim, s: Submission) -> Result<Outcome, LeaseError> {
        // Its task's (or the coordinator's for its task: decisions it merged), made under
        // this claim: the key starts with the run the claim handed out.
        let made_here = s
            .idempotency_key
            .starts_with(&format!("{}@{}/", self.run, claim.attempt));
        let coordinated = s.task.strip_prefix("coordinate:") == Some(claim.task.as_str());
        if !(s.task == claim.task || coordinated) || !made_here {
            return self.note_fenced(
                claim,
                "submission of another task or claim",
                Err(LeaseError::Fenced),
            );
        }
        let lock = self.lock_of(&claim.task);
        let mut landed = lock.lock().await;
        let held = self.store.heartbeat(&self.run, claim, self.lease).await;
        self.note_fenced(claim, "submission", held)?;
        self.counters.submissions.fetch_add(1, Ordering::Relaxed);
        let outcome = self.repo.submit(s).await;
        match &outcome {
            Outcome::Committed { id, merged, .. } => {
                self.counters.commits.fetch_add(1, Ordering::Relaxed);
                // The coordinator's commit is not the task's landing.
                if landed.is_none() && !coordinated {
                    *landed = Some(Landing {
                        commit: *id,
                        merged: merged.clone(),
                    });
                }
            }
            Outcome::Conflict(_) => {
                self.counters.conflicts.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Refused(_) => {}
        }
        Ok(outcome)
    }

    /// `claim`'s attempt ended with `end`: the scheduler's wait ends; refused once its lease
    /// is lost.
    #[tracing::instrument(level = "info", skip_all, fields(task = %claim.task, claim = claim.attempt))]
    pub async fn finish(&self, claim: &Claim, end: TaskEnd) -> Result<(), LeaseError> {
        let lock = self.lock_of(&claim.task);
        let mut landed = lock.lock().await;
        let r = self.store.finish(&self.run, claim, true).await;
        self.note_fenced(claim, "task's end", r)?;
        // A submission of it landed (its answer may have been lost on the way back): it
        // ends as landed whatever its worker concluded, so it does not run again.
        let end = match (landed.take(), end) {
            (Some(l), end) if !matches!(end, TaskEnd::Landed(_)) => {
                tracing::warn!(
                    task = %claim.task,
                    claim = claim.attempt,
                    "the attempt reported no landing, but its submission landed: it ends as landed"
                );
                TaskEnd::Landed(Landed::unreported(Some(l.commit), l.merged, claim.attempt))
            }
            (_, end) => end,
        };
        // The task may be offered again (blocked, parked): its next claims start afresh.
        self.resolve(&claim.task, end);
        Ok(())
    }

    /// Journals the steps `claim`'s worker made in serve's state store, under the claim's
    /// run (`RUN@N`); refused once the claim is lost, or for steps of another claim.
    #[tracing::instrument(level = "info", skip_all, fields(task = %claim.task, claim = claim.attempt))]
    pub async fn journal(&self, claim: &Claim, steps: &[StepRecord]) -> Result<(), LeaseError> {
        let mine = format!("{}@{}", self.run, claim.attempt);
        if steps.iter().any(|s| s.run != mine) {
            return self.note_fenced(
                claim,
                "journal write of another claim",
                Err(LeaseError::Fenced),
            );
        }
        let r = self.store.journal(&self.run, claim, steps).await;
        self.note_fenced(claim, "journal write", r)
    }

    /// Gives `claim` back (its worker is shutting down): another worker may claim it.
    #[tracing::instrument(level = "info", skip_all, fields(task = %claim.task, claim = claim.attempt))]
    pub async fn release(&self, claim: &Claim) -> Result<(), LeaseError> {
        let lock = self.lock_of(&claim.task);
        let landed = lock.lock().await;
        if landed.is_some() {
            // It landed: released, its next claim would end it as landed; say so now.
            drop(landed);
            let end = self.landed_end(claim).await;
            return self.finish(claim, end).await;
        }
        let r = self.store.finish(&self.run, claim, false).await;
        if r.is_ok()
            && let Ok(mut w) = self.waiting.lock()
            && let Some(w) = w.get_mut(&claim.task)
        {
            w.held = None;
            w.offered = Instant::now();
            self.ready.notify_one();
        }
        self.note_fenced(claim, "release", r)
    }

    async fn landed_end(&self, claim: &Claim) -> TaskEnd {
        let l = self.lock_of(&claim.task).lock().await.clone();
        TaskEnd::Landed(Landed::unreported(
            l.as_ref().map(|l| l.commit),
            l.map(|l| l.merged).unwrap_or_default(),
            claim.attempt,
        ))
    }

    /// Finds the landings claims of this run made that no worker reported (serve died
    /// between a submission's landing and its worker's end): each commit on the branch
    /// whose idempotency key says a claim of this run made it (`RUN@N/…`) is remembered as
    /// its task's landing, the oldest one if several, so the task's next claim ends it as
    /// landed instead of running it again. Called once by a serve that resumes its run,
    /// before any leaf is offered; `reported` are the tasks whose end the journal has (they
    /// are not offered again, and are left alone). Returns how many tasks it found.
    pub async fn recover_landings(&self, reported: &std::collections::HashSet<String>) -> usize {
        let prefix = format!("{}@", self.run);
        let mut found: HashMap<String, ObjectId> = HashMap::new();
        let mut at = self.repo.head_now();
        while let Some(id) = at {
            let Ok(c) = self.repo.commit(id).await else {
                break;
            };
            if c.idempotency_key.starts_with(&prefix)
                && !c.task.is_empty()
                && !reported.contains(&c.task)
                && !c.task.starts_with("coordinate:")
            {
                found.insert(c.task.clone(), id); // walking back: the oldest stays
            }
            at = c.parent;
        }
        let n = found.len();
        for (task, commit) in found {
            let lock = self.lock_of(&task);
            let mut landed = lock.lock().await;
            if landed.is_none() {
                *landed = Some(Landing {
                    commit,
                    merged: Vec::new(),
                });
            }
        }
        n
    }

    /// Leaves waiting: offered or claimed, not yet ended.
    pub fn waiting(&self) -> usize {
        self.waiting.lock().map_or(0, |w| w.len())
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
