//! An adopted project's own tests keep the person's code green (design: driver.adopt): a
//! task that writes in an adopted package runs the package's test command as a check, and a
//! failure the task's base already had does not gate it. When such a check fails, it runs
//! again on the base; a test that failed there too (or, when the runner names no tests, a
//! check that failed there too) is information, and a test that passed there and fails now
//! gates the landing, named.

use std::time::Duration;

use specc_passes::eval::{Format, Outcome, score};

use super::acceptance::{Check, Report};
use super::ratchet::{checks_at_base, output};
use crate::tools::Toolbox;

/// Marks the failed checks of `report` that keep a base's failures (`Check::baseline`) as
/// information when the base failed them as well, test by test where the runner names its
/// tests.
pub(super) async fn excuse_known_failures(
    tools: &Toolbox,
    checks: &[Check],
    report: &mut Report,
    round: u32,
    left: Duration,
) {
    let failing: Vec<usize> = report
        .results
        .iter()
        .enumerate()
        .filter(|(i, r)| {
            !r.result.success() && r.informs.is_none() && checks.get(*i).is_some_and(|c| c.baseline)
        })
        .map(|(i, _)| i)
        .collect();
    if failing.is_empty() {
        return;
    }
    let again: Vec<Check> = failing.iter().map(|&i| checks[i].clone()).collect();
    let Some(at_base) = checks_at_base(tools, &again, 2000 + round, left / 2).await else {
        return; // cannot tell: the failure gates
    };
    for (&i, then) in failing.iter().zip(&at_base) {
        if then.result.success() {
            continue; // the base passed it: this task broke it
        }
        let now = &report.results[i];
        let scores = (
            score(Format::Auto, &output(&now.result)),
            score(Format::Auto, &output(&then.result)),
        );
        let why = match scores {
            (Some(n), Some(b)) if !n.tests.is_empty() && !b.tests.is_empty() => {
                let broken: Vec<&str> = n
                    .tests
                    .iter()
                    .filter(|t| t.outcome == Outcome::Failed)
                    .filter(|t| {
                        b.tests
                            .iter()
                            .any(|x| x.name == t.name && x.outcome == Outcome::Passed)
                    })
                    .map(|t| t.name.as_str())
                    .collect();
                if !broken.is_empty() {
                    continue; // a test that passed at the base fails now: it gates
                }
                let failing: Vec<&str> = b
                    .tests
                    .iter()
                    .filter(|t| t.outcome == Outcome::Failed)
                    .map(|t| t.name.as_str())
                    .collect();
                format!(
                    "the same tests failed at your base, before this task: {}",
                    failing.join(", ")
                )
            }
            _ => "it failed at your base too, before this task".to_owned(),
        };
        report.results[i].informs = Some(why);
    }
}
