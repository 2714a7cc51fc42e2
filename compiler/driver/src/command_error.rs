//! The edge where the project library's typed failures become what a person sees: each
//! variant's diagnostic code, help and exit status, in one place (jj's `command_error.rs`
//! is the model). The library says what went wrong; this says how specc reports it.
//! design: project.library

use specc_ir::{Diagnostic, codes};
use specc_plan::PlanError;
use specc_project::BuildError;
use specc_project::worker::StartError;

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

/// A worker that could not start: its diagnostic and the exit status.
pub(crate) fn worker(e: &StartError) -> (Diagnostic, i32) {
    let message = e.to_string();
    match e {
        StartError::Weaker(_) => (
            Diagnostic::new(codes::WEAKER_SANDBOX, message).with_help(
                "run the worker where the full sandbox is available (`specc sandbox --probe` says what is missing), or set `[sandbox] allow_weaker = true` in its specc.toml",
            ),
            exit::USAGE,
        ),
        StartError::Config(_)
        | StartError::State { .. }
        | StartError::Runtime(_)
        | StartError::Replica { .. }
        | StartError::Ledger(_)
        | StartError::Journal(_) => (setup(message), exit::USAGE),
    }
}

/// A hook of the user's that did not end well: a warning, the build went on (W0603).
pub(crate) fn hook(f: &specc_project::hooks::HookFailure) -> Diagnostic {
    Diagnostic::new(codes::HOOK_FAILED, f.to_string()).with_help(
        "run the hook by hand with the event on its stdin; `[hooks] timeout_seconds` in specc.toml sets how long it may run",
    )
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

/// What to do about a planner call that failed for good, by its kind.
fn model_help(e: &specc_llm::LlmError) -> &'static str {
    use specc_llm::LlmError as E;
    match e {
        E::Auth { .. } | E::Config(_) => {
            "check the provider's key: specc.toml names the environment variable that holds it"
        }
        E::Quota(_) => "the provider's account is out of quota or over a spend limit",
        E::ContextLength(_) => {
            "use a planner model with a larger context, or split the section into smaller ones"
        }
        E::Budget { .. } => {
            "raise `[budget] dollars` in specc.toml and plan again: answers already paid for are cached"
        }
        E::ReplayMiss { .. } => {
            "the recording has no answer for this request: record the run with --record FILE against a live provider"
        }
        _ => {
            "the provider could not be reached or kept failing after every retry; see `specc explain E0316`"
        }
    }
}

/// The exit status of a failed plan: 2 when the configuration is at fault (a refused key),
/// 1 otherwise.
pub(crate) fn plan_status(e: &PlanError) -> i32 {
    match e {
        PlanError::Model(specc_llm::LlmError::Auth { .. } | specc_llm::LlmError::Config(_)) => {
            crate::exit::USAGE
        }
        _ => crate::exit::ERRORS,
    }
}

/// What the user reads when planning failed: the problems of an answer that stayed invalid,
/// each under its own code, then E0309.
pub(crate) fn plan_failure(e: PlanError) -> Vec<Diagnostic> {
    let e0309 = |message: String, help: &str| {
        Diagnostic::new(codes::PLANNING_FAILED, message).with_help(help)
    };
    match e {
        PlanError::Model(e) => vec![
            Diagnostic::new(
                codes::PLANNER_CALL_FAILED,
                format!("a planner call failed: {e}"),
            )
            .with_help(model_help(&e)),
        ],
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
        PlanError::CallLimit(n) => vec![e0309(
            format!(
                "planning stopped before its next call: it would pass the limit of {n} planner calls"
            ),
            "raise `[limits] planner_calls` in specc.toml if the spec is that large; answers so far are cached",
        )],
    }
}

/// `specc eval` could not score (E0501): what went wrong, and what to do about it.
pub(crate) fn eval(e: &specc_project::eval::EvalSetupError) -> Diagnostic {
    use specc_project::eval::EvalSetupError as E;
    use specc_runtime::eval::EvalError;
    let help = match e {
        E::NoEval => {
            "add an [eval] table with the command and the hidden tests' directory; see `specc explain E0501`"
        }
        E::NothingBuilt(_) => "run `specc build` first: the eval scores what a build committed",
        E::Eval(EvalError::NoCommit(_)) => {
            "the commit is not on this build's branch: `specc status` lists the last commits"
        }
        E::Eval(EvalError::Io { .. }) => {
            "the evaluator works in .specc/eval/: check that the disk has room and the directory is writable"
        }
        E::Eval(EvalError::State(_)) => {
            "the state database (.specc/state.db) could not be used: check its disk, or that no other program holds it"
        }
        E::Eval(EvalError::Task(_)) => "this is a bug in specc: please report it with this output",
        E::Config(_) | E::Lock(_) | E::Runtime(_) | E::Store { .. } | E::Empty | E::NoCommit(_) => {
            "see `specc explain E0501`"
        }
    };
    Diagnostic::new(codes::EVAL_SETUP, e.to_string()).with_help(help)
}

/// A build's plan that cannot run: what planning said, then why, and the exit status.
pub(crate) fn plan_refused(
    refused: specc_project::build_plan::Refused,
    spec: &std::path::Path,
) -> (Vec<Diagnostic>, i32) {
    use specc_project::build_plan::Why;
    use specc_project::planning::approval;
    let mut notes = refused.notes;
    let status = match refused.why {
        Why::WouldAsk => {
            notes.push(*approval::would_ask(spec));
            exit::USAGE
        }
        Why::NotApproved(d) => {
            notes.push(*d);
            exit::USAGE
        }
        Why::Failed(e) => {
            let status = plan_status(&e);
            notes.extend(plan_failure(e));
            status
        }
    };
    (notes, status)
}
