//! The trace's rows (a requirement, its tasks, code and tests) and its summary.

use serde::Serialize;
use specc_project::trace::TestStatus;

/// One requirement, followed.
#[derive(Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) level: String,
    /// Whether it binds (MUST, MUST NOT, SHALL, SHALL NOT): what the summary counts.
    pub(crate) binding: bool,
    pub(crate) text: String,
    /// `spec.md:LINE`.
    pub(crate) place: String,
    pub(crate) tasks: Vec<TaskRef>,
    pub(crate) code: Vec<Place>,
    pub(crate) tests: Vec<Test>,
    /// Why it needs no code, when a planner waived it (`no_code`): counted apart from the
    /// binding requirements (design: spec.no-code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) waived: Option<String>,
}

/// The binding requirements' coverage.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Summary {
    /// Binding requirements, the waived ones left out.
    pub(crate) binding: usize,
    /// Binding requirements a planner waived as needing no code.
    pub(crate) waived: usize,
    pub(crate) by_task: usize,
    pub(crate) by_code: usize,
    pub(crate) by_passing_test: usize,
}

#[derive(Debug, Serialize)]
pub(crate) struct TaskRef {
    pub(crate) id: String,
    pub(crate) landed: bool,
}

#[derive(Debug, Serialize)]
pub(crate) struct Place {
    pub(crate) path: String,
    pub(crate) line: u32,
}

/// A test of a requirement: a test file's `req:` reference, or a spec test block of its
/// section (`path` is then the spec, `spec_check` true).
#[derive(Debug, Serialize)]
pub(crate) struct Test {
    pub(crate) path: String,
    pub(crate) line: u32,
    pub(crate) spec_check: bool,
    pub(crate) status: TestStatus,
}
