//! The `specc` binary: a thin shell over [`specc::run`].

use std::io::IsTerminal;

use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

// design: driver.allocator
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let env = specc::Env {
        no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        stdout_is_terminal: std::io::stdout().is_terminal(),
        stderr_is_terminal: std::io::stderr().is_terminal(),
        width: None,
        models: None,
        sandbox_helper: std::env::current_exe().ok(),
        signals: true,
    };
    // Logs go to standard error: warnings and errors, or what `SPECC_LOG` asks for (an
    // EnvFilter directive such as `info` or `warn,specc_llm=debug`: a filter naming only
    // one crate turns the others' task spans off). A task's events carry its
    // id from the span it runs in (design: runtime.metrics).
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPECC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let logs = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        // Plain: the subscriber is built without its `ansi` feature, and asking for colour
        // made it print a complaint on every run.
        .with_ansi(false)
        .with_filter(filter);
    // With OTEL_EXPORTER_OTLP_ENDPOINT set, the build's spans go there too (design:
    // runtime.traces); the layer's own filter enables only its spans.
    let (traces, exporter) = match specc::telemetry::from_env() {
        Some((layer, exporter)) => (Some(layer), Some(exporter)),
        None => (None, None),
    };
    let _ = tracing_subscriber::registry()
        .with(logs)
        .with(traces)
        .try_init();
    // Unlocked handles: a lock held for the whole run would block every other thread that
    // writes to stderr (the logs, the live display's redraws) for good.
    let mut out = std::io::stdout();
    let mut err = std::io::stderr();
    let code = specc::run(std::env::args_os(), &env, &mut out, &mut err);
    if let Some(e) = exporter {
        e.finish();
    }
    std::process::exit(code);
}
