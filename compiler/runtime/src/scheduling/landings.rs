//! Jobs and landings: an attempt whose change is at the VCS, waiting for its landing to be
//! made durable (a batch's fsync on a disk), holds no job, so the build starts other work
//! meanwhile; `jobs` still bounds the attempts that work (call models, run tools and
//! commands) at once. An attempt the VCS turned away (a conflict) takes a job back before
//! it works again, waiting for one if the build started others meanwhile, and comes before
//! new leaves (design: runtime.scheduler).

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

/// The build's count of working attempts, shared by its loop and its attempts.
#[derive(Default)]
pub struct Landings {
    /// Leaves started and not ended, less those at the VCS.
    working: AtomicUsize,
    /// Attempts back from the VCS, waiting for a job to work again.
    returning: AtomicUsize,
    /// The most attempts that work at once (0: not bounded, before the build starts).
    jobs: AtomicUsize,
    /// Wakes the build's loop: an attempt went to the VCS, a job may be free.
    pub(super) went: Notify,
    /// Wakes attempts waiting to work again: a job was given back.
    freed: Notify,
}

impl Landings {
    /// The build's bound on working attempts.
    pub(super) fn bound(&self, jobs: usize) {
        self.jobs.store(jobs, Ordering::Relaxed);
    }

    /// Jobs taken: by working attempts, and promised to attempts coming back.
    pub(super) fn taken(&self) -> usize {
        self.working.load(Ordering::Relaxed) + self.returning.load(Ordering::Relaxed)
    }

    /// `(working, returning)`: attempts working (holding a job), and attempts back from the
    /// VCS waiting for a job (`specc build --gauges`).
    pub fn gauges(&self) -> (usize, usize) {
        (
            self.working.load(Ordering::Relaxed),
            self.returning.load(Ordering::Relaxed),
        )
    }

    /// `n` leaves start.
    pub(super) fn started(&self, n: usize) {
        self.working.fetch_add(n, Ordering::Relaxed);
    }

    /// A leaf ended (it works no more).
    pub(super) fn ended(&self) {
        self.working.fetch_sub(1, Ordering::Relaxed);
        self.freed.notify_waiters();
    }

    /// The attempt's change goes to the VCS: its job is free until [`AtVcs::back`].
    pub(crate) fn to_vcs(&self) -> AtVcs<'_> {
        self.working.fetch_sub(1, Ordering::Relaxed);
        self.went.notify_one();
        self.freed.notify_waiters();
        AtVcs {
            landings: self,
            returning: false,
            back: false,
        }
    }
}

/// An attempt at the VCS. Dropped before [`AtVcs::back`] returned (the attempt given up,
/// waiting or not), it counts as working again at once, so that the leaf's end gives its job
/// back.
pub(crate) struct AtVcs<'a> {
    landings: &'a Landings,
    /// Counted in `returning`, waiting for a job.
    returning: bool,
    back: bool,
}

impl AtVcs<'_> {
    /// The outcome is in. `ends`: the attempt ends now (it landed, with nothing to follow),
    /// and counts as working at once; otherwise it waits for a job first.
    pub(crate) async fn back(mut self, ends: bool) {
        let l = self.landings;
        if !ends {
            // Counted as returning, so that no new leaf takes the job it waits for.
            l.returning.fetch_add(1, Ordering::Relaxed);
            self.returning = true;
            loop {
                let freed = l.freed.notified();
                let jobs = l.jobs.load(Ordering::Relaxed);
                if jobs == 0 || l.working.load(Ordering::Relaxed) < jobs {
                    break;
                }
                freed.await;
            }
            l.returning.fetch_sub(1, Ordering::Relaxed);
            self.returning = false;
        }
        l.working.fetch_add(1, Ordering::Relaxed);
        self.back = true;
    }
}

impl Drop for AtVcs<'_> {
    fn drop(&mut self) {
        if self.returning {
            self.landings.returning.fetch_sub(1, Ordering::Relaxed);
        }
        if !self.back {
            self.landings.working.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_job_is_free_while_its_attempt_is_at_the_vcs() {
        let l = Landings::default();
        l.bound(2);
        l.started(2);
        assert_eq!(l.taken(), 2, "both jobs work");
        let at = l.to_vcs();
        assert_eq!(l.taken(), 1, "one is free while its attempt is at the VCS");
        l.started(1);
        at.back(true).await;
        assert_eq!(
            l.taken(),
            3,
            "landed: it ends at once, over the bound until it does"
        );
    }

    #[tokio::test]
    async fn an_attempt_turned_away_waits_for_a_job_before_it_works_again() {
        let l = Landings::default();
        l.bound(1);
        l.started(1);
        let at = l.to_vcs();
        l.started(1); // the build started another leaf meanwhile
        let mut back = Box::pin(at.back(false));
        assert!(
            futures_util::FutureExt::now_or_never(&mut back).is_none(),
            "no job is free: it waits"
        );
        assert_eq!(l.taken(), 2, "its job is promised before any new leaf's");
        l.ended(); // the other leaf ends
        back.await;
        assert_eq!(l.taken(), 1, "it works again, alone");
    }

    #[tokio::test]
    async fn more_attempts_coming_back_than_jobs_each_get_one_in_turn() {
        let l = Landings::default();
        l.bound(1);
        l.started(1); // A
        let a = l.to_vcs();
        l.started(1); // B
        let b = l.to_vcs();
        l.started(1); // C
        let mut a = Box::pin(a.back(false));
        let mut b = Box::pin(b.back(false));
        assert!(futures_util::FutureExt::now_or_never(&mut a).is_none());
        assert!(futures_util::FutureExt::now_or_never(&mut b).is_none());
        let c = l.to_vcs(); // C at the VCS: its job is free
        a.await; // one of the two returning takes it
        assert!(
            futures_util::FutureExt::now_or_never(&mut b).is_none(),
            "the other waits"
        );
        assert_eq!(
            l.taken(),
            2,
            "one working, one promised: no new leaf starts"
        );
        l.ended(); // A ends
        b.await;
        drop(c); // C given up at the VCS: it counts as working until its leaf ends
        assert_eq!(l.taken(), 2);
        l.ended();
        l.ended();
        assert_eq!(l.taken(), 0, "every count back to nothing");
    }

    #[tokio::test]
    async fn an_attempt_given_up_while_it_waits_leaves_the_counts_balanced() {
        let l = Landings::default();
        l.bound(1);
        l.started(1);
        let at = l.to_vcs();
        l.started(1);
        let mut back = Box::pin(at.back(false));
        assert!(futures_util::FutureExt::now_or_never(&mut back).is_none());
        drop(back);
        assert_eq!(l.taken(), 2, "both leaves still count until they end");
        l.ended();
        l.ended();
        assert_eq!(l.taken(), 0);
    }
}
