//! Running a planned build's work leaves in an opened session: the services the runtime
//! lends each task, the run's start in the journal, the scheduler (here, or on remote
//! workers the caller serves), `[eval]`'s evaluations beside it, the gauges, and the
//! signals that stop it cleanly. What happens is told to an [`Observer`]; the caller shows
//! it. The run's end is journaled by [`finish`], once the caller has let its workers go.
//! design: driver.build, project.library

mod gauges;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_runtime::eval::{Evaluator, Progress as Landings, Seen};
use specc_runtime::{BuildReport, Event, Intents, Pins, Plan, Services, Slots, Stores, Workers};

use crate::session::Session;

/// Bytes of each stream of an eval command kept in memory (the log keeps the rest).
pub const EVAL_OUTPUT_CAP: usize = 64 << 10;

/// What the caller decides about a run.
pub struct Run<'a> {
    /// The spec, as the journal records the run's.
    pub spec: &'a Path,
    /// Where the leaves run: `jobs` at a time here, or offered to remote workers.
    pub workers: Workers<'a>,
    /// `--gauges FILE`: a JSON line a second of what the build holds (design: perf.width).
    pub gauges: Option<PathBuf>,
    /// SIGTERM and SIGINT stop the build cleanly (the binary; never a library caller).
    pub signals: bool,
    /// `specc check` and `specc pin` on a checkout, for deliberate breaks' revisits and the
    /// `pin` tool; `None`: no revisits.
    pub pins: Option<Arc<dyn Pins>>,
}

/// Who is told what happens while the leaves run (on the session's one-thread runtime).
pub trait Observer {
    /// A task's event, as the runtime reports it.
    fn event(&self, e: &Event);
    /// An evaluation of `[eval]`'s hidden suite (or one that could not run).
    fn eval(&self, seen: Seen<'_>);
}

/// The build's evaluator, if specc.toml has `[eval]`: over the build's VCS store and runner,
/// in its own directory (`.specc/eval/build/`).
pub fn evaluator(s: &Session) -> Option<Evaluator> {
    Some(Evaluator {
        config: s.cfg.eval.clone()?,
        repo: s.repo.clone(),
        runner: s.runner.clone(),
        dir: s.state.join("eval").join("build"),
        output_cap: EVAL_OUTPUT_CAP,
    })
}

/// Runs the plan's work leaves and returns the report; the run is started in the journal
/// first.
pub fn execute(s: &Session, plan: Plan, run: Run<'_>, observer: &dyn Observer) -> BuildReport {
    let policy = crate::policy::policy(&s.cfg);
    let (sender, receiver) = tokio::sync::watch::channel(Landings::default());
    let on_event = |e: Event| {
        if matches!(e, Event::Landed { .. }) {
            sender.send_modify(|p| p.landings += 1);
        }
        observer.event(&e);
        hooks_of(s, &e);
    };
    let slots = Slots::new(s.state.join("work"));
    let intents = Intents::default();
    // Decisions settled in earlier builds (design: runtime.contested-decisions); a journal
    // that cannot be read settles nothing anew.
    let settled = specc_runtime::Settled::load(&s.journal).unwrap_or_default();
    let stores = Stores {
        client: &s.client,
        journal: &s.journal,
        repo: &s.repo,
        run: &s.run,
    };
    let mut services = Services::new(
        stores,
        s.runner.clone(),
        &slots,
        &intents,
        &policy,
        &on_event,
    )
    .with_settled(Arc::new(settled))
    .with_spec(plan.spec.clone());
    if let Some(pins) = run.pins.clone() {
        services = services.with_pins(pins);
    }
    let _ = s.journal.start_run(&s.run, &run.spec.display().to_string());
    let halt = run.signals.then(|| s.client.halt_switch());
    let db = s.ledger.state_db();
    let build = async {
        let build = async {
            let build = specc_runtime::build(&services, plan, run.workers);
            match &run.gauges {
                // Sampled while the build runs (design: perf.width).
                Some(file) => tokio::select! {
                    biased;
                    report = build => report,
                    never = gauges::sample(file, &services, &db) => match never {},
                },
                None => build.await,
            }
        };
        // The handlers are installed (on the first poll) before the work begins.
        let report = match halt {
            Some(halt) => tokio::select! {
                biased;
                never = crate::signals::stop_on_signals(halt) => match never {},
                report = build => report,
            },
            None => build.await,
        };
        sender.send_modify(|p| p.ended = true);
        report
    };
    match evaluator(s) {
        Some(ev) => {
            let seen = |p: Seen<'_>| observer.eval(p);
            let during =
                specc_runtime::eval::during_build(&ev, &db, &s.run, receiver.clone(), &seen);
            s.rt.block_on(async { tokio::join!(build, during).0 })
        }
        None => s.rt.block_on(build),
    }
}

/// The hooks an event fires (design: project.hooks): a task that failed, and the budget's
/// 80 % the first time the spend reaches it (asked of the ledger only when a hook waits
/// for it, after a model call).
fn hooks_of(s: &Session, e: &Event) {
    use crate::hooks::HookEvent;
    match e {
        Event::Failed { task, reason } => s.hooks.fire(
            HookEvent::TaskFailed,
            // Screened as the journal screens it (design: secrets.redaction).
            serde_json::json!({"run": s.run, "task": task, "reason": s.secrets.redact(reason)}),
        ),
        Event::Step { .. } | Event::AttemptFailed { .. } | Event::Landed { .. }
            if s.hooks.wants(HookEvent::BudgetSpent80) =>
        {
            let spent = s.ledger.spent(&s.run).unwrap_or(0.0);
            s.hooks.spent(&s.run, spent, s.cfg.llm.budget.dollars);
        }
        _ => {}
    }
}

/// Journals the run's end: `stopped` when the report says the build stopped early.
pub fn finish(s: &Session, report: &BuildReport) {
    let status = if report.stopped.is_some() {
        "stopped"
    } else {
        "finished"
    };
    if let Err(e) = s.journal.finish_run(&s.run, status) {
        tracing::error!(run = %s.run, error = %e, "the journal could not record the run's end");
    }
}

/// Fires the `build_finished` hooks with how the build ended, and waits for every hook the
/// build fired (each bounded by its timeout): the ones that did not end well, for the
/// caller to report (design: project.hooks).
pub fn finish_hooks(
    s: &Session,
    report: &BuildReport,
    exit: i32,
) -> Vec<crate::hooks::HookFailure> {
    use specc_state::TaskState;
    let count = |state| report.count(state);
    let fields = serde_json::json!({
        "run": s.run,
        "outcome": if exit == 0 { "landed" } else { "failed" },
        "exit": exit,
        "landed": count(TaskState::Landed),
        "up_to_date": count(TaskState::UpToDate),
        "failed": count(TaskState::Failed),
        "skipped": count(TaskState::Skipped),
        "commits": report.commits,
        "stopped": report.stopped,
        "dollars": s.ledger.spent(&s.run).unwrap_or(0.0),
        "out": s.out,
    });
    s.hooks.fire(crate::hooks::HookEvent::BuildFinished, fields);
    s.hooks.finish()
}
