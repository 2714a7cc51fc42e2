//! `specc build SPEC`: parse → open the build's state (`session`) → plan (the planner cache
//! of `specc plan`) → run every work leaf (`specc_runtime::build`) → export to `out/` →
//! `specc check` on the result → summary. State lives in `.specc/` beside the spec: the
//! ledger and the journal (`state.db`), the VCS store (`vcs/`), the planner cache, and the
//! workers' checkouts (`work/`).
//! design: driver.build

pub(super) mod evals;
mod execute;
mod outcome;
mod progress;
mod screen;

mod summary;

use std::io::Write;
use std::time::Instant;

use specc_ir::{Diagnostic, IntentTree, codes};
use specc_plan::field_guide;

use self::execute::execute;
use self::outcome::{check_out_dir, outcome_diagnostics};
use super::serve::Serving;
use crate::cli::{Approve, BuildArgs, BuildProvider, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};
use specc_project::build_plan::{PlannedBuild, plan};
use specc_project::config;
use specc_project::session::Session;

pub(crate) fn run(args: &BuildArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.dry_run {
        return dry_run(args, env, out, err, false);
    }
    if stops_for_approval(args) {
        return approve_plan(args, env, out, err);
    }
    if args.provider == BuildProvider::Outline {
        let mut reporter = Reporter::new(args.messages.message_format, env);
        let d = Diagnostic::new(
            codes::INVALID_CONFIG,
            "`--provider outline` plans without a model, so no worker could carry the plan out",
        )
        .with_help("use it with `--dry-run` to preview a plan's shape and cost for free");
        reporter.report(&Files::default(), &d, err);
        return exit::USAGE;
    }
    run_with(args, None, env, out, err)
}

/// Whether this build stops after planning for approval: `--approve plan`, or
/// `[build] approve = "plan"` without `--approve` (design: driver.approval).
pub(in crate::commands) fn stops_for_approval(args: &BuildArgs) -> bool {
    match args.approve {
        Some(Approve::Plan) => true,
        Some(Approve::Saved) => false,
        None => {
            let dir = specc_project::spec_dir(Some(&args.spec));
            // A specc.toml that cannot be read is reported by the build that follows.
            config::load_file(args.config.as_deref(), &dir).is_ok_and(|c| c.approve_plan)
        }
    }
}

/// `specc build --approve plan`: the preview of `--dry-run`, and the plan saved for
/// `specc build --approve` (design: driver.approval).
pub(in crate::commands) fn approve_plan(
    args: &BuildArgs,
    env: &Env,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    if args.provider == BuildProvider::Outline {
        let mut reporter = Reporter::new(args.messages.message_format, env);
        let d = Diagnostic::new(
            codes::INVALID_CONFIG,
            "`--provider outline` plans without a model: its plan is not one a build could run, so it cannot be approved",
        )
        .with_help("preview it with `--dry-run`, or approve the planner's plan without `--provider outline`");
        reporter.report(&Files::default(), &d, err);
        return exit::USAGE;
    }
    dry_run(args, env, out, err, true)
}

/// `specc build --dry-run`: `specc plan --emit tasks --estimate` with the build's options
/// (design: driver.preview); with `approve`, the plan is saved for approval.
fn dry_run(
    args: &BuildArgs,
    env: &Env,
    out: &mut dyn Write,
    err: &mut dyn Write,
    approve: bool,
) -> i32 {
    let plan = crate::cli::PlanArgs {
        spec: args.spec.clone(),
        emit: crate::cli::Emit::Tasks,
        format: args.format,
        provider: match args.provider {
            BuildProvider::Config => crate::cli::ProviderChoice::Config,
            BuildProvider::Replay => crate::cli::ProviderChoice::Replay,
            BuildProvider::Outline => crate::cli::ProviderChoice::Outline,
        },
        recording: args.recording.clone(),
        record: args.record.clone(),
        config: args.config.clone(),
        estimate: true,
        approve,
        messages: crate::cli::MessageArgs {
            message_format: args.messages.message_format,
            error_limit: args.messages.error_limit,
        },
    };
    super::plan::run(&plan, env, out, err)
}

