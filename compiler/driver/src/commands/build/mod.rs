//! `specc build SPEC`: parse → open the build's state (`session`) → plan (the planner cache
//! of `specc plan`) → run every work leaf (`specc_runtime::build`) → export to `out/` →
//! `specc check` on the result → summary. State lives in `.specc/` beside the spec: the
//! ledger and the journal (`state.db`), the VCS store (`vcs/`), the planner cache, and the
//! workers' checkouts (`work/`).
//! design: driver.build

pub(super) mod config;
pub(super) mod evals;
mod out_dir;
mod pins;
pub(in crate::commands) use pins::DriverPins;
mod progress;
pub(super) mod session;
mod signals;
pub(in crate::commands) use signals::stop_on_signals;
mod summary;

use std::collections::BTreeMap;
use std::io::Write;
use std::time::{Duration, Instant};

use specc_ir::{Diagnostic, IntentTree, codes};
use specc_llm::Role;
use specc_passes::plan::design_docs;
use specc_runtime::agent::AttemptLimits;
use specc_runtime::attempt::{Services, Settings};
use specc_runtime::build::{self as runtime_build, BuildReport, Plan};
use specc_runtime::journal::TaskState;
use specc_runtime::runner::CommandLimits;
use specc_runtime::{field_guide, orders};

use self::session::Session;
use super::{Reporter, planning};
use crate::cli::{BuildArgs, MessageFormat};
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &BuildArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    run_with(args, None, env, out, err)
}

