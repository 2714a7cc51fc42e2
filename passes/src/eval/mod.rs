//! Scoring a test run from its output: `cargo test`, pytest, TAP and JUnit XML, or the format
//! detected from the text. A parser never fails: output it cannot read whole — garbage, or
//! cut before its summary — scores as unknown (`None`), never as zero and never as a crash.
//! Pure: text in, a score out.
//! design: eval.formats

mod cargo;
mod junit;
mod pytest;
mod tap;

#[cfg(test)]
mod tests;

/// Which producer wrote the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Cargo,
    Pytest,
    Tap,
    Junit,
    /// Detected from the text.
    Auto,
}

impl Format {
    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "cargo" => Format::Cargo,
            "pytest" => Format::Pytest,
            "tap" => Format::Tap,
            "junit" => Format::Junit,
            "auto" => Format::Auto,
            _ => return None,
        })
    }
}

/// How one test ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed,
    Skipped,
}

/// One test's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestResult {
    pub name: String,
    pub outcome: Outcome,
}

/// A run's score: skipped tests count in neither `passed` nor `total`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Score {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
    /// Every test the output names, in order (a summary-only output names none).
    pub tests: Vec<TestResult>,
}

impl Score {
    pub fn total(&self) -> usize {
        self.passed + self.failed
    }

    /// Passed over total, 0 to 1; `None` for a run with no test.
    pub fn ratio(&self) -> Option<f64> {
        (self.total() > 0).then(|| self.passed as f64 / self.total() as f64)
    }

    fn add(&mut self, name: String, outcome: Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Skipped => self.skipped += 1,
        }
        self.tests.push(TestResult { name, outcome });
    }
}

/// The score of `output` read as `format`; `None` when it cannot be read whole.
pub fn score(format: Format, output: &str) -> Option<Score> {
    match format {
        Format::Cargo => cargo::parse(output),
        Format::Pytest => pytest::parse(output),
        Format::Tap => tap::parse(output),
        Format::Junit => junit::parse(output),
        Format::Auto => score(detect(output)?, output),
    }
}

/// The format `output` looks like, if any.
pub fn detect(output: &str) -> Option<Format> {
    let head = output.trim_start();
    if head.starts_with("<?xml") || head.starts_with("<testsuite") {
        return Some(Format::Junit);
    }
    if head.starts_with("TAP version") || output.lines().any(tap::is_plan) {
        return Some(Format::Tap);
    }
    if output.lines().any(|l| l.starts_with("test result: ")) {
        return Some(Format::Cargo);
    }
    if output.lines().any(pytest::is_summary) {
        return Some(Format::Pytest);
    }
    None
}
