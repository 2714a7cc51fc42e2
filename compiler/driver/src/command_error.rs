//! The edge where the project library's typed failures become what a person sees: each
//! variant's diagnostic code, help and exit status, in one place (jj's `command_error.rs`
//! is the model). The library says what went wrong; this says how specc reports it.
//! design: project.library

use specc_ir::{Diagnostic, codes};
use specc_project::BuildError;

use crate::exit;

/// A build that could not start: its diagnostic and the exit status.
pub(crate) fn build(e: &BuildError) -> (Diagnostic, i32) {
    let message = e.to_string();
    match e {
        BuildError::NotOnMain { .. } | BuildError::Git(_) => (out_dir(message), exit::ERRORS),
        BuildError::WeakerSandbox { .. } => (
            Diagnostic::new(codes::WEAKER_SANDBOX, message).with_help(
                "build from a recording (--provider replay), or set `[sandbox] allow_weaker = true` in specc.toml",
            ),
            exit::USAGE,
        ),
        BuildError::Config(_)
        | BuildError::Runtime(_)
        | BuildError::Locked { .. }
        | BuildError::Lock { .. }
        | BuildError::State(_)
        | BuildError::Postgres(_)
        | BuildError::PostgresLedger(_)
        | BuildError::PostgresBusy
        | BuildError::Journal(_)
        | BuildError::Store(_) => (setup(message), exit::USAGE),
    }
}

/// `out/` may not be written: nothing was overwritten (E0403).
fn out_dir(message: String) -> Diagnostic {
    Diagnostic::new(codes::OUT_DIR_CHANGED, message)
        .with_help("see `specc explain E0403`; nothing was overwritten")
}

/// A command could not start (E0406).
fn setup(message: String) -> Diagnostic {
    Diagnostic::new(codes::BUILD_SETUP, message).with_help("see `specc explain E0406`")
}
