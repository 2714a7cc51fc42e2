//! The limits and the ladder of a build's attempts, as specc.toml sets them: what a local
//! build and a remote worker both run their attempts with.
//! design: driver.build

use std::time::Duration;

use specc_llm::Role;
use specc_runtime::{AttemptLimits, AttemptPolicy, Escalation, OnConflict};
use specc_sandbox::CommandLimits;

use crate::config::BuildConfig;
use crate::planning;

/// The limits and the ladder of a build's attempts, from specc.toml.
pub fn policy(cfg: &BuildConfig) -> AttemptPolicy {
    let limits = cfg.limits;
    AttemptPolicy {
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
        escalation: match cfg.llm.role(Role::Escalation) {
            Some(_) => Escalation::StrongerModel,
            None => Escalation::None,
        },
        on_conflict: match cfg.llm.role(Role::Merger) {
            Some(_) => OnConflict::MergeAgent,
            None => OnConflict::Rerun,
        },
        review: cfg.review.clone(),
        worker_max_tokens: planning::worker_max_tokens(&cfg.llm),
        known_commands: specc_passes::plan::Commands::new(specc_sandbox::commands_on_path(
            &cfg.sandbox_read,
        )),
    }
}
