//! `specc plan SPEC --emit tasks [--provider config|replay|outline] [--record FILE]`: plan the
//! spec's intent tree with the planner model, check the plan, lower it to the Task IR, print it.
//! State lives in `.specc/` beside the spec: the ledger (`state.db`) and the planner-answer
//! cache (`plan-cache.json`), which makes a re-plan after an edit call the model only where
//! the edit reaches. The planner's decisions are written to `design-docs/planned-<area>.md`
//! beside the spec, in the format `specc check` reads.
//! design: driver.plan-tasks

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_ir::plan::{ChildKind, TaskNode};
use specc_ir::{Diagnostic, IntentTree, codes};
use specc_llm::config::{ProviderConfig, ProviderKind, RoleConfig};
use specc_llm::{Client, Ledger, LlmConfig};
use specc_passes::plan::uncovered;
use specc_plan::{Limits, OutlinePlanner, field_guide};

use crate::cli::{Format, PlanArgs, ProviderChoice};
use crate::exit;
use crate::reporter::Reporter;
use crate::source::Files;
use specc_project::config::{ConfigError, TableError};
use specc_project::planning;
use specc_project::planning::edits::Edits;

/// What planning reports through: the environment (scripted models for tests), the spec's
/// files and the reporter.
pub(crate) struct Cx<'a> {
    pub(crate) env: &'a crate::Env,
    pub(crate) files: &'a Files,
    pub(crate) reporter: &'a mut Reporter,
}

pub(crate) fn run(
    args: &PlanArgs,
    tree: &IntentTree,
    cx: Cx<'_>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Cx {
        env,
        files,
        reporter,
    } = cx;
    let dir = specc_project::spec_dir(Some(&args.spec));
    let state = dir.join(".specc");
    // Configuration and I/O: exit 2, as every command.
    let setup = match Setup::open(args, env, &dir, &state) {
        Ok(s) => s,
        Err(d) => {
            reporter.report(files, &d, err);
            return exit::USAGE;
        }
    };
    let guide = field_guide::load(&dir, setup.limits.field_guide_lines);
    if let Some(w) = &guide.warning {
        reporter.report(files, w, err);
    }
    let part =
        specc_project::planning::planned_part(tree.clone(), |d| reporter.report(files, d, err));
    let tree = &part;
    let mut report = |d: &Diagnostic, err: &mut dyn Write| reporter.report(files, d, err);
    let (planned, mut edits) = match plan(&setup, tree, &dir, &guide.text, &mut report, err) {
        Ok(planned) => planned,
        Err(status) => {
            reporter.flush_suppressed(err);
            return status;
        }
    };
    if let Err(status) = keep(args, tree, &state, &planned, &mut edits, &mut report, err) {
        return status;
    }
    let written = match (args.estimate, args.format) {
        (true, format) => {
            let planned = super::preview::PreviewPlan {
                tree,
                tasks: &planned.tasks,
                decisions: &planned.decisions,
                calls: planned.tree.calls,
                outline: args.provider == ProviderChoice::Outline,
            };
            let cx = super::preview::Context {
                dir: &dir,
                llm: &setup.llm,
                steps: setup.limits.steps,
                field_guide: &guide.text,
            };
            super::preview::write(&planned, &cx, format, out)
        }
        (false, Format::Json) => serde_json::to_writer_pretty(&mut *out, &planned.tasks)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out)),
        (false, Format::Text) => write_tasks(&planned.tasks, planned.tree.calls, out),
    };
    if written.is_err() {
        return exit::USAGE;
    }
    if args.approve {
        saved_for_approval(args, &planned, files, reporter, err);
    }
    reporter.finish(err)
}

/// Says how to approve the plan `--approve plan` saved, and tells the hooks waiting for
/// it (design: project.hooks).
fn saved_for_approval(
    args: &PlanArgs,
    planned: &planning::Planned,
    files: &Files,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) {
    let _ = write!(
        err,
        "{}",
        specc_project::planning::approval::saved_message(&args.spec, planned.edited.len())
    );
    let failed = specc_project::planning::approval::awaiting(
        &args.spec,
        args.config.as_deref(),
        &planned.tasks,
        planned.edited.len(),
    );
    for f in failed {
        reporter.report(files, &crate::command_error::hook(&f), err);
    }
}

