//! Running a planned build's work leaves, here or (for `specc serve`) on remote workers,
//! with its progress shown and its evaluations beside it; the run's start and end
//! journaled.
//! design: driver.build

use std::io::Write;

use specc_ir::{Diagnostic, codes};
use specc_llm::Role;
use specc_runtime::eval::{Progress as Landings, Seen};
use specc_runtime::{BuildReport, Event, Intents, Plan, Services, Slots, Workers};

use super::{evals, progress};
use crate::Env;
use crate::cli::{BuildArgs, MessageFormat};
use crate::commands::pins;
use crate::commands::serve::{OFFERED, Serving, drain as drain_workers, start as start_serving};
use specc_project::session::Session;
use specc_project::signals;

/// Runs the plan's work leaves (here, or with `serving` on remote workers), showing
/// progress on `sink`.
pub(super) fn execute(
    s: &Session,
    args: &BuildArgs,
    env: &Env,
    plan: Plan,
    serving: Option<Serving>,
    sink: &mut dyn Write,
) -> BuildReport {
    let policy = specc_project::policy::policy(&s.cfg);
    let mode = match args.messages.message_format {
        MessageFormat::Json => progress::Mode::Json,
        MessageFormat::Human if env.stderr_is_terminal => progress::Mode::Bar,
        MessageFormat::Human => progress::Mode::Plain,
    };
    let progress = progress::Progress::new(mode, plan.orders.len(), sink);
    let (sender, receiver) = tokio::sync::watch::channel(Landings::default());
    let watch = LandingWatch {
        sender,
        receiver,
        gauges: args.gauges.clone(),
    };
    let on_event = |e: Event| {
        if matches!(e, Event::Landed { .. }) {
            watch.sender.send_modify(|p| p.landings += 1);
        }
        progress.event(&e);
        progress.spent(
            || s.ledger.spent(&s.run).unwrap_or(0.0),
            s.cfg.llm.budget.dollars,
        );
    };
    let slots = Slots::new(s.state.join("work"));
    let intents = Intents::default();
    // Decisions settled in earlier builds (design: runtime.contested-decisions); a journal
    // that cannot be read settles nothing anew.
    let settled = specc_runtime::Settled::load(&s.journal).unwrap_or_default();
    let services = Services {
        client: &s.client,
        journal: &s.journal,
        repo: &s.repo,
        runner: s.runner.clone(),
        run: &s.run,
        work: s.state.join("work"),
        slots: &slots,
        intents: &intents,
        pins: Some(std::sync::Arc::new(pins::DriverPins)),
        policy: &policy,
        events: &on_event,
        landings: Default::default(),
        settled: std::sync::Arc::new(settled),
        spec: plan.spec.clone(),
    };
    let served = match serving.map(|serving| start_serving(s, serving)) {
        Some(Err(e)) => {
            return BuildReport {
                stopped: Some(e.to_string()),
                ..BuildReport::default()
            };
        }
        served => served.and_then(Result::ok),
    };
    let _ = s
        .journal
        .start_run(&s.run, &args.spec.display().to_string());
    let workers = match &served {
        // Leaves offered at once: the workers' claims, not this process, limit the work.
        Some((dispatch, _)) => Workers::Remote {
            dispatch,
            offered: args.jobs.unwrap_or(OFFERED),
        },
        None => Workers::Local {
            jobs: local_jobs(s, args),
        },
    };
    let report = run_leaves(s, env, &services, plan, workers, &watch, &progress);
    if let Some((_, shared)) = &served {
        drain_workers(s, shared);
    }
    progress.finish();
    let status = if report.stopped.is_some() {
        "stopped"
    } else {
        "finished"
    };
    if let Err(e) = s.journal.finish_run(&s.run, status) {
        tracing::error!(run = %s.run, error = %e, "the journal could not record the run's end");
    }
    report
}

/// The attempts a local build runs at once: `--jobs`, `[build] jobs`, or 4.
pub(super) fn local_jobs(s: &Session, args: &BuildArgs) -> usize {
    args.jobs.or(s.cfg.jobs).unwrap_or(4)
}

/// W0413 when the workers' provider (or role) lets fewer calls out at once than `jobs`
/// attempts would make: the others wait for a permit (design: perf.width).
pub(super) fn narrow_provider(llm: &specc_llm::LlmConfig, jobs: usize) -> Option<Diagnostic> {
    let role = llm.role(Role::Worker)?;
    // A recording answers at once: only a live model's permits are worth a word.
    let provider = llm
        .providers
        .get(&role.provider)
        .filter(|p| p.kind != specc_llm::ProviderKind::Replay)?;
    let allowed = role
        .concurrency
        .map_or(provider.concurrency, |c| c.min(provider.concurrency));
    if allowed >= jobs {
        return None;
    }
    let (limit, table) = if role.concurrency.is_some_and(|c| c < provider.concurrency) {
        ("the worker role", "[roles.worker]".to_owned())
    } else {
        (
            "the workers' provider",
            format!("[providers.{}]", role.provider),
        )
    };
    Some(
        Diagnostic::new(
            codes::NARROW_PROVIDER,
            format!(
                "{jobs} jobs, but {limit} lets {allowed} model call{} out at once: the other attempts wait for one",
                if allowed == 1 { "" } else { "s" }
            ),
        )
        .with_help(format!(
            "raise `concurrency` in {table} if the provider allows more, or lower `jobs`; see `specc explain W0413`"
        )),
    )
}

/// The landings the evaluations follow, and the build's end; where its gauges go.
struct LandingWatch {
    sender: tokio::sync::watch::Sender<Landings>,
    receiver: tokio::sync::watch::Receiver<Landings>,
    gauges: Option<std::path::PathBuf>,
}

/// The build on the session's runtime, stopped cleanly by SIGTERM or SIGINT when the binary
/// listens for them, with `[eval]`'s evaluations beside it when configured.
fn run_leaves(
    s: &Session,
    env: &Env,
    services: &Services<'_>,
    plan: Plan,
    workers: Workers<'_>,
    watch: &LandingWatch,
    progress: &progress::Progress<'_>,
) -> BuildReport {
    let halt = env.signals.then(|| s.client.halt_switch());
    let db = s.ledger.state_db();
    let build = async {
        let build = async {
            let build = specc_runtime::build(services, plan, workers);
            match &watch.gauges {
                // Sampled while the build runs (design: perf.width).
                Some(file) => tokio::select! {
                    biased;
                    report = build => report,
                    never = super::gauges::sample(file, services, &db) => match never {},
                },
                None => build.await,
            }
        };
        // The handlers are installed (on the first poll) before the work begins.
        let report = match halt {
            Some(halt) => tokio::select! {
                biased;
                never = signals::stop_on_signals(halt) => match never {},
                report = build => report,
            },
            None => build.await,
        };
        watch.sender.send_modify(|p| p.ended = true);
        report
    };
    match evals::evaluator(s) {
        Some(ev) => {
            let seen = |p: Seen<'_>| evals::show(progress, p);
            let receiver = watch.receiver.clone();
            let during = specc_runtime::eval::during_build(&ev, &db, &s.run, receiver, &seen);
            s.rt.block_on(async { tokio::join!(build, during).0 })
        }
        None => s.rt.block_on(build),
    }
}
