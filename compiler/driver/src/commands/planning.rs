//! Planning a spec, shared by `specc plan --emit tasks` and `specc build`: the planner cache
//! in `.specc/plan-cache.json` (kept even when planning stops part way, written atomically),
//! `plan_tree`, and lowering to the Task IR with the roles' models and budgets.
//! design: driver.plan-tasks

use std::path::Path;

use specc_ir::plan::{PlannedDecision, TaskNode};
use specc_ir::{Diagnostic, IntentTree, codes};
use specc_llm::{Client, LlmConfig, Role};
use specc_passes::plan::{LowerOptions, lower};
use specc_runtime::plan_tree::{Cache, Limits, PlannedTree, plan_tree};
use specc_runtime::planner::PlanError;

/// A planned and lowered spec.
pub(crate) struct Planned {
    pub(crate) tree: PlannedTree,
    pub(crate) tasks: Vec<TaskNode>,
    /// Every decision the planners made (an owned id repeated below its owner included).
    pub(crate) decisions: Vec<PlannedDecision>,
}

/// Plans `tree` with the planner of `config`, using and extending the cache in `state`.
pub(crate) async fn plan(
    client: &Client,
    tree: &IntentTree,
    config: &LlmConfig,
    mut limits: Limits,
    guide: &str,
    state: &Path,
) -> Result<Planned, PlanError> {
    if let Some(r) = config.role(Role::Planner) {
        limits.max_tokens = r.max_tokens;
    }
    let cache_path = state.join("plan-cache.json");
    let mut cache: Cache = std::fs::read(&cache_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let planned = plan_tree(client, tree, limits, guide, &mut cache).await;
    // Keep what was answered, even when planning stopped part way.
    if let Ok(bytes) = serde_json::to_vec(&cache) {
        let tmp = cache_path.with_extension("json.tmp");
        let written = std::fs::create_dir_all(state)
            .and_then(|()| std::fs::write(&tmp, bytes))
            .and_then(|()| std::fs::rename(&tmp, &cache_path));
        if let Err(e) = written {
            tracing::warn!(path = %cache_path.display(), error = %e, "the planner cache was not saved");
        }
    }
    let planned = planned?;
    let spec_decisions: Vec<String> = tree
        .nodes()
        .flat_map(|n| n.decisions.iter())
        .filter_map(|d| d.id.clone())
        .collect();
    let model = |role: Role, fallback: &str| {
        config
            .role(role)
            .map_or_else(|| fallback.to_owned(), |r| r.model.clone())
    };
    let options = LowerOptions {
        planner_model: model(Role::Planner, "planner"),
        worker_model: model(Role::Worker, "worker"),
        planner_budget: limits.max_tokens,
        worker_budget: worker_max_tokens(config),
    };
    let tasks = lower(&planned.answers, &spec_decisions, &options);
    let decisions = planned
        .answers
        .values()
        .flat_map(|a| a.decisions.iter().cloned())
        .collect();
    Ok(Planned {
        tree: planned,
        tasks,
        decisions,
    })
}

/// The most output tokens one worker call may use: the worker role's `max_tokens`.
pub(crate) fn worker_max_tokens(config: &LlmConfig) -> u32 {
    config.role(Role::Worker).map_or(4096, |r| r.max_tokens)
}

/// What the user reads when planning failed: the problems of an answer that stayed invalid,
/// each under its own code, then E0309.
pub(crate) fn failure(e: PlanError) -> Vec<Diagnostic> {
    let e0309 = |message: String, help: &str| {
        Diagnostic::new(codes::PLANNING_FAILED, message).with_help(help)
    };
    match e {
        PlanError::Model(e) => vec![e0309(
            format!("a planner call failed: {e}"),
            "see `specc explain E0309`",
        )],
        PlanError::Invalid { task, mut problems } => {
            let summary = e0309(
                format!(
                    "the planner's answer for {} stayed invalid after two repairs ({} above)",
                    specc_passes::plan::task_name(&task),
                    if problems.len() == 1 {
                        "the problem".to_owned()
                    } else {
                        format!("{} problems", problems.len())
                    }
                ),
                "a stronger planner model usually helps; `specc cost` shows the calls made",
            );
            problems.push(summary);
            problems
        }
        PlanError::Unsettled(ids) => vec![e0309(
            format!(
                "the planners kept deciding questions differently: {} coordinator merges ({}) did not settle the plan",
                ids.len(),
                ids.join(", ")
            ),
            "settle the contested questions in the spec with `Decision:` lines that carry their ids",
        )],
    }
}
