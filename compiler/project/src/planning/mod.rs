//! Planning a spec, shared by `specc plan --emit tasks` and `specc build`: the planner cache
//! in `.specc/plan-cache.json` (kept even when planning stops part way, written atomically),
//! `plan_tree`, and lowering to the Task IR with the roles' models and budgets.
//! design: driver.plan-tasks
//! design: driver.plan-cache

pub mod approval;
pub mod edits;

use std::path::Path;

use specc_ir::plan::{PlannedDecision, TaskNode};
use specc_ir::{Diagnostic, IntentTree, codes};
use specc_llm::{Client, LlmConfig, Role};
use specc_passes::plan::{Commands, LowerOptions, lower};
use specc_plan::{Cache, Limits, PlanError, PlannedTree, plan_tree};

use self::edits::{Applied, Edits};

/// A planned and lowered spec.
pub struct Planned {
    pub tree: PlannedTree,
    pub tasks: Vec<TaskNode>,
    /// Every decision the planners made (an owned id repeated below its owner included),
    /// hand edits applied.
    pub decisions: Vec<PlannedDecision>,
    /// The planners' answers by task as they gave them, before hand edits: what an
    /// approval saves (design: driver.approval).
    pub as_planned: std::collections::BTreeMap<String, specc_ir::plan::PlannerAnswer>,
    /// The decisions taken from a person's edit.
    pub edited: Vec<Applied>,
}

impl Planned {
    /// The requirement ids the planners' answers waive (`no_code`, with a reason): they
    /// need no work leaf (design: spec.no-code).
    pub fn waived(&self) -> Vec<String> {
        self.tree
            .answers
            .values()
            .flat_map(|a| a.no_code.iter())
            .filter(|w| !w.reason.trim().is_empty())
            .map(|w| w.id.clone())
            .collect()
    }
}

/// What planning takes besides the spec: the planner's client and configuration, the
/// limits, the field guide, the commands an acceptance entry may start with, the state
/// directory (`.specc/`, where the cache is) and the hand edits to apply.
pub struct Inputs<'a> {
    pub client: &'a Client,
    pub config: &'a LlmConfig,
    pub limits: Limits,
    pub guide: &'a str,
    pub commands: &'a Commands,
    pub state: &'a Path,
}

/// Plans `tree` with the planner of `config`, using and extending the cache in `state`,
/// and applies the hand edits in `edits`. Besides the plan, what befell the cache (W0007):
/// a damaged one set aside, a save that failed.
pub async fn plan(
    tree: &IntentTree,
    inputs: Inputs<'_>,
    edits: &mut Edits,
) -> (Result<Planned, PlanError>, Vec<Diagnostic>) {
    let cache_path = inputs.state.join("plan-cache.json");
    let mut notes = Vec::new();
    let mut cache = load_cache(&cache_path, &mut notes);
    let planned = plan_cached(tree, &inputs, &mut cache, edits).await;
    let state = inputs.state;
    // Keep what was answered, even when planning stopped part way.
    if let Err(e) = save_cache(&cache, state, &cache_path) {
        notes.push(
            Diagnostic::new(
                codes::PLAN_CACHE_DAMAGED,
                format!(
                    "the planner cache {} was not saved ({e}): the answers of this plan will be asked for again next time",
                    cache_path.display()
                ),
            )
            .with_help("check that .specc/ beside the spec is writable and the disk is not full"),
        );
    }
    (planned, notes)
}

/// The cache at `path`: empty if there is none; a file that does not parse is moved aside
/// (never deleted: it may be all a long plan paid for) and reported.
fn load_cache(path: &Path, notes: &mut Vec<Diagnostic>) -> Cache {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Cache::default(),
        Err(e) => {
            notes.push(Diagnostic::new(
                codes::PLAN_CACHE_DAMAGED,
                format!(
                    "the planner cache {} could not be read ({e}): planning starts without it",
                    path.display()
                ),
            ));
            return Cache::default();
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(cache) => cache,
        Err(e) => {
            let aside = path.with_extension(format!(
                "json.damaged-{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ));
            let kept = std::fs::rename(path, &aside).map_or_else(
                |r| format!("it could not be moved aside ({r}) and will be overwritten"),
                |()| format!("it was moved to {}", aside.display()),
            );
            notes.push(
                Diagnostic::new(
                    codes::PLAN_CACHE_DAMAGED,
                    format!(
                        "the planner cache {} is damaged ({e}); {kept}, and planning starts without it",
                        path.display()
                    ),
                )
                .with_help("its answers are asked for again; see `specc explain W0007`"),
            );
            Cache::default()
        }
    }
}

/// Writes the cache atomically: a crash leaves the old cache or the new one.
fn save_cache(cache: &Cache, state: &Path, path: &Path) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(cache).map_err(std::io::Error::other)?;
    std::fs::create_dir_all(state)?;
    crate::atomic::write(state, path, &bytes)
}

async fn plan_cached(
    tree: &IntentTree,
    inputs: &Inputs<'_>,
    cache: &mut Cache,
    edits: &mut Edits,
) -> Result<Planned, PlanError> {
    let (config, mut limits) = (inputs.config, inputs.limits);
    // One source for the planner's max_tokens in every mode: the role's (it is part of each
    // request's fingerprint, so a live recording must replay with the same value).
    limits.max_tokens = config
        .role(Role::Planner)
        .map_or(specc_llm::config::DEFAULT_MAX_TOKENS, |r| r.max_tokens);
    let (client, guide, commands) = (inputs.client, inputs.guide, inputs.commands);
    let mut planned = if adopts_everything(tree) {
        PlannedTree::default() // nothing asked beyond the adopted code: no planner call
    } else {
        plan_tree(client, tree, limits, guide, commands, cache).await?
    };
    let as_planned = planned.answers.clone();
    let (edited, at_stake) = edits.apply(&mut planned.answers);
    planned.diagnostics.extend(at_stake);
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
        as_planned,
        edited,
    })
}

/// Whether `tree` is the planned part of an adopted spec that asks for nothing beyond the
/// code it adopted (design: driver.adopt).
fn adopts_everything(tree: &IntentTree) -> bool {
    let adopts = tree
        .front_matter
        .as_ref()
        .is_some_and(|f| f.table.contains_key(specc_passes::adopted::TABLE));
    adopts && !specc_passes::adopted::has_work(tree)
}

/// The part of `tree` a build plans: without the sections adopted as existing code and
/// unchanged since (design: driver.adopt). Its warnings go to `report`.
pub fn planned_part(tree: IntentTree, mut report: impl FnMut(&Diagnostic)) -> IntentTree {
    match specc_passes::adopted::planned_part(&tree) {
        Some((part, _, diagnostics)) => {
            diagnostics.iter().for_each(&mut report);
            part
        }
        None => tree,
    }
}

/// The most output tokens one worker call may use: the worker role's `max_tokens`.
pub fn worker_max_tokens(config: &LlmConfig) -> u32 {
    config
        .role(Role::Worker)
        .map_or(specc_llm::config::DEFAULT_MAX_TOKENS, |r| r.max_tokens)
}
