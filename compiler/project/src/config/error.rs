//! Why specc.toml could not be used: the file missing or unreadable, or one table's
//! complaint (each table's parser has its own error type), shown with the file's path and a
//! did-you-mean for a misspelt name. A command that cannot start without its configuration
//! reports it as E0406 (`specc explain E0406`, the driver's `command_error.rs`).
//! design: driver.config-check

use std::path::PathBuf;

use specc_passes::spelling::did_you_mean;

/// A table's complaint about specc.toml.
#[derive(Debug)]
pub enum TableError {
    /// Not TOML, or a key specc does not read in `[build]`, `[sandbox]` or `[state]` (the
    /// parser's message).
    Toml(String),
    /// A top-level table or key no part of specc reads, with the nearest table's name.
    Unknown {
        key: String,
        table: bool,
        near: Option<&'static str>,
        /// The tables there are.
        tables: &'static [&'static str],
    },
    Limits(specc_plan::LimitsError),
    Review(specc_runtime::ReviewConfigError),
    Eval(specc_runtime::eval::EvalConfigError),
    Runners(specc_sandbox::RunnersError),
    Models(specc_llm::LlmError),
    /// `[review]` names lenses and no role reviews.
    NoReviewer,
    /// `[eval] tests` is not a directory.
    NoTests(PathBuf),
    /// The sandbox would let workers read the eval tests (why, in words).
    TestsExposed(String),
    StateUrl(StateUrlError),
    /// `[secrets] allow` holds an expression that does not parse.
    SecretsAllow(String),
}

/// What is wrong with the state database's URL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateUrlError {
    /// specc.toml's `[state] url` holds a password.
    Password,
    /// Not a `postgres://` URL.
    NotPostgres,
}

/// Why specc.toml could not be used.
#[derive(Debug)]
pub enum ConfigError {
    /// There is none at `path`, and a command needs one (`needed`: what for).
    Missing { path: PathBuf, needed: &'static str },
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A table's complaint about the file at `path`.
    Invalid { path: PathBuf, error: TableError },
    /// `--provider replay` and no recording at the path.
    NoRecording(PathBuf),
}

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TableError::Toml(why) => write!(f, "{why}"),
            TableError::Unknown {
                key,
                table,
                near,
                tables,
            } => {
                let what = if *table {
                    format!("unknown table `[{key}]`")
                } else {
                    format!("unknown key `{key}` outside any table")
                };
                match near {
                    Some(near) => write!(f, "{what}: did you mean `[{near}]`?"),
                    None => write!(
                        f,
                        "{what}; specc.toml's tables are {}",
                        specc_passes::spelling::list(tables)
                    ),
                }
            }
            TableError::Limits(e) => write!(f, "{e}"),
            TableError::Review(e) => write!(f, "{e}"),
            TableError::Eval(e) => write!(f, "{e}"),
            TableError::Runners(e) => write!(f, "{e}"),
            TableError::Models(e) => write!(f, "{e}"),
            TableError::NoReviewer => write!(
                f,
                "[review] names lenses but there is no [roles.reviewer] to review with"
            ),
            TableError::NoTests(p) => write!(f, "[eval] tests: {} is not a directory", p.display()),
            TableError::TestsExposed(why) => write!(f, "{why}"),
            TableError::StateUrl(e) => write!(f, "{e}"),
            TableError::SecretsAllow(e) => write!(f, "[secrets] allow: {e}"),
        }
    }
}

impl std::fmt::Display for StateUrlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StateUrlError::Password => write!(
                f,
                "[state] url must not hold a password (specc.toml is often committed): set SPECC_STATE_URL, or PGPASSWORD beside a URL without one"
            ),
            StateUrlError::NotPostgres => write!(
                f,
                "the state URL must be a postgres:// URL (SPECC_STATE_URL or [state] url)"
            ),
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Missing { path, needed } => write!(f, "no {} {needed}", path.display()),
            ConfigError::Unreadable { path, error } => write!(f, "{}: {error}", path.display()),
            ConfigError::Invalid { path, error } => {
                write!(
                    f,
                    "{}: {}",
                    path.display(),
                    did_you_mean(&error.to_string())
                )
            }
            ConfigError::NoRecording(p) => write!(f, "no recording at {}", p.display()),
        }
    }
}

impl std::error::Error for ConfigError {}
