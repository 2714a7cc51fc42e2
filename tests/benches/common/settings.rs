//! What the benches that drive the runtime share: attempt settings with generous limits.

use std::time::Duration;

use specc_runtime::agent::AttemptLimits;
use specc_runtime::attempt::Settings;
use specc_runtime::runner::CommandLimits;

/// Settings for scripted attempts: limits no bench reaches, no escalation, no review.
pub fn settings(merger: bool, worker_max_tokens: u32) -> Settings {
    Settings {
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
        escalation: false,
        merger,
        review: specc_runtime::review::ReviewConfig::default(),
        worker_max_tokens,
    }
}
