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
use specc_passes::plan::{design_docs, uncovered};
use specc_runtime::field_guide;
use specc_runtime::outline::OutlinePlanner;
use specc_runtime::plan_tree::Limits;

use super::{Reporter, planning};
use crate::cli::{Format, PlanArgs, ProviderChoice};
use crate::exit;
use crate::source::Files;

pub(crate) fn run(
    args: &PlanArgs,
    tree: &IntentTree,
    files: &Files,
    reporter: &mut Reporter,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let dir = args
        .spec
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let state = dir.join(".specc");
    let fail = |reporter: &mut Reporter, err: &mut dyn Write, message: String, help: &str| {
        let d = Diagnostic::new(codes::PLANNING_FAILED, message).with_help(help.to_owned());
        reporter.report(files, &d, err);
        exit::ERRORS
    };
    let (config, limits) = match load_config(args, &dir, &state) {
        Ok(c) => c,
        Err(e) => {
            return fail(
                reporter,
                err,
                e,
                "fix specc.toml, or plan offline with --provider outline",
            );
        }
    };
    let guide = field_guide::load(&dir, limits.field_guide_lines);
    if let Some(w) = &guide.warning {
        reporter.report(files, w, err);
    }
    let env = |var: &str| std::env::var(var).ok();
    let llm = config.clone();
    let mut client = Client::from_config(config, &env, args.record.as_deref());
    if args.provider == ProviderChoice::Outline {
        let outline: Arc<dyn specc_llm::Provider> = Arc::new(OutlinePlanner::new("outline"));
        let outline = match &args.record {
            Some(path) => {
                Arc::new(specc_llm::Recorder::new(outline, path)) as Arc<dyn specc_llm::Provider>
            }
            None => outline,
        };
        client = client.with_provider("outline", outline, 1);
    }
    let ledger = match Ledger::open(&state.join("state.db")) {
        Ok(l) => Arc::new(l),
        Err(e) => {
            return fail(
                reporter,
                err,
                format!("the state database: {e}"),
                "check that .specc/ beside the spec is writable",
            );
        }
    };
    let client = client.with_ledger(ledger, "plan");
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            return fail(
                reporter,
                err,
                format!("no async runtime: {e}"),
                "this is a bug",
            );
        }
    };
    let planned = runtime.block_on(planning::plan(
        &client,
        tree,
        &llm,
        limits,
        &guide.text,
        &state,
    ));
    let planned = match planned {
        Ok(p) => p,
        Err(e) => {
            for d in planning::failure(e) {
                reporter.report(files, &d, err);
            }
            return exit::ERRORS;
        }
    };
    for d in &planned.tree.diagnostics {
        reporter.report(files, d, err);
    }
    let tasks = planned.tasks;
    // The planner's decisions become design documents `specc check` reads, one per area.
    let decisions = planned.decisions;
    let docs_dir = dir.join("design-docs");
    for (file, text) in design_docs(&decisions) {
        let path = docs_dir.join(format!("planned-{file}"));
        let written = std::fs::create_dir_all(&docs_dir).and_then(|()| std::fs::write(&path, text));
        if let Err(e) = written {
            return fail(
                reporter,
                err,
                format!("cannot write {}: {e}", path.display()),
                "check that design-docs/ beside the spec is writable",
            );
        }
    }
    let covered: HashSet<String> = tasks
        .iter()
        .filter(|t| t.kind == ChildKind::Work)
        .flat_map(|t| t.covers_requirements.iter().cloned())
        .collect();
    for d in uncovered(tree, &covered) {
        reporter.report(files, &d, err);
    }
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut *out, &tasks)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out)),
        Format::Text => write_tasks(&tasks, planned.tree.calls, out),
    };
    if written.is_err() {
        return exit::USAGE;
    }
    reporter.status()
}

/// specc.toml (given, or beside the spec), with the planner's provider replaced for
/// `--provider replay|outline`; the roles keep their models, so recordings made with a live
/// provider replay.
fn load_config(args: &PlanArgs, dir: &Path, state: &Path) -> Result<(LlmConfig, Limits), String> {
    let path = args
        .config
        .clone()
        .unwrap_or_else(|| dir.join("specc.toml"));
    let (mut config, limits) = if path.is_file() {
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let limits = Limits::from_toml(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        (
            LlmConfig::parse_at(&text, &path).map_err(|e| e.to_string())?,
            limits,
        )
    } else if args.provider == ProviderChoice::Config {
        return Err(format!("no {} to say which model plans", path.display()));
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
            let model = config
                .roles
                .get("planner")
                .map_or_else(|| "planner".to_owned(), |r| r.model.clone());
            config.roles.insert(
                "planner".to_owned(),
                RoleConfig {
                    provider: name.to_owned(),
                    model,
                    max_tokens: 8192,
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
