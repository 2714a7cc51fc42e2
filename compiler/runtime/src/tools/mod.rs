//! The worker's tools: JSON-schema definitions the model sees, and their implementations
//! over the task's checkout. A malformed call (unknown tool, arguments that do not fit the
//! schema) is answered with an error the model can act on, never a crash. Writes outside
//! the write scope, into `.specc/` or `.git/`, or through a symlink are refused.
//! One file per family: `view` (read, list, search), `edit` (edit, write), `run`,
//! `notes` (note, flag_big_file); `done`, `dispute_check` and `give_up` end the attempt.
//! design: runtime.tools

mod breaking;
mod call;
mod edit;
mod notes;
mod outcome;
mod run;
mod schema;
mod toolbox;
mod view;

pub(crate) use outcome::Dispute;
pub(crate) use outcome::{Control, ToolOutcome};
pub(crate) use schema::{action_key, definitions};
pub use toolbox::{Base, Toolbox};

/// The characters of the worker tools' definitions as every worker request sends them.
pub fn schema_chars() -> usize {
    definitions()
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum()
}
