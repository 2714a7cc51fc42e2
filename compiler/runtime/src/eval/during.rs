//! Evaluating while a build runs: after every `every.merges` landings or `every.minutes`,
//! whichever comes first, the head is scored beside the workers (never in their way: the
//! evaluation has its own checkout and the command waits asynchronously), one evaluation
//! at a time; landings during an evaluation are taken up by the next one, so a slow suite
//! skips heads rather than queueing them. Once more at the end, on the final head.
//! design: eval.run

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use specc_state::StateDb;
use tokio::sync::watch;

use super::error::EvalError;
use super::evaluator::{Evaluation, Evaluator};
use super::series::{self, Counts};

/// What the build tells the evaluations: landings so far, and that it has ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub landings: u64,
    pub ended: bool,
}

/// One point, as the build shows it.
pub enum Seen<'a> {
    Point {
        point: u32,
        evaluation: &'a Evaluation,
        last: bool,
    },
    Error(EvalError),
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Runs the evaluations of run `run` until `progress` says the build ended, then the last
/// one. Points go to the series in `db`; each is shown through `seen`.
pub async fn during_build(
    ev: &Evaluator,
    db: &StateDb,
    run: &str,
    mut progress: watch::Receiver<Progress>,
    seen: &dyn Fn(Seen<'_>),
) {
    let stats = ev.repo.stats().await;
    let begun = series::create(db).and_then(|()| series::begin(db, run, now_ms(), stats.seq));
    let (started_ms, base_seq) = match begun {
        Ok(b) => b,
        Err(e) => return seen(Seen::Error(e.into())),
    };
    // A resumed run counts its conflicts on from its last point: the VCS counts since open.
    let conflict_base = series::last_conflicts(db, run).unwrap_or(0);
    let every = ev.config.every;
    // The configuration bounds minutes to a year; a clock that still cannot be made is none.
    let period = every
        .minutes
        .and_then(|m| Duration::try_from_secs_f64(m * 60.0).ok());
    let mut since = (progress.borrow().landings, Instant::now());
    loop {
        let wake = period.and_then(|p| since.1.checked_add(p));
        let changed = async {
            match wake {
                Some(at) => tokio::select! {
                    r = progress.changed() => r.is_ok(),
                    () = tokio::time::sleep_until(at.into()) => true,
                },
                None => progress.changed().await.is_ok(),
            }
        };
        let alive = changed.await;
        let now = *progress.borrow();
        if now.ended || !alive {
            break;
        }
        let by_merges = every
            .merges
            .is_some_and(|n| now.landings >= since.0 + u64::from(n));
        let by_time = wake.is_some_and(|at| Instant::now() >= at);
        if by_merges || by_time {
            since = (now.landings, Instant::now());
            point(
                ev,
                db,
                run,
                (started_ms, base_seq, conflict_base),
                false,
                seen,
            )
            .await;
        }
    }
    point(
        ev,
        db,
        run,
        (started_ms, base_seq, conflict_base),
        true,
        seen,
    )
    .await;
}

/// Evaluates the head and records the point (nothing before the first commit).
async fn point(
    ev: &Evaluator,
    db: &StateDb,
    run: &str,
    (started_ms, base_seq, conflict_base): (u64, u64, u64),
    last: bool,
    seen: &dyn Fn(Seen<'_>),
) {
    let stats = ev.repo.stats().await;
    let Some(head) = stats.head else {
        return;
    };
    let t_ms = now_ms().saturating_sub(started_ms);
    let counts = Counts {
        commits: stats.seq.saturating_sub(base_seq),
        conflicts: conflict_base + stats.conflicts.iter().map(|(_, n)| n).sum::<u64>(),
    };
    let costs = match series::costs(db, run) {
        Ok(c) => c,
        Err(e) => return seen(Seen::Error(e.into())),
    };
    match ev.evaluate(head, &stats.conflicts).await {
        Ok(evaluation) => {
            match series::record(db, run, t_ms, &evaluation, (counts, &costs), last) {
                Ok(point) => seen(Seen::Point {
                    point,
                    evaluation: &evaluation,
                    last,
                }),
                Err(e) => seen(Seen::Error(e.into())),
            }
        }
        Err(e) => seen(Seen::Error(e)),
    }
}
