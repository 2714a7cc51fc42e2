//! `specc build SPEC`: parse → plan (the planner cache of `specc plan`) → run every work leaf
//! (`specc_runtime::build`) → `specc check` on the result → export to `out/`. State lives in
//! `.specc/` beside the spec: the ledger and the journal (`state.db`), the VCS store
//! (`vcs/`), the planner cache, and the workers' checkouts (`work/`).
//! design: driver.build

mod config;
mod out_dir;
mod progress;
mod summary;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use specc_ir::plan::ChildKind;
use specc_ir::{Diagnostic, IntentTree, codes};
use specc_llm::{Client, Ledger, Role};
use specc_passes::plan::{LowerOptions, design_docs, lower};
use specc_runtime::acceptance::CheckLimits;
use specc_runtime::agent::AttemptLimits;
use specc_runtime::attempt::{Services, Settings};
use specc_runtime::build::{self as runtime_build, Plan};
use specc_runtime::journal::Journal;
use specc_runtime::plan_tree::{Cache, plan_tree};
use specc_runtime::runner::{Confinement, ProcessRunner, Runner};
use specc_runtime::tools::CommandLimits;
use specc_runtime::{field_guide, orders};

use super::Reporter;
use crate::cli::{BuildArgs, MessageFormat};
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &BuildArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let started = Instant::now();
    let mut reporter = Reporter::new(args.messages.message_format, env);
    let mut files = Files::default();
    let tree = match super::plan::parse(&args.spec, &mut files, &mut reporter, err) {
        Ok(tree) => tree,
        Err(status) => return status,
    };
    if reporter.counts().0 > 0 {
        return exit::ERRORS; // the spec's errors are above; nothing is planned from them
    }
    let setup = |reporter: &mut Reporter, err: &mut dyn Write, message: String| {
        let d = Diagnostic::new(codes::BUILD_SETUP, message)
            .with_help("see `specc explain E0406`".to_owned());
        reporter.report(&files, &d, err);
        exit::USAGE
    };
    let dir = spec_dir(&args.spec);
    let state = dir.join(".specc");
    let cfg = match config::load(args, &dir, &state) {
        Ok(c) => c,
        Err(e) => return setup(&mut reporter, err, e),
    };
    let out_path = args
        .out
        .clone()
        .or_else(|| cfg.out.clone())
        .unwrap_or_else(|| dir.join("out"));
    if let Err(e) = out_dir::check_clean(&out_path) {
        let d = Diagnostic::new(codes::OUT_DIR_CHANGED, e)
            .with_help("see `specc explain E0403`; nothing was overwritten".to_owned());
        reporter.report(&files, &d, err);
        return exit::ERRORS;
    }
    let runner = ProcessRunner {
        secret_vars: cfg.key_vars.clone(),
    };
    // Live models are any role answered by an HTTP provider (scripted answers and
    // recordings are not).
    let live = env.models.is_none()
        && cfg.llm.roles.values().any(|r| {
            cfg.llm
                .providers
                .get(&r.provider)
                .is_some_and(|p| p.kind != specc_llm::config::ProviderKind::Replay)
        });
    if runner.confinement() == Confinement::Weaker && live {
        if !cfg.allow_weaker {
            let d = Diagnostic::new(
                codes::WEAKER_SANDBOX,
                "the full sandbox is not available here, and this build would run live models' commands",
            )
            .with_help("build from a recording (--provider replay), or set `[sandbox] allow_weaker = true` in specc.toml".to_owned());
            reporter.report(&files, &d, err);
            return exit::USAGE;
        }
        let d = Diagnostic::new(
            codes::WEAKER_SANDBOX_ALLOWED,
            "models' commands run with partial confinement only ([sandbox] allow_weaker = true)",
        );
        reporter.report(&files, &d, err);
    }
    let ledger = match Ledger::open(&state.join("state.db")) {
        Ok(l) => Arc::new(l),
        Err(e) => return setup(&mut reporter, err, format!("the state database: {e}")),
    };
    let journal = match Journal::open(&state.join("state.db")) {
        Ok(j) => j,
        Err(e) => return setup(&mut reporter, err, e.to_string()),
    };
    let opened = std::fs::create_dir_all(state.join("vcs")).and_then(|()| {
        specc_vcs::Repo::open(
            &state.join("vcs").join("log"),
            specc_vcs::Options::default(),
        )
    });
    let repo = match opened {
        Ok(r) => r,
        Err(e) => {
            return setup(
                &mut reporter,
                err,
                format!("the VCS store in .specc/vcs: {e}"),
            );
        }
    };
    let run_id = format!(
        "build-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let budget = cfg.llm.budget.dollars;
    let escalation = cfg.llm.role(Role::Escalation).is_some();
    let worker_tokens = cfg.llm.role(Role::Worker).map_or(4096, |r| r.max_tokens);
    let limits = cfg.limits;
    let key_env = |var: &str| std::env::var(var).ok();
    let mut client = Client::from_config(cfg.llm.clone(), &key_env, args.record.as_deref());
    if let Some(models) = &env.models {
        let provider = match &args.record {
            Some(path) => Arc::new(specc_llm::Recorder::new(models.0.clone(), path))
                as Arc<dyn specc_llm::Provider>,
            None => models.0.clone(),
        };
        let names: Vec<String> = cfg.llm.providers.keys().cloned().collect();
        for name in names {
            client = client.with_provider(&name, provider.clone(), 8);
        }
    }
    let client = client.with_ledger(ledger.clone(), &run_id);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return setup(&mut reporter, err, format!("no async runtime: {e}")),
    };
    let guide = field_guide::load(&dir, limits.field_guide_lines);
    let plan = match rt.block_on(plan_spec(&client, &tree, &cfg, &guide.text, &state)) {
        Ok(p) => p,
        Err(message) => {
            let d = Diagnostic::new(codes::PLANNING_FAILED, message).with_help(
                "see `specc explain E0309`; `specc cost` shows the calls made".to_owned(),
            );
            reporter.report(&files, &d, err);
            return exit::ERRORS;
        }
    };
    for d in &plan.diagnostics {
        reporter.report(&files, d, err);
    }
    let mut seed = plan.seed;
    if !guide.text.is_empty() {
        seed.insert(field_guide::PATH.to_owned(), guide.text.clone());
    }
    let settings = Settings {
        attempt: AttemptLimits {
            max_steps: limits.steps,
            max_tokens: limits.attempt_tokens,
            wall: Duration::from_secs(limits.attempt_seconds),
        },
        commands: CommandLimits {
            timeout: Duration::from_secs(limits.command_seconds),
            output_cap: limits.output_bytes,
        },
        checks: CheckLimits {
            timeout: Duration::from_secs(limits.command_seconds),
            output_cap: limits.output_bytes,
        },
        guide_lines: limits.field_guide_lines,
        escalation,
        worker_max_tokens: worker_tokens,
        env: Vec::new(),
    };
    let leaves = plan.orders.len();
    let mode = match args.messages.message_format {
        MessageFormat::Json => progress::Mode::Json,
        MessageFormat::Human if env.stderr_is_terminal => {
            progress::Mode::Bar(indicatif::ProgressBar::new(leaves as u64))
        }
        MessageFormat::Human => progress::Mode::Plain,
    };
    let json = args.messages.message_format == MessageFormat::Json;
    let report = {
        let sink: &mut dyn Write = if json { &mut *out } else { &mut *err };
        let progress = progress::Progress::new(mode, leaves, sink);
        let on_event = |e: specc_runtime::Event| {
            progress.event(&e);
            progress.spent(ledger.spent(&run_id).unwrap_or(0.0), budget);
        };
        let services = Services {
            client: &client,
            journal: &journal,
            repo: &repo,
            runner: Arc::new(runner) as Arc<dyn Runner>,
            run: &run_id,
            work: state.join("work"),
            settings: &settings,
            events: &on_event,
        };
        let _ = journal.start_run(&run_id, &args.spec.display().to_string());
        let jobs = args.jobs.or(cfg.jobs).unwrap_or(4);
        let plan = Plan {
            tasks: plan.tasks,
            orders: plan.orders,
            seed,
        };
        let report = rt.block_on(runtime_build::build(&services, plan, jobs));
        progress.finish();
        report
    };
    let _ = journal.finish_run(
        &run_id,
        if report.stopped.is_some() {
            "stopped"
        } else {
            "finished"
        },
    );
    // Export what landed, whatever else happened: landed work is never held back.
    let exported = out_dir::check_clean(&out_path)
        .and_then(|()| {
            rt.block_on(repo.export_git(&out_path))
                .map_err(|e| e.to_string())
        })
        .and_then(|_| out_dir::check_out(&out_path));
    if let Err(e) = exported {
        let d = Diagnostic::new(
            codes::OUT_DIR_CHANGED,
            format!("exporting to {}: {e}", out_path.display()),
        )
        .with_help("see `specc explain E0403`".to_owned());
        reporter.report(&files, &d, err);
    }
    for t in report
        .tasks
        .iter()
        .filter(|t| t.state == specc_runtime::journal::TaskState::Failed)
    {
        let d = Diagnostic::new(
            codes::TASK_FAILED,
            format!(
                "task `{}` failed: {}",
                t.id,
                t.reason.clone().unwrap_or_default()
            ),
        )
        .with_help("see `specc explain E0401`".to_owned());
        reporter.report(&files, &d, err);
    }
    if let Some(why) = &report.stopped {
        let d = Diagnostic::new(
            codes::BUILD_STOPPED,
            format!("the build stopped early: {why}"),
        )
        .with_help("see `specc explain E0402`".to_owned());
        reporter.report(&files, &d, err);
    }
    // The result is checked like any tree: `design:` references against its design-docs/.
    let check_status = if out_path.join(".git").exists() {
        let check = crate::cli::CheckArgs {
            path: out_path.clone(),
            spec: Some(args.spec.clone()),
            unreferenced: false,
            watch: false,
            watch_limit: None,
            messages: crate::cli::MessageArgs {
                message_format: args.messages.message_format,
            },
        };
        let mut sink = Vec::new();
        let status = super::check::run(&check, env, &mut sink, err);
        summary::CheckOutcome {
            status,
            text: String::from_utf8_lossy(&sink).into_owned(),
        }
    } else {
        summary::CheckOutcome {
            status: exit::OK,
            text: String::new(),
        }
    };
    let rows = ledger.rows().unwrap_or_default();
    let rows: Vec<_> = rows.into_iter().filter(|r| r.run == run_id).collect();
    let s = summary::Summary {
        report: &report,
        rows: &rows,
        elapsed: started.elapsed(),
        out: &out_path,
        check: &check_status,
        run: &run_id,
    };
    let _ = if json {
        s.write_json(out)
    } else {
        s.write_text(out)
    };
    if reporter.status() != exit::OK || check_status.status != exit::OK {
        exit::ERRORS
    } else {
        exit::OK
    }
}

