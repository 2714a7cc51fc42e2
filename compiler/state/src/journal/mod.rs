//! The execution journal in the state database: runs, tasks, attempts and their steps,
//! written by the build (`record.rs`) through one handle (`handle.rs`) and read back to
//! resume a killed build (`resume.rs`), for the record (`read.rs`), for `specc status`
//! (`status.rs`) and for `specc show` (`story.rs`). Its tables are its own (`tables.rs`).
//! design: runtime.journal

mod handle;
mod kinds;
mod read;
mod record;
mod resume;
mod settled;
mod status;
mod story;
mod tables;
mod timeline;

pub use handle::{Journal, JournalError, Screen};
pub use kinds::{StepAt, StepKind, TaskRef, TaskState, step_write};
pub use read::{StepRow, TaskRow};
pub use resume::LastAttempt;
pub use settled::SettledRow;
pub use status::{RunRow, RunningAttempt, Status, Submissions, TASK_STATES, TaskLine};
pub use status::{of as status_of, read as read_status, read_landed};
pub use story::{AttemptStory, Story, StoryStep, of as story_of, read as read_story};
pub use tables::JOURNAL;
pub use timeline::{AttemptSpan, Timeline, timeline};
