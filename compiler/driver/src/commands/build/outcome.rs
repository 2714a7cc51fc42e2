//! What a build ends with besides its summary: the export to `out/` and its errors, and
//! `specc check` on the built tree.
//! design: driver.build

use std::io::Write;

use specc_ir::{Diagnostic, codes};
use specc_runtime::BuildReport;
use specc_state::TaskState;

use super::summary;
use crate::cli::BuildArgs;
use crate::{Env, exit};
use specc_project::session::Session;

/// The build's errors: an export that failed, failed tasks, an early stop. The export comes
/// first, whatever else happened: landed work is never held back.
pub(super) fn outcome_diagnostics(
    s: &Session,
    spec: &std::path::Path,
    report: &BuildReport,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let exported = s.export(spec);
    match exported {
        Ok(true) => {}
        Ok(false) => out.push(
            Diagnostic::new(
                codes::NOTHING_LANDED,
                format!("no work landed: {} was left as it was", s.out.display()),
            )
            .with_help("see `specc explain W0412`"),
        ),
        Err(e) => out.push(
            Diagnostic::new(
                codes::OUT_DIR_CHANGED,
                format!("exporting to {}: {e}", s.out.display()),
            )
            .with_help("see `specc explain E0403`"),
        ),
    }
    for t in report.tasks.iter().filter(|t| t.state == TaskState::Failed) {
        out.push(
            Diagnostic::new(
                codes::TASK_FAILED,
                format!(
                    "task `{}` failed: {}",
                    t.id,
                    t.reason.as_deref().unwrap_or_default()
                ),
            )
            .with_help("see `specc explain E0401`"),
        );
    }
    if let Some(why) = &report.stopped {
        out.push(
            Diagnostic::new(
                codes::BUILD_STOPPED,
                format!("the build stopped early: {why}"),
            )
            .with_help("see `specc explain E0402`"),
        );
    }
    out
}

/// `specc check` on the built tree: its `design:` references against its design-docs/.
pub(super) fn check_out_dir(
    s: &Session,
    args: &BuildArgs,
    env: &Env,
    err: &mut dyn Write,
) -> summary::CheckOutcome {
    if !s.out.join(".git").exists() {
        return summary::CheckOutcome {
            status: exit::OK,
            text: String::new(),
        };
    }
    let check = crate::cli::CheckArgs {
        path: s.out.clone(),
        spec: Some(args.spec.clone()),
        unreferenced: false,
        watch: false,
        watch_limit: None,
        messages: crate::cli::MessageArgs {
            message_format: args.messages.message_format,
            error_limit: args.messages.error_limit,
        },
    };
    let mut text = Vec::new();
    let status = crate::commands::check::run(&check, env, &mut text, err);
    summary::CheckOutcome {
        status,
        text: String::from_utf8_lossy(&text).into_owned(),
    }
}
