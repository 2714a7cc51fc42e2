//! `specc eval [SPEC] [--commit C] [--format text|json]`: scores the build's head (or a
//! commit of it) against `[eval]`'s hidden tests, in the sandbox, and prints passed, failed,
//! total and every test's result. It takes the state directory's lock, so it never runs
//! beside a build (which evaluates at its own interval). Exit 0 when tests ran and every one
//! passed, 1 when one failed, none ran or the score is unknown, 2 when it could not run
//! (E0501).
//! design: eval.run

use std::io::Write;

use specc_ir::{Diagnostic, codes};
use specc_passes::eval::Outcome;
use specc_project::eval::{EvalSetupError, Scoring};
use specc_runtime::eval::Evaluation;

use super::build::evals;
use crate::cli::{EvalArgs, Format, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &EvalArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    match evaluate(args, env, &mut reporter, err) {
        Ok(e) => {
            let _ = match args.format {
                Format::Json => writeln!(out, "{}", json(&e)),
                Format::Text => write_text(&e, out),
            };
            match &e.score {
                Some(s) if s.failed == 0 && s.total() > 0 => exit::OK,
                _ => exit::ERRORS,
            }
        }
        Err(e) => {
            reporter.report(&Files::default(), &crate::command_error::eval(&e), err);
            exit::USAGE
        }
    }
}

fn evaluate(
    args: &EvalArgs,
    env: &Env,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) -> Result<Evaluation, EvalSetupError> {
    let dir = specc_project::spec_dir(args.spec.as_deref());
    let scoring = Scoring {
        dir: &dir,
        config: args.config.as_deref(),
        commit: args.commit.as_deref(),
        sandbox_helper: env.sandbox_helper.as_deref(),
    };
    specc_project::eval::evaluate(&scoring, |missing| {
        let d = Diagnostic::new(
            codes::WEAKER_SANDBOX_ALLOWED,
            format!(
                "the eval command runs the built code with partial confinement only ({missing})"
            ),
        );
        reporter.report(&Files::default(), &d, err);
    })
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "ok",
        Outcome::Failed => "FAILED",
        Outcome::Skipped => "skipped",
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Skipped => "skipped",
    }
}

fn write_text(e: &Evaluation, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "commit {}: {}",
        &e.commit.hex()[..12],
        evals::score_words(e)
    )?;
    if let Some(s) = &e.score {
        if s.skipped > 0 {
            writeln!(out, "{} skipped", s.skipped)?;
        }
        for t in &s.tests {
            writeln!(out, "  {:<7} {}", outcome_word(t.outcome), t.name)?;
        }
    }
    let m = &e.metrics;
    writeln!(
        out,
        "tree: {} files, {} lines, {} packages · took {:.1}s · output in {}",
        m.files,
        m.lines,
        m.packages,
        e.elapsed.as_secs_f64(),
        e.log.display()
    )
}

fn json(e: &Evaluation) -> serde_json::Value {
    let (passed, failed, skipped, tests) = match &e.score {
        Some(s) => (
            Some(s.passed),
            Some(s.failed),
            Some(s.skipped),
            s.tests
                .iter()
                .map(|t| serde_json::json!({"name": t.name, "outcome": outcome_name(t.outcome)}))
                .collect(),
        ),
        None => (None, None, None, Vec::new()),
    };
    serde_json::json!({
        "commit": e.commit.hex(),
        "score": e.ratio(),
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
        "total": e.score.as_ref().map(|s| s.total()),
        "tests": tests,
        "exit": e.exit,
        "log": e.log,
        "lines": e.metrics.lines,
        "files": e.metrics.files,
        "packages": e.metrics.packages,
        "seconds": e.elapsed.as_secs_f64(),
    })
}