/// `specc build`, or with `serving`, `specc serve`: the leaves go to remote workers.
pub(in crate::commands) fn run_with(
    args: &BuildArgs,
    serving: Option<super::serve::Serving>,
    env: &Env,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let started = Instant::now();
    let mut reporter =
        Reporter::new(args.messages.message_format, env).with_limit(args.messages.error_limit());
    let mut files = Files::default();
    let tree = match super::plan::parse(
        &args.spec,
        args.config.as_deref(),
        &mut files,
        &mut reporter,
        err,
    ) {
        Ok(tree) => tree,
        Err(status) => return status,
    };
    if reporter.counts().0 > 0 {
        reporter.flush_suppressed(err);
        return exit::ERRORS; // the spec's errors are above; nothing is planned from them
    }
    let s = match Session::open(args, env) {
        Ok(s) => s,
        Err(refused) => {
            reporter.report(&files, &refused.diagnostic, err);
            reporter.flush_suppressed(err);
            return refused.status;
        }
    };
    if s.resumed {
        let _ = writeln!(
            err,
            "resuming build {}: it stopped before it finished; journaled work is not done or paid for again",
            s.run
        );
    }
    if let Some(missing) = &s.weaker {
        let d = Diagnostic::new(
            codes::WEAKER_SANDBOX_ALLOWED,
            format!(
                "models' commands run with partial confinement only ({missing}; [sandbox] allow_weaker = true){}",
                if s.cfg.eval.is_some() {
                    ": they may be able to read the [eval] tests"
                } else {
                    ""
                }
            ),
        );
        reporter.report(&files, &d, err);
    }
    let guide = field_guide::load(&s.dir, s.cfg.limits.field_guide_lines);
    if let Some(w) = &guide.warning {
        reporter.report(&files, w, err);
    }
    let plan = match s.rt.block_on(plan(&s, &tree, &guide.text)) {
        Ok(p) => p,
        Err((problems, status)) => {
            for d in &problems {
                reporter.report(&files, d, err);
            }
            reporter.flush_suppressed(err);
            return status;
        }
    };
    for d in &plan.diagnostics {
        reporter.report(&files, d, err);
    }
    let mut plan = plan;
    let unknown: Vec<&String> = args
        .force
        .iter()
        .filter(|f| !plan.plan.orders.iter().any(|o| &o.task.id == *f))
        .collect();
    if !unknown.is_empty() {
        let leaves: Vec<&str> = plan
            .plan
            .orders
            .iter()
            .map(|o| o.task.id.as_str())
            .collect();
        let d = Diagnostic::new(
            codes::BUILD_SETUP,
            format!(
                "--force names no work task of the plan: {}",
                unknown
                    .iter()
                    .map(|u| format!("`{u}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with_help(format!("the work tasks are: {}", leaves.join(", ")));
        reporter.report(&files, &d, err);
        reporter.flush_suppressed(err);
        return exit::USAGE;
    }
    plan.plan.force = args.force.clone();
    let json = args.messages.message_format == MessageFormat::Json;
    let report = {
        let sink: &mut dyn Write = if json { &mut *out } else { &mut *err };
        execute(&s, args, env, plan.plan, serving, sink)
    };
    for d in outcome_diagnostics(&s, &report)
        .into_iter()
        .chain(super::recording_warning(&s.client))
    {
        reporter.report(&files, &d, err);
    }
    reporter.flush_suppressed(err);
    let check = check_out_dir(&s, args, env, err);
    let rows: Vec<_> = s
        .ledger
        .rows()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.run == s.run)
        .collect();
    let summary = summary::Summary {
        report: &report,
        rows: &rows,
        elapsed: started.elapsed(),
        out: &s.out,
        check: &check,
        run: &s.run,
    };
    let _ = if json {
        summary.write_json(out)
    } else {
        summary.write_text(out)
    };
    if reporter.status() != exit::OK || check.status != exit::OK {
        exit::ERRORS
    } else {
        exit::OK
    }
}

/// A planned spec, ready to run, and what planning had to say.
struct Planned {
    plan: Plan,
    diagnostics: Vec<Diagnostic>,
}

/// Plans `tree` (the planner cache in `.specc/`), gathers each work leaf's order, and the
/// files the repository is seeded with: the planned design documents and the field guide.
/// A failed plan is its diagnostics and the exit status.
async fn plan(
    s: &Session,
    tree: &IntentTree,
    guide: &str,
) -> Result<Planned, (Vec<Diagnostic>, i32)> {
    let (planned, notes) =
        planning::plan(&s.client, tree, &s.cfg.llm, s.cfg.limits, guide, &s.state).await;
    let planned = planned.map_err(|e| {
        let status = planning::failure_status(&e);
        let mut all = notes.clone();
        all.extend(planning::failure(e));
        (all, status)
    })?;
    let mut seed: BTreeMap<String, String> = design_docs(&planned.decisions)
        .into_iter()
        .map(|(file, text)| (format!("design-docs/planned-{file}"), text))
        .collect();
    if !guide.is_empty() {
        seed.insert(field_guide::PATH.to_owned(), guide.to_owned());
    }
    let (orders, unrunnable) =
        orders::work_orders(tree, &planned.tasks, &planned.decisions, &s.cfg.runners);
    let mut diagnostics = notes;
    diagnostics.extend(planned.tree.diagnostics);
    // A binding requirement no work leaf covers is reported here as in `specc plan`.
    let covered: std::collections::HashSet<String> = planned
        .tasks
        .iter()
        .filter(|t| t.kind == specc_ir::plan::ChildKind::Work)
        .flat_map(|t| t.covers_requirements.iter().cloned())
        .collect();
    diagnostics.extend(specc_passes::plan::uncovered(tree, &covered));
    diagnostics.extend(unrunnable.into_iter().map(|u| {
        Diagnostic::new(
            codes::CHECK_NOT_RUN,
            format!(
                "the `{}` test block of `{}` does not gate task `{}`: specc build cannot run it yet",
                u.runner, u.node, u.task
            ),
        )
    }));
    diagnostics.extend(orders.iter().filter(|o| o.checks.is_empty()).map(|o| {
        Diagnostic::new(
            codes::NO_ACCEPTANCE,
            format!(
                "task `{}` has no acceptance check: whatever it writes lands when it calls `done`",
                o.task.id
            ),
        )
        .with_help("give its requirements a `sh test` block in the spec, or have the planner give it acceptance commands")
    }));
    Ok(Planned {
        plan: Plan {
            tasks: planned.tasks,
            orders,
            seed,
            force: Vec::new(),
        },
        diagnostics,
    })
}

/// The limits and switches of a build's attempts, from specc.toml.
pub(in crate::commands) fn settings(cfg: &config::BuildConfig) -> Settings {
    let limits = cfg.limits;
    Settings {
        attempt: AttemptLimits {
            max_steps: limits.steps,
            max_tokens: limits.attempt_tokens,
            wall: Duration::from_secs(limits.attempt_seconds),
        },
        commands: CommandLimits {
            timeout: Duration::from_secs(limits.command_seconds),
            output_cap: limits.output_bytes,
        },
        guide_lines: limits.field_guide_lines,
        escalation: cfg.llm.role(Role::Escalation).is_some(),
        merger: cfg.llm.role(Role::Merger).is_some(),
        review: cfg.review.clone(),
        worker_max_tokens: planning::worker_max_tokens(&cfg.llm),
    }
}

/// Runs the plan's work leaves (here, or with `serving` on remote workers), showing
/// progress on `sink`; then exports what landed.
fn execute(
    s: &Session,
    args: &BuildArgs,
    env: &Env,
    plan: Plan,
    serving: Option<super::serve::Serving>,
    sink: &mut dyn Write,
) -> BuildReport {
    let settings = settings(&s.cfg);
    let leaves = plan.orders.len();
    let mode = match args.messages.message_format {
        MessageFormat::Json => progress::Mode::Json,
        MessageFormat::Human if env.stderr_is_terminal => progress::Mode::Bar,
        MessageFormat::Human => progress::Mode::Plain,
    };
    let progress = progress::Progress::new(mode, leaves, sink);
    let (landings, watched) = tokio::sync::watch::channel(specc_runtime::eval::Progress::default());
    let on_event = |e: specc_runtime::Event| {
        if matches!(e, specc_runtime::Event::Landed { .. }) {
            landings.send_modify(|p| p.landings += 1);
        }
        progress.event(&e);
        progress.spent(
            || s.ledger.spent(&s.run).unwrap_or(0.0),
            s.cfg.llm.budget.dollars,
        );
    };
    let slots = specc_runtime::slots::Slots::new(s.state.join("work"));
    let intents = specc_runtime::merge::Intents::default();
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
        settings: &settings,
        events: &on_event,
        dispatch: None,
    };
    let served = match serving.map(|serving| super::serve::start(s, serving)) {
        Some(Err(e)) => {
            return BuildReport {
                stopped: Some(e),
                ..BuildReport::default()
            };
        }
        served => served.and_then(Result::ok),
    };
    let services = Services {
        dispatch: served.as_ref().map(|(d, _)| d.as_ref()),
        ..services
    };
    let _ = s
        .journal
        .start_run(&s.run, &args.spec.display().to_string());
    let jobs = match &served {
        // Leaves offered at once: the workers' claims, not this process, limit the work.
        Some(_) => args.jobs.unwrap_or(super::serve::OFFERED),
        None => args.jobs.or(s.cfg.jobs).unwrap_or(4),
    };
    let halt = env.signals.then(|| s.client.halt_switch());
    let build = async {
        let build = runtime_build::build(&services, plan, jobs);
        // The handlers are installed (on the first poll) before the work begins.
        let report = match halt {
            Some(halt) => tokio::select! {
                biased;
                never = signals::stop_on_signals(halt) => match never {},
                report = build => report,
            },
            None => build.await,
        };
        landings.send_modify(|p| p.ended = true);
        report
    };
    let report = match evals::evaluator(s) {
        Some(ev) => {
            let seen = |p: specc_runtime::eval::Seen<'_>| evals::show(&progress, p);
            let db = s.ledger.state_db();
            let during = specc_runtime::eval::during_build(&ev, &db, &s.run, watched, &seen);
            s.rt.block_on(async { tokio::join!(build, during).0 })
        }
        None => s.rt.block_on(build),
    };
    if let Some((_, shared)) = &served {
        super::serve::drain(s, shared);
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

/// The build's errors: an export that failed, failed tasks, an early stop. The export comes
/// first, whatever else happened: landed work is never held back.
fn outcome_diagnostics(s: &Session, report: &BuildReport) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let exported = out_dir::check_clean(&s.out)
        .and_then(|()| out_dir::begin_export(&s.out))
        .and_then(|()| out_dir::export(&s.out, || s.rt.block_on(s.repo.export_git(&s.out))));
    if let Err(e) = exported {
        out.push(
            Diagnostic::new(
                codes::OUT_DIR_CHANGED,
                format!("exporting to {}: {e}", s.out.display()),
            )
            .with_help("see `specc explain E0403`"),
        );
    }
    for t in report.tasks.iter().filter(|t| t.state == TaskState::Failed) {
        out.push(
            Diagnostic::new(
                codes::TASK_FAILED,
                format!(
                    "task `{}` failed: {}",
                    t.id,
                    t.reason.as_deref().unwrap_or_default()
                ),
            )
            .with_help("see `specc explain E0401`"),
        );
    }
    if let Some(why) = &report.stopped {
        out.push(
            Diagnostic::new(
                codes::BUILD_STOPPED,
                format!("the build stopped early: {why}"),
            )
            .with_help("see `specc explain E0402`"),
        );
    }
    out
}

/// `specc check` on the built tree: its `design:` references against its design-docs/.
fn check_out_dir(
    s: &Session,
    args: &BuildArgs,
    env: &Env,
    err: &mut dyn Write,
) -> summary::CheckOutcome {
    if !s.out.join(".git").exists() {
        return summary::CheckOutcome {
            status: exit::OK,
            text: String::new(),
        };
    }
    let check = crate::cli::CheckArgs {
        path: s.out.clone(),
        spec: Some(args.spec.clone()),
        unreferenced: false,
        watch: false,
        watch_limit: None,
        messages: crate::cli::MessageArgs {
            message_format: args.messages.message_format,
            error_limit: args.messages.error_limit,
        },
    };
    let mut text = Vec::new();
    let status = super::check::run(&check, env, &mut text, err);
    summary::CheckOutcome {
        status,
        text: String::from_utf8_lossy(&text).into_owned(),
    }
}
