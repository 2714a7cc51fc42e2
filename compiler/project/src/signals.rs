//! SIGTERM and SIGINT during a build's work: the first halts the client (no new model
//! calls, no new tasks; the calls already out finish and are journaled, running attempts
//! end at their next call), so the build stops as at the budget cap: its state committed,
//! its run `stopped`, the next `specc build` resuming it. A second signal exits at once,
//! with 128 + the signal's number: what is journaled is safe, as after a crash. Once the
//! handlers are installed they stay for the process: during the export and the check that
//! follow the work, which are short, the signals are not acted on.
//! design: runtime.graceful-stop

use std::convert::Infallible;

use tokio::signal::unix::{SignalKind, signal};

/// Waits for signals for as long as the build runs; never returns.
pub async fn stop_on_signals(halt: specc_llm::Halt) -> Infallible {
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::warn!("signals cannot be watched: SIGTERM and SIGINT kill the build at once");
        return std::future::pending().await;
    };
    let mut seen = 0;
    loop {
        let (name, number) = tokio::select! {
            _ = term.recv() => ("SIGTERM", SignalKind::terminate().as_raw_value()),
            _ = int.recv() => ("SIGINT", SignalKind::interrupt().as_raw_value()),
        };
        seen += 1;
        if seen > 1 {
            std::process::exit(128 + number);
        }
        halt.halt(&format!(
            "stopped by {name}: the calls already out finish; run `specc build` again to resume"
        ));
    }
}
