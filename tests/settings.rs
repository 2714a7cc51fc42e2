//! What the benches that drive the runtime share: attempt settings with generous limits.

use std::time::Duration;

use specc_runtime::{AttemptLimits, AttemptPolicy, Escalation, OnConflict};
use specc_sandbox::CommandLimits;

/// Settings for scripted attempts: limits no bench reaches, no escalation, no review.
pub fn settings(merger: bool, worker_max_tokens: u32) -> AttemptPolicy {
    AttemptPolicy {
        attempt: AttemptLimits {
            max_steps: 10,
            max_tokens: 100_000,
            wall: Duration::from_secs(60),
        },
        commands: CommandLimits {
            timeout: Duration::from_secs(10),
            output_cap: 1 << 14,
        },
        guide_lines: 200,
        escalation: Escalation::None,
        on_conflict: if merger {
            OnConflict::MergeAgent
        } else {
            OnConflict::Rerun
        },
        review: specc_runtime::ReviewConfig::default(),
        worker_max_tokens,
        known_commands: specc_passes::plan::Commands::default(),
    }
}