fn spec_dir(spec: &Path) -> PathBuf {
    spec.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// A planned spec, lowered and ready to run.
struct PlannedSpec {
    tasks: Vec<specc_ir::plan::TaskNode>,
    orders: Vec<specc_runtime::context::WorkOrder>,
    /// The planned design documents, by repository path.
    seed: BTreeMap<String, String>,
    diagnostics: Vec<Diagnostic>,
}

/// Plans `tree` with the planner cache in `state`, lowers it, and gathers each work leaf's
/// order.
async fn plan_spec(
    client: &Client,
    tree: &IntentTree,
    cfg: &config::BuildConfig,
    guide: &str,
    state: &Path,
) -> Result<PlannedSpec, String> {
    let mut limits = cfg.limits;
    if let Some(r) = cfg.llm.role(Role::Planner) {
        limits.max_tokens = r.max_tokens;
    }
    let cache_path = state.join("plan-cache.json");
    let mut cache: Cache = match std::fs::read(&cache_path) {
        Ok(b) => serde_json::from_slice(&b).unwrap_or_default(),
        Err(_) => Cache::default(),
    };
    let planned = plan_tree(client, tree, limits, guide, &mut cache).await;
    if let Ok(bytes) = serde_json::to_vec(&cache) {
        let tmp = cache_path.with_extension("json.tmp");
        let _ = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &cache_path));
    }
    let planned = planned.map_err(|e| match e {
        specc_runtime::planner::PlanError::Model(e) => format!("a planner call failed: {e}"),
        specc_runtime::planner::PlanError::Invalid { task, problems } => format!(
            "the planner's answer for {} stayed invalid: {}",
            specc_passes::plan::task_name(&task),
            problems
                .iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        specc_runtime::planner::PlanError::Unsettled(ids) => {
            format!("the planners kept deciding differently: {}", ids.join(", "))
        }
    })?;
    let spec_decisions: Vec<String> = tree
        .nodes()
        .flat_map(|n| n.decisions.iter())
        .filter_map(|d| d.id.clone())
        .collect();
    let model = |role: Role, fallback: &str| {
        cfg.llm
            .role(role)
            .map_or_else(|| fallback.to_owned(), |r| r.model.clone())
    };
    let options = LowerOptions {
        planner_model: model(Role::Planner, "planner"),
        worker_model: model(Role::Worker, "worker"),
        planner_budget: limits.max_tokens,
        worker_budget: cfg.llm.role(Role::Worker).map_or(4096, |r| r.max_tokens),
    };
    let tasks = lower(&planned.answers, &spec_decisions, &options);
    let decisions: Vec<_> = planned
        .answers
        .values()
        .flat_map(|a| a.decisions.iter().cloned())
        .collect();
    let seed = design_docs(&decisions)
        .into_iter()
        .map(|(file, text)| (format!("design-docs/planned-{file}"), text))
        .collect();
    let (orders, unrunnable) = orders::work_orders(tree, &tasks, &decisions);
    let mut diagnostics = planned.diagnostics;
    for u in unrunnable {
        diagnostics.push(
            Diagnostic::new(
                codes::CHECK_NOT_RUN,
                format!(
                    "the `{}` test block of `{}` does not gate task `{}`: specc build cannot run it yet",
                    u.runner, u.node, u.task
                ),
            ),
        );
    }
    debug_assert!(orders.iter().all(|o| o.task.kind == ChildKind::Work));
    Ok(PlannedSpec {
        tasks,
        orders,
        seed,
        diagnostics,
    })
}
