//! The store's git side that touches a person's repository: `out/` as specc exports into it
//! (`out_dir`: may it be written, the export between its marks, an interrupted export
//! finished), a person's commits imported into the store before a build (`import`), an
//! adopted repository's first snapshot (`adopt`), and reading any repository (`read`). Every
//! git command specc runs in a person's repository starts in [`output`]: it reads the
//! person's configuration as their own git would (a global ignore file decides what
//! `git status` calls untracked), where the checkouts' views and the export's fast-import
//! read none (`export.rs`, `view.rs`).
//! design: driver.build, vcs.import, driver.adopt

pub mod adopt;
mod command;
mod error;
pub mod import;
pub mod out_dir;

pub use adopt::{AdoptError, snapshot};
pub use command::read;
pub use error::GitError;
pub use import::{ImportError, Unsafe, import};
pub use out_dir::{OutDirError, Pending, PersonCommit, begin_export, check_clean, export};
