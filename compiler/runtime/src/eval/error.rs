//! Why an evaluation could not run. A suite that runs and fails is a score, not an error.
//! design: eval.run
//! design: runtime.errors

use specc_state::StateError;
use specc_vcs::object::ObjectId;

#[derive(Debug)]
pub enum EvalError {
    /// The commit is not on the build's branch.
    NoCommit(ObjectId),
    /// The evaluator's checkout, its copy of the hidden tests, or what a run left could not
    /// be written or removed (`what` names the step and the path).
    Io { what: String, error: std::io::Error },
    /// The series could not be read or written.
    State(StateError),
    /// A blocking step did not finish (it panicked): a bug.
    Task(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::NoCommit(id) => write!(f, "no commit {} in the VCS store", id.hex()),
            EvalError::Io { what, error } => write!(f, "{what}: {error}"),
            EvalError::State(e) => write!(f, "the eval series in the state database: {e}"),
            EvalError::Task(why) => write!(f, "an evaluation step stopped: {why}"),
        }
    }
}

impl std::error::Error for EvalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EvalError::Io { error, .. } => Some(error),
            EvalError::State(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StateError> for EvalError {
    fn from(e: StateError) -> EvalError {
        EvalError::State(e)
    }
}

impl From<tokio::task::JoinError> for EvalError {
    fn from(e: tokio::task::JoinError) -> EvalError {
        EvalError::Task(e.to_string())
    }
}

/// An I/O failure of step `what`.
pub(super) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EvalError {
    let what = what.into();
    move |error| EvalError::Io { what, error }
}
