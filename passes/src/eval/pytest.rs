//! pytest's terminal output: the final summary line (`=== 3 failed, 3 passed, 1 skipped in
//! 0.07s ===`, or with `-q` the same without the rules) gives the counts; per-test lines (`path::test PASSED` with `-v`, and the
//! `FAILED path::test - why` lines of the short summary) name the tests. No summary line:
//! unknown.

use super::{Outcome, Score};

/// Whether `line` is pytest's final summary.
pub(super) fn is_summary(line: &str) -> bool {
    let l = line.trim();
    let ruled = l.starts_with('=') && l.ends_with('=');
    (ruled || quiet_summary(l))
        && (l.contains(" passed")
            || l.contains(" failed")
            || l.contains(" error")
            || l.contains("no tests ran"))
        && l.contains(" in ")
}

/// `-q`'s summary: counts from the start (`1 failed, 214 passed, 15 warnings`) and the time
/// at the end (`in 0.20s`), nothing else on the line.
fn quiet_summary(l: &str) -> bool {
    let Some((counts, time)) = l.rsplit_once(" in ") else {
        return false;
    };
    // `0.20s`, or from a minute on `75.12s (0:01:15)`.
    let time = match time.split_once(" (") {
        Some((t, clock)) if clock.ends_with(')') => t,
        _ => time,
    };
    let timed = time
        .strip_suffix('s')
        .is_some_and(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if counts == "no tests ran" {
        return timed;
    }
    let counted = counts.split(", ").all(|part| {
        let mut w = part.split_whitespace();
        matches!((w.next(), w.next(), w.next()), (Some(n), Some(_), None) if n.parse::<usize>().is_ok())
    });
    timed && counted
}

pub(super) fn parse(output: &str) -> Option<Score> {
    let summary = output.lines().rev().find(|l| is_summary(l))?;
    let inner = summary.trim().trim_matches('=').trim();
    let counts = inner.rsplit_once(" in ").map_or(inner, |(c, _)| c);
    let mut score = Score::default();
    for part in counts.split(',') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<usize>() else {
            continue;
        };
        match what {
            "passed" | "xpassed" => score.passed += n,
            "failed" | "error" | "errors" => score.failed += n,
            "skipped" | "xfailed" | "deselected" => score.skipped += n,
            _ => {}
        }
    }
    // Names: `-v` lines, else the short summary's failures.
    let mut named = false;
    for line in output.lines() {
        let Some((name, rest)) = line.split_once(' ') else {
            continue;
        };
        if !name.contains("::") {
            continue;
        }
        let outcome = match rest.split_whitespace().next() {
            Some("PASSED") => Outcome::Passed,
            Some("FAILED" | "ERROR") => Outcome::Failed,
            Some("SKIPPED") => Outcome::Skipped,
            _ => continue,
        };
        named = true;
        score.tests.push(super::TestResult {
            name: name.to_owned(),
            outcome,
        });
    }
    if !named {
        for line in output.lines() {
            if let Some(rest) = line
                .strip_prefix("FAILED ")
                .or_else(|| line.strip_prefix("ERROR "))
            {
                let name = rest.split(" - ").next().unwrap_or(rest).trim();
                score.tests.push(super::TestResult {
                    name: name.to_owned(),
                    outcome: Outcome::Failed,
                });
            }
        }
    }
    Some(score)
}
