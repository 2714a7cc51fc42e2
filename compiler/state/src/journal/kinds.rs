//! The journal's vocabulary: what a step was, a task's state, where a step goes and the
//! task a record is about, and the write of one step (which the ledger may queue in the
//! transaction that records the call the step answers).
//! design: runtime.journal

use crate::args;
use crate::sql::Sql;
use crate::writer::Write;

/// What a step of an attempt was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The model's response (text and tool calls).
    Model,
    /// A tool's result.
    Tool,
    /// The model call failed (the error is the body).
    ModelError,
    /// An acceptance run.
    Acceptance,
    /// The submission to the VCS and its outcome.
    Submit,
    /// The planner's re-plan (new instructions, maybe new checks or scope, and why),
    /// before the attempt that uses them (step 0), with the work it starts from.
    Replan,
    /// The earlier attempt's work the next one starts from, when it was not re-planned
    /// (step 0; design: runtime.carried-work).
    Carry,
    /// The merge agent's work on a conflicted submission, and its outcome.
    Merge,
    /// The reviewers' findings on a landing, and the follow-ups they called for.
    Review,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Model => "model",
            StepKind::Tool => "tool",
            StepKind::ModelError => "model_error",
            StepKind::Acceptance => "acceptance",
            StepKind::Submit => "submit",
            StepKind::Replan => "replan",
            StepKind::Carry => "carry",
            StepKind::Merge => "merge",
            StepKind::Review => "review",
        }
    }
}

/// A task's state in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Pending,
    Running,
    Landed,
    /// Landed in an earlier build with the same fingerprint.
    UpToDate,
    Failed,
    Skipped,
    /// Not started or not finished because the build stopped (budget).
    Stopped,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Running => "running",
            TaskState::Landed => "landed",
            TaskState::UpToDate => "up_to_date",
            TaskState::Failed => "failed",
            TaskState::Skipped => "skipped",
            TaskState::Stopped => "stopped",
        }
    }
}

/// Where a step goes.
#[derive(Clone, Copy, Debug)]
pub struct StepAt<'a> {
    pub run: &'a str,
    pub task: &'a str,
    pub attempt: u32,
    pub step: u32,
}

/// The write of a step: queued by the journal, or by the ledger in the transaction that
/// records the call the step answers (`Client::call_journaled`).
pub fn step_write(at: StepAt<'_>, kind: StepKind, body: &serde_json::Value) -> Write {
    let (run, task, attempt, step) = (at.run.to_owned(), at.task.to_owned(), at.attempt, at.step);
    let body = body.to_string();
    Box::new(move |c: &mut dyn Sql| {
        c.execute(
            "INSERT INTO steps (run, task, attempt, step, kind, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (run, task, attempt, step) DO UPDATE SET kind = ?5, body = ?6",
            args![&run, &task, attempt, step, kind.as_str(), &body],
        )
        .map(drop)
    })
}

/// The task a record is about.
#[derive(Clone, Copy, Debug)]
pub struct TaskRef<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub fingerprint: &'a str,
}
