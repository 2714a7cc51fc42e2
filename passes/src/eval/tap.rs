//! TAP (versions 12–14): `ok N - name` / `not ok N - name` test points, `# SKIP` and `# TODO`
//! directives, subtests indented under their parent, and a plan `1..N` at each level. Every
//! test point at any depth counts; a `# TODO` failure is not a failure. The top-level plan
//! must be there and met, else the run is unknown (cut short, or not TAP).

use super::{Outcome, Score};

/// Whether `line` is a top-level plan (`1..N`, maybe with a reason).
pub(super) fn is_plan(line: &str) -> bool {
    plan(line).is_some()
}

fn plan(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("1..")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

pub(super) fn parse(output: &str) -> Option<Score> {
    let mut score = Score::default();
    let mut top = 0usize;
    let mut planned = None;
    let mut bail = false;
    for line in output.lines() {
        if line.starts_with("Bail out!") {
            bail = true;
        }
        if let Some(n) = plan(line) {
            planned = Some(n);
            continue;
        }
        let trimmed = line.trim_start();
        let depth = line.len() - trimmed.len();
        let (ok, rest) = if let Some(r) = trimmed.strip_prefix("not ok") {
            (false, r)
        } else if let Some(r) = trimmed.strip_prefix("ok") {
            (true, r)
        } else {
            continue;
        };
        if !rest.is_empty() && !rest.starts_with(' ') {
            continue; // `okay`, `oks`: not a test point
        }
        if depth == 0 {
            top += 1;
        }
        let (desc, directive) = match rest.split_once(" # ") {
            Some((d, dir)) => (d, dir.trim().to_ascii_uppercase()),
            None => (rest, String::new()),
        };
        let name = desc
            .trim()
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start()
            .trim_start_matches("- ")
            .trim()
            .to_owned();
        let outcome = if directive.starts_with("SKIP") {
            Outcome::Skipped
        } else if directive.starts_with("TODO") {
            if ok {
                Outcome::Passed
            } else {
                Outcome::Skipped
            }
        } else if ok {
            Outcome::Passed
        } else {
            Outcome::Failed
        };
        score.add(name, outcome);
    }
    match planned {
        Some(n) if n == top && !bail => Some(score),
        _ => None,
    }
}