/// `specc build`, or with `serving`, `specc serve`: the leaves go to remote workers.
pub(in crate::commands) fn run_with(
    args: &BuildArgs,
    serving: Option<Serving>,
    env: &Env,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let started = Instant::now();
    // The trace's root: planning, the tasks and the export are in it (design:
    // runtime.traces).
    let span =
        tracing::error_span!("build", spec = %args.spec.display(), run = tracing::field::Empty);
    let _in_build = span.enter();
    let mut reporter =
        Reporter::new(args.messages.message_format, env).with_limit(args.messages.error_limit());
    let mut files = Files::default();
    let opened = open(args, env, &mut files, &mut reporter, err).and_then(|(tree, s)| {
        // Said before planning, which may take a while: remote workers bring their own
        // providers, so only a local build's are judged.
        if serving.is_none()
            && let Some(d) = execute::narrow_provider(&s.cfg.llm, execute::local_jobs(&s, args))
        {
            reporter.report(&files, &d, err);
        }
        planned(args, &s, &tree, &files, &mut reporter, err).map(|p| (s, p))
    });
    let (s, planned) = match opened {
        Ok(opened) => opened,
        Err(status) => {
            reporter.flush_suppressed(err);
            return status;
        }
    };
    span.record("run", s.run.as_str());
    let json = args.messages.message_format == MessageFormat::Json;
    let report = {
        let sink: &mut dyn Write = if json { &mut *out } else { &mut *err };
        execute(&s, args, env, planned.plan, serving, sink)
    };
    for d in outcome_diagnostics(&s, &args.spec, &report)
        .into_iter()
        .chain(crate::reporter::recording_warning(&s.client))
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
        redacted: s.secrets.counts(),
    };
    let _ = if json {
        summary.write_json(out)
    } else {
        summary.write_text(out)
    };
    let status = if reporter.status() != exit::OK || check.status != exit::OK {
        exit::ERRORS
    } else {
        exit::OK
    };
    // The user's hooks are told last, and their failures are warnings (design:
    // project.hooks): the build's outcome is already decided.
    for f in specc_project::execute::finish_hooks(&s, &report, status) {
        reporter.report(&files, &crate::command_error::hook(&f), err);
    }
    status
}

/// The spec parsed and the build's state opened, with what the user must be told about
/// them; `Err` is the exit status (the diagnostics are reported).
fn open(
    args: &BuildArgs,
    env: &Env,
    files: &mut Files,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) -> Result<(IntentTree, Session), i32> {
    let tree = super::plan::parse(&args.spec, args.config.as_deref(), files, reporter, err)?;
    if reporter.counts().0 > 0 {
        return Err(exit::ERRORS); // the spec's errors are above; nothing is planned from them
    }
    // An adopted package's test command, kept with its package: every task that writes
    // there runs it (design: driver.adopt).
    let kept = specc_passes::adopted::kept_checks(&tree);
    let tree = specc_project::planning::planned_part(tree, |d| reporter.report(files, d, err));
    let mut s = Session::open(&opening(args), &env.overrides()).map_err(|e| {
        let (d, status) = crate::command_error::build(&e);
        reporter.report(files, &d, err);
        status
    })?;
    s.adopted_checks = kept;
    if s.resumed {
        let _ = writeln!(
            err,
            "resuming build {}: it stopped before it finished; journaled work is not done or paid for again",
            s.run
        );
    }
    if let Some((files, left_out)) = s.adopted_files {
        let _ = writeln!(
            err,
            "adopted {}: its main ({files} files{}) is the base every task starts from",
            s.out.display(),
            match left_out {
                0 => String::new(),
                n => format!("; {n} symlinks or submodules stay in git only"),
            }
        );
    }
    if s.imported > 0 {
        let _ = writeln!(
            err,
            "imported {} commit{} made in {} into the build's history: the build works on top of {}",
            s.imported,
            if s.imported == 1 { "" } else { "s" },
            s.out.display(),
            if s.imported == 1 { "it" } else { "them" },
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
        reporter.report(files, &d, err);
    }
    Ok((tree, s))
}

/// The build's plan, with planning's diagnostics reported and `--force` checked against its
/// work tasks; `Err` is the exit status.
fn planned(
    args: &BuildArgs,
    s: &Session,
    tree: &IntentTree,
    files: &Files,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) -> Result<PlannedBuild, i32> {
    let guide = field_guide::load(&s.dir, s.cfg.limits.field_guide_lines);
    if let Some(w) = &guide.warning {
        reporter.report(files, w, err);
    }
    let approved = args.approve == Some(Approve::Saved);
    let mut planned =
        s.rt.block_on(plan(s, tree, &guide.text, approved, &args.spec))
            .map_err(|refused| {
                let (problems, status) = crate::command_error::plan_refused(refused, &args.spec);
                for d in &problems {
                    reporter.report(files, d, err);
                }
                status
            })?;
    for d in &planned.diagnostics {
        reporter.report(files, d, err);
    }
    for a in &planned.edited {
        let _ = writeln!(
            err,
            "plan: decision `{}` as edited by hand in {}",
            a.id, a.file
        );
    }
    let unknown: Vec<&String> = args
        .force
        .iter()
        .filter(|f| !planned.plan.orders.iter().any(|o| &o.task.id == *f))
        .collect();
    if !unknown.is_empty() {
        let leaves: Vec<&str> = planned
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
        reporter.report(files, &d, err);
        return Err(exit::USAGE);
    }
    planned.plan.force = args.force.clone();
    Ok(planned)
}

/// What `specc build`'s arguments say to open.
fn opening(args: &BuildArgs) -> specc_project::session::Open {
    specc_project::session::Open {
        spec: args.spec.clone(),
        source: args.source(),
        out: args.out.clone(),
        record: args.record.clone(),
    }
}