/// Plans `tree` with the hand edits of `dir`'s planned documents applied, reporting what
/// planning said through `report`; `Err` is the exit status of a failed plan.
fn plan(
    setup: &Setup,
    tree: &IntentTree,
    dir: &Path,
    guide: &str,
    report: &mut dyn FnMut(&Diagnostic, &mut dyn Write),
    err: &mut dyn Write,
) -> Result<(planning::Planned, Edits), i32> {
    let state = dir.join(".specc");
    // The outline planner's decisions are placeholders: a person's edits are neither applied
    // to them nor overwritten by them (design: driver.plan-edits).
    let (mut edits, edit_notes) = if setup.outline {
        (Edits::none(dir, &state), Vec::new())
    } else {
        Edits::gather(dir, &state)
    };
    for d in &edit_notes {
        report(d, err);
    }
    let commands =
        specc_passes::plan::Commands::new(specc_sandbox::commands_on_path(&sandbox_read(dir)));
    let inputs = planning::Inputs {
        client: &setup.client,
        config: &setup.llm,
        limits: setup.limits,
        guide,
        commands: &commands,
        state: &state,
    };
    let (planned, notes) = setup
        .runtime
        .block_on(planning::plan(tree, inputs, &mut edits));
    for d in notes
        .iter()
        .chain(&crate::reporter::recording_warning(&setup.client))
    {
        report(d, err);
    }
    let planned = planned.map_err(|e| {
        let status = crate::command_error::plan_status(&e);
        for d in crate::command_error::plan_failure(e) {
            report(&d, err);
        }
        status
    })?;
    for d in &planned.tree.diagnostics {
        report(d, err);
    }
    Ok((planned, edits))
}

/// What a plan leaves behind: the planned documents beside the spec (hand edits kept), a
/// line per decision taken from an edit, the approval (`--approve plan`), and E0304 for a
/// binding requirement no work leaf covers. `Err` is the exit status of a write that failed.
fn keep(
    args: &PlanArgs,
    tree: &IntentTree,
    state: &Path,
    planned: &planning::Planned,
    edits: &mut Edits,
    report: &mut dyn FnMut(&Diagnostic, &mut dyn Write),
    err: &mut dyn Write,
) -> Result<(), i32> {
    if args.provider != ProviderChoice::Outline
        && let Err(d) = edits.write(&planned.decisions)
    {
        report(&d, err);
        return Err(exit::USAGE);
    }
    for a in &planned.edited {
        let _ = writeln!(
            err,
            "plan: decision `{}` as edited by hand in {}",
            a.id, a.file
        );
    }
    if args.approve
        && let Err(d) = specc_project::planning::approval::save(state, &planned.as_planned)
    {
        report(&d, err);
        return Err(exit::USAGE);
    }
    let covered: HashSet<String> = planned
        .tasks
        .iter()
        .filter(|t| t.kind == ChildKind::Work)
        .flat_map(|t| t.covers_requirements.iter().cloned())
        .chain(planned.waived())
        .collect();
    for d in uncovered(tree, &covered) {
        report(&d, err);
    }
    Ok(())
}

