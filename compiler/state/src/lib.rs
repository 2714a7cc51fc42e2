//! specc-state: the state database behind one interface, on SQLite (the embedded store, by
//! default) or PostgreSQL (scale-out), and the build state kept in it.
//!
//! * [`Sql`]: the statement-level interface every state operation is written once over
//!   (`sql.rs`), with [`Dialect`] for the few words the backends spell differently;
//!   `sqlite.rs` and `postgres/` are the backends.
//! * [`StateDb`]: the one batched writer of a process (`writer.rs`), its commits on a
//!   thread of their own and its SQLite checkpoints on another (`checkpoint.rs`).
//! * [`schema`]: each owner of tables declares its own [`Tables`] and migrates them.
//! * [`Journal`]: runs, tasks, attempts and their steps, and their reads for resuming a
//!   build, for the record and for `specc status` (`journal/`).
//! * [`LeaseStore`]: task leases with fencing tokens, for `specc serve`'s workers.
//!
//! The ledger (specc-llm) and the eval series (specc-runtime) keep their tables here too,
//! through the same interface; this crate knows nothing of models, the VCS or the sandbox.

mod checkpoint;
mod dialect;
mod error;
mod journal;
mod leases;
mod postgres;
pub mod schema;
mod sql;
pub mod sqlite;
mod writer;

pub use dialect::Dialect;
pub use error::StateError;
pub use journal::{
    AttemptSpan, AttemptStory, JOURNAL, Journal, JournalError, LastAttempt, RunRow, RunningAttempt,
    Screen, SettledRow, Status, StepAt, StepKind, StepRow, Story, StoryStep, Submissions,
    TASK_STATES, TaskLine, TaskRef, TaskRow, TaskState, Timeline, read_landed, read_status,
    read_story, status_of, step_write, story_of, timeline,
};
pub use leases::{
    Claim, LEASES, LeaseError, LeaseRow, LeaseStore, StepRecord, read as read_leases,
};
pub use postgres::PgState;
pub use schema::{Migration, Tables};
pub use sql::{Arg, Row, Sql, Value, dollar_placeholders};
pub use writer::{StateDb, Write};
