//! specc-sandbox: running the commands models propose, confined.
//!
//! Every command a model proposes (a worker's `run`, an acceptance check, an eval) goes
//! through a [`Runner`]: [`SandboxRunner`] re-executes the specc binary as a helper that
//! enters new user, mount, network (loopback only) and pid namespaces, cgroups, rlimits,
//! Landlock and seccomp before the command runs (`confine/`); [`ProcessRunner`] is the
//! interim runner (process group, timeout, capped output, scrubbed environment) that the
//! sandbox starts its helper with, and that tests use where no sandbox is needed. The
//! `[runners]` table of specc.toml (`test_blocks`) says how a spec's test blocks in other
//! languages run. This crate knows no other specc crate (design: runtime.sandbox).

mod commands;
mod confine;
mod process;
mod runner;
mod test_blocks;

pub use commands::commands_on_path;
pub use confine::helper;
pub use confine::{Probe, Rlimits, SUBCOMMAND, SYSTEM_READABLE, SandboxRunner, toolchain_dirs};
pub use process::{ALLOWED_VARS, LOG_CAP, ProcessRunner};
pub use runner::{
    BoxFuture, Captured, CommandLimits, CommandResult, CommandSpec, Confinement, Exit, Runner,
    raise_open_files,
};
pub use test_blocks::{Runners, RunnersError, parse as parse_runners, script as block_script};