/// specc.toml's `[sandbox] read`, relative to `dir`: what `specc build` passes too, so the
/// plan cache both share holds answers checked against the same commands.
fn sandbox_read(dir: &Path) -> Vec<std::path::PathBuf> {
    let table = std::fs::read_to_string(dir.join("specc.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok());
    let read = table
        .as_ref()
        .and_then(|t| t.get("sandbox")?.get("read")?.as_array().cloned())
        .unwrap_or_default();
    read.iter()
        .filter_map(|v| v.as_str())
        .map(|p| {
            let p = std::path::PathBuf::from(p);
            if p.is_relative() { dir.join(p) } else { p }
        })
        .collect()
}

/// What planning needs before the first call: the configuration, a client of its planner
/// (the outline planner plugged in, `--record` wrapped around it, the ledger in `.specc/`)
/// and the async runtime. Each failure is one diagnostic.
struct Setup {
    /// The outline planner answers, not the configured one.
    outline: bool,
    llm: LlmConfig,
    limits: Limits,
    client: Client,
    runtime: tokio::runtime::Runtime,
}

impl Setup {
    fn open(
        args: &PlanArgs,
        env: &crate::Env,
        dir: &Path,
        state: &Path,
    ) -> Result<Setup, Box<Diagnostic>> {
        let io = |message: String, help: &str| {
            Box::new(Diagnostic::new(codes::IO_ERROR, message).with_help(help.to_owned()))
        };
        let (llm, limits) = load_config(args, dir, state).map_err(|e| {
            Box::new(Diagnostic::new(codes::INVALID_CONFIG, e.to_string()).with_help(
                "fix specc.toml (`specc explain E0006`), or plan offline with --provider outline",
            ))
        })?;
        // The spec goes to planners screened for secrets (design: secrets.redaction).
        let text = std::fs::read_to_string(
            args.config
                .clone()
                .unwrap_or_else(|| dir.join("specc.toml")),
        )
        .unwrap_or_default();
        let secrets = specc_project::secrets::redactor(&specc_project::secrets::allow_list(&text));
        let screen = Arc::new(specc_project::secrets::Secrets(secrets));
        let client = if args.provider == ProviderChoice::Outline {
            let key_env = |var: &str| std::env::var(var).ok();
            let client = Client::from_config(llm.clone(), &key_env, args.record.as_deref())
                .with_redactor(screen);
            let outline: Arc<dyn specc_llm::Provider> = Arc::new(OutlinePlanner::new("outline"));
            let outline = match &args.record {
                Some(path) => {
                    Arc::new(client.recorder(outline, path)) as Arc<dyn specc_llm::Provider>
                }
                None => outline,
            };
            client.with_provider("outline", outline, 1)
        } else {
            // Scripted answers (tests) stand in for every configured provider.
            specc_project::client::build(&llm, args.record.as_deref(), env.models.as_ref())
                .with_redactor(screen)
        };
        let ledger = Ledger::open(&state.join("state.db")).map_err(|e| {
            io(
                format!("the state database: {e}"),
                "check that .specc/ beside the spec is writable",
            )
        })?;
        let client = client.with_ledger(Arc::new(ledger), "plan");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| io(format!("no async runtime: {e}"), "this is a bug"))?;
        Ok(Setup {
            outline: args.provider == ProviderChoice::Outline,
            llm,
            limits,
            client,
            runtime,
        })
    }
}

/// specc.toml (given, or beside the spec), with the planner's provider replaced for
/// `--provider replay|outline`; the roles keep their models, so recordings made with a live
/// provider replay.
fn load_config(
    args: &PlanArgs,
    dir: &Path,
    state: &Path,
) -> Result<(LlmConfig, Limits), ConfigError> {
    let path = args
        .config
        .clone()
        .unwrap_or_else(|| dir.join("specc.toml"));
    let (mut config, limits) = if path.is_file() {
        let text = specc_project::config::read(&path)?;
        let at = |error: TableError| ConfigError::Invalid {
            path: path.clone(),
            error,
        };
        let limits = Limits::from_toml(&text).map_err(|e| at(TableError::Limits(e)))?;
        (
            LlmConfig::parse_at(&text, &path).map_err(|e| at(TableError::Models(e)))?,
            limits,
        )
    } else if args.provider == ProviderChoice::Config {
        return Err(ConfigError::Missing {
            path,
            needed: "to say which model plans",
        });
    } else {
        (LlmConfig::default(), Limits::default())
    };
    let swap =
        |config: &mut LlmConfig, name: &str, kind: ProviderKind, recording: Option<PathBuf>| {
            config.providers.insert(
                name.to_owned(),
                ProviderConfig {
                    kind,
                    base_url: None,
                    api_key_env: None,
                    concurrency: 1,
                    recording: recording.map(|p| p.display().to_string()),
                    timeouts: None,
                },
            );
            // The role keeps its model and its max_tokens (both are in the request's
            // fingerprint), so a recording made live replays here.
            let (model, max_tokens) = config.roles.get("planner").map_or_else(
                || ("planner".to_owned(), specc_llm::config::DEFAULT_MAX_TOKENS),
                |r| (r.model.clone(), r.max_tokens),
            );
            config.roles.insert(
                "planner".to_owned(),
                RoleConfig {
                    provider: name.to_owned(),
                    model,
                    max_tokens,
                    concurrency: None,
                },
            );
        };
    match args.provider {
        ProviderChoice::Config => {}
        ProviderChoice::Replay => {
            let rec = args
                .recording
                .clone()
                .unwrap_or_else(|| state.join("recordings").join("plan.jsonl"));
            swap(&mut config, "replay", ProviderKind::Replay, Some(rec));
        }
        // The provider is plugged in after the client is built; a replay kind with no file
        // stands in for its configuration.
        ProviderChoice::Outline => swap(
            &mut config,
            "outline",
            ProviderKind::Replay,
            Some(state.join("none.jsonl")),
        ),
    }
    Ok((config, limits))
}

/// One task a line: indented id, role and model, title, write scope, covered requirements,
/// dependencies.
fn write_tasks(tasks: &[TaskNode], calls: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let leaves = tasks.iter().filter(|t| t.kind == ChildKind::Work).count();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    writeln!(
        out,
        "{}, {}, {}",
        plural(tasks.len(), "task"),
        plural(leaves, "work leaf").replace("leafs", "leaves"),
        plural(calls, "planner call")
    )?;
    for t in tasks {
        let depth = t.id.matches('/').count();
        write!(
            out,
            "{}{} [{} {}] \"{}\"",
            "  ".repeat(depth),
            t.id,
            t.role,
            t.model,
            t.title
        )?;
        if !t.write_scope.is_empty() {
            write!(out, "  writes {}", t.write_scope.join(", "))?;
        }
        if !t.covers_requirements.is_empty() {
            write!(out, "  covers {}", t.covers_requirements.join(", "))?;
        }
        if !t.dependencies.is_empty() {
            write!(out, "  after {}", t.dependencies.join(", "))?;
        }
        writeln!(out)?;
    }
    Ok(())
}
