//! Re-checking landed work: when a task lands again, the leaves that depend on it and were
//! up to date run their acceptance checks on the new head, in the sandbox, with no model
//! call. A leaf whose checks still pass stays up to date (a change behind a stable
//! interface costs nothing downstream); one whose checks now fail runs again.
//! design: runtime.incremental-build

use crate::attempt::{WorkOrder, run_checks};
use crate::checkouts::{Scope, logs_for};
use crate::services::Services;
use crate::tools::{Base, Toolbox};

/// Why a re-check did not pass: the leaf runs again.
#[derive(Debug)]
pub(super) enum RecheckFailed {
    /// The VCS is unavailable.
    Unavailable,
    /// The head could not be checked out.
    Checkout(std::io::Error),
    /// The checks failed on the new head (their summary).
    Checks(String),
}

impl std::fmt::Display for RecheckFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecheckFailed::Unavailable => write!(f, "the VCS is unavailable"),
            RecheckFailed::Checkout(e) => write!(f, "checkout: {e}"),
            RecheckFailed::Checks(summary) => {
                write!(f, "its checks fail on the new head: {summary}")
            }
        }
    }
}

/// Whether `order`'s checks pass on the current head; `Err` says why they could not run
/// or what failed.
pub(super) async fn recheck(s: &Services<'_>, order: &WorkOrder) -> Result<(), RecheckFailed> {
    if order.checks.is_empty() {
        return Ok(()); // nothing to check: it stays as it landed
    }
    let Ok((head, _)) = s.repo.read_head("").await else {
        return Err(RecheckFailed::Unavailable);
    };
    let lease = s
        .slots
        .lease(s.repo, head)
        .await
        .map_err(RecheckFailed::Checkout)?;
    let tools = Toolbox {
        root: lease.dir.clone(),
        scope: Scope::new(&order.task.write_scope),
        runner: s.runner.clone(),
        limits: s.policy.commands.clone(),
        logs: logs_for(&s.work, &order.task.id, 0),
        guide_lines: s.policy.guide_lines,
        base: Base::new(s.repo.clone(), head),
        tracked: lease.tracked.clone(),
        pins: s.pins.clone(),
        breaks: std::sync::Mutex::new(Vec::new()),
        contradictions: std::sync::Mutex::new(Vec::new()),
        git: Default::default(),
    };
    let report = run_checks(&tools, &order.checks, 0, s.policy.attempt.wall).await;
    if report.passed() {
        Ok(())
    } else {
        Err(RecheckFailed::Checks(report.summary()))
    }
}
