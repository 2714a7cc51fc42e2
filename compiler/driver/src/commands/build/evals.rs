//! `[eval]` during a build: how each point is shown (the evaluator is
//! `specc_project::execute::evaluator`).
//! design: eval.run

use specc_runtime::eval::{Evaluation, Seen};

use super::progress::Progress;

/// One point (or an evaluation that could not run) as a progress line.
pub(super) fn show(progress: &Progress<'_>, seen: Seen<'_>) {
    match seen {
        Seen::Point {
            point,
            evaluation,
            last,
        } => {
            let text = format!(
                "eval        {}{} at commit {}",
                score_words(evaluation),
                if last { " (final)" } else { "" },
                &evaluation.commit.hex()[..12]
            );
            let json = serde_json::json!({
                "event": "eval",
                "point": point,
                "final": last,
                "commit": evaluation.commit.hex(),
                "score": evaluation.ratio(),
                "passed": evaluation.score.as_ref().map(|s| s.passed),
                "total": evaluation.score.as_ref().map(|s| s.total()),
            });
            progress.note(&text, json);
        }
        Seen::Error(why) => progress.note(
            &format!("eval        could not run: {why}"),
            serde_json::json!({"event": "eval_error", "reason": why.to_string()}),
        ),
    }
}

/// "5 of 12 tests pass (41.7%)", or why the score is unknown.
pub(in crate::commands) fn score_words(e: &Evaluation) -> String {
    match &e.score {
        Some(s) if s.total() > 0 => format!(
            "{} of {} tests pass ({:.1}%)",
            s.passed,
            s.total(),
            100.0 * s.passed as f64 / s.total() as f64
        ),
        Some(_) => "no test ran".to_owned(),
        None => format!(
            "score unknown: the output could not be read as test results ({}{}; log {})",
            exit_words(&e.exit),
            last_line(&e.log).map_or_else(String::new, |l| format!("; it ended `{l}`")),
            e.log.display()
        ),
    }
}

/// The last line of a log that says something (a test suite that did not compile ends
/// with the compiler's verdict), cut short.
fn last_line(log: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(160).collect())
}

fn exit_words(exit: &specc_sandbox::Exit) -> String {
    use specc_sandbox::Exit;
    match exit {
        Exit::Code(c) => format!("exit status {c}"),
        Exit::Signal(s) => format!("killed by signal {s}"),
        Exit::TimedOut => "timed out".to_owned(),
        Exit::NotStarted(why) => format!("not started: {why}"),
    }
}
