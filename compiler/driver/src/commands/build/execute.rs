//! `specc build`'s work: its progress display, serve's HTTP for remote workers when
//! serving, and the run itself through `specc_project::execute`, whose events and
//! evaluations are shown here.
//! design: driver.build

use std::io::Write;

use specc_ir::{Diagnostic, codes};
use specc_llm::Role;
use specc_project::execute::{Observer, Run};
use specc_runtime::eval::Seen;
use specc_runtime::{BuildReport, Event, Plan, Workers};

use super::{evals, progress};
use crate::Env;
use crate::cli::{BuildArgs, MessageFormat};
use crate::commands::pins;
use crate::commands::serve::{OFFERED, Serving, drain as drain_workers, start as start_serving};
use specc_project::session::Session;

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
    let mode = match args.messages.message_format {
        MessageFormat::Json => progress::Mode::Json,
        MessageFormat::Human if env.stderr_is_terminal => progress::Mode::Bar,
        MessageFormat::Human => progress::Mode::Plain,
    };
    let progress = progress::Progress::new(mode, plan.orders.len(), sink);
    let served = match serving.map(|serving| start_serving(s, serving)) {
        Some(Err(e)) => {
            return BuildReport {
                stopped: Some(e.to_string()),
                ..BuildReport::default()
            };
        }
        served => served.and_then(Result::ok),
    };
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
    let run = Run {
        spec: &args.spec,
        workers,
        gauges: args.gauges.clone(),
        signals: env.signals,
        pins: Some(std::sync::Arc::new(pins::DriverPins)),
    };
    let shown = Shown {
        s,
        progress: &progress,
    };
    let report = specc_project::execute::execute(s, plan, run, &shown);
    if let Some((_, shared)) = &served {
        drain_workers(s, shared);
    }
    progress.finish();
    specc_project::execute::finish(s, &report);
    report
}

/// The build's events and evaluations on the progress display, with what it has spent.
struct Shown<'a, 'p> {
    s: &'a Session,
    progress: &'a progress::Progress<'p>,
}

impl Observer for Shown<'_, '_> {
    fn event(&self, e: &Event) {
        self.progress.event(e);
        self.progress.spent(
            || self.s.ledger.spent(&self.s.run).unwrap_or(0.0),
            self.s.cfg.llm.budget.dollars,
        );
    }

    fn eval(&self, seen: Seen<'_>) {
        evals::show(self.progress, seen);
    }
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
