//! `run`: a shell command in the checkout, through the runner (the sandbox interface).

use std::time::Duration;

use serde::Deserialize;

use specc_sandbox::CommandSpec;

use super::outcome::{Control, ToolOutcome};
use super::toolbox::Toolbox;

#[derive(Deserialize)]
pub(super) struct Run {
    command: String,
    #[serde(default)]
    timeout_secs: Option<u64>,
}

pub(super) async fn run(t: &Toolbox, a: Run, seq: u32, left: Duration) -> ToolOutcome {
    if a.command.trim().is_empty() {
        return ToolOutcome::error("the command is empty");
    }
    // A command may ask for less time than the limit, never more, and never more than the
    // attempt has left.
    let limit = t.limits.timeout.min(left);
    let timeout = a
        .timeout_secs
        .map(Duration::from_secs)
        .map_or(limit, |d| d.min(limit))
        .max(Duration::from_millis(100));
    t.tracked.ran_command();
    let git = t.git_view().await;
    let result = t
        .runner
        .run(CommandSpec {
            script: a.command,
            dir: t.root.clone(),
            read_only: git,
            timeout,
            output_cap: t.limits.output_cap,
            env: Vec::new(),
            log: t.logs.join(format!("run-{seq}.log")),
            // One home and $TMPDIR for all of the attempt's `run` calls.
            home: Some(t.logs.join("home")),
        })
        .await;
    let text = result.report();
    if result.success() {
        ToolOutcome::ok(text)
    } else {
        ToolOutcome {
            text,
            failed: true,
            control: Control::Continue,
            flagged: None,
        }
    }
}
