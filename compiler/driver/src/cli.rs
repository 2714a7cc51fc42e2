//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "specc",
    version,
    about = "Compile a prose specification into a working codebase."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Parse a spec and print one of its intermediate representations.
    Plan(PlanArgs),
    /// Print the long explanation of a diagnostic code, or list every code.
    Explain(ExplainArgs),
}

#[derive(clap::Args, Debug)]
pub(crate) struct PlanArgs {
    /// The spec to read (Markdown).
    pub(crate) spec: PathBuf,
    /// Which representation to print.
    #[arg(long, value_enum, default_value_t = Emit::Intent)]
    pub(crate) emit: Emit,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) messages: MessageArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct MessageArgs {
    /// How to print diagnostics: for people, or one JSON object per line.
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    pub(crate) message_format: MessageFormat,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ExplainArgs {
    /// A diagnostic code such as E0101; without one, every code is listed.
    pub(crate) code: Option<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Emit {
    /// The Intent IR: the goal tree the front end builds from the spec.
    Intent,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MessageFormat {
    Human,
    Json,
}
