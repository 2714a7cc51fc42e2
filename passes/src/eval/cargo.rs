//! `cargo test` output (libtest's human format): `test NAME ... ok|FAILED|ignored` per test,
//! and one `test result:` line per test binary. Every `running N tests` must reach its
//! `test result:`; a run cut short (a crash, a timeout, a truncated log) is unknown.

use super::{Outcome, Score};

pub(super) fn parse(output: &str) -> Option<Score> {
    let mut score = Score::default();
    let mut open = 0usize; // `running` sections not yet closed by a result
    let mut closed = 0usize;
    let mut counted = Score::default();
    for line in output.lines() {
        let line = line.trim_end();
        if line.starts_with("running ") && (line.ends_with(" test") || line.ends_with(" tests")) {
            open += 1;
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            closed += 1;
            let n = |what: &str| -> Option<usize> {
                rest.split(';')
                    .map(str::trim)
                    .find_map(|part| part.strip_suffix(what))
                    .and_then(|num| num.trim().rsplit(' ').next()?.parse().ok())
            };
            counted.passed += n(" passed")?;
            counted.failed += n(" failed")?;
            counted.skipped += n(" ignored")?;
        } else if let Some(rest) = line.strip_prefix("test ") {
            let Some((name, result)) = rest.rsplit_once(" ... ") else {
                continue;
            };
            let outcome = match result.trim() {
                "ok" => Outcome::Passed,
                "FAILED" => Outcome::Failed,
                r if r.starts_with("ignored") => Outcome::Skipped,
                _ => continue,
            };
            score.add(name.trim().to_owned(), outcome);
        }
    }
    if closed == 0 || open != closed {
        return None;
    }
    // The summaries are the counts; the lines name the tests.
    score.passed = counted.passed;
    score.failed = counted.failed;
    score.skipped = counted.skipped;
    Some(score)
}
