//! specc.toml as every command reads it: the model part (`specc_llm::config`), `[limits]`
//! (`specc_plan::Limits`), `[review]` (`specc_runtime::ReviewConfig`), and its own tables, `[build]` (`out`, `jobs`, `approve`, `adopted`) and `[sandbox]`
//! (`allow_weaker`, `read`, `memory_mb`, `file_mb`, `open_files`, `pids`), and `[eval]`
//! (`specc_runtime::eval::EvalConfig`). Unknown keys in its tables are refused. With `--provider replay` every
//! role is answered by one recording; the roles keep their models, so a recording made live
//! replays.
//! design: driver.build

use std::path::{Path, PathBuf};

use serde::Deserialize;
use specc_llm::LlmConfig;
use specc_llm::config::{ProviderConfig, ProviderKind};
use specc_plan::Limits;

mod error;
mod tables;

pub use error::{ConfigError, StateUrlError, TableError};
pub use tables::{known_tables, read};

/// Where a command's configuration comes from: specc.toml beside the spec (or `config`),
/// and whether one recording answers every role (`--provider replay`: `recording`, else
/// `.specc/recordings/build.jsonl`).
#[derive(Clone, Debug, Default)]
pub struct Source {
    pub config: Option<PathBuf>,
    pub replay: bool,
    pub recording: Option<PathBuf>,
}

pub struct BuildConfig {
    pub llm: LlmConfig,
    pub limits: Limits,
    /// `[review]`: how landed tasks are reviewed.
    pub review: specc_runtime::ReviewConfig,
    pub out: Option<PathBuf>,
    pub jobs: Option<usize>,
    /// `[build] approve = "plan"`: every build stops after planning for approval.
    pub approve_plan: bool,
    /// `[build] adopted = true`: the output is an existing repository `specc adopt` took
    /// in; its `main` before specc's first commit is imported as one snapshot.
    pub adopted: bool,
    pub allow_weaker: bool,
    /// `[sandbox] read`: more directories a command may read (toolchains).
    pub sandbox_read: Vec<PathBuf>,
    /// `[sandbox]` limits over the defaults.
    pub sandbox_limits: specc_sandbox::Rlimits,
    /// The environment variables that hold keys: never given to a command.
    pub key_vars: Vec<String>,
    /// `[runners]`: more languages for the spec's test blocks.
    pub runners: specc_sandbox::Runners,
    /// `[eval]`: the hidden test suite, if any.
    pub eval: Option<specc_runtime::eval::EvalConfig>,
    /// `SPECC_STATE_URL`, else `[state] url`: the PostgreSQL database of `specc serve`'s
    /// task leases (design: state.backends). Never printed: it may hold a password.
    pub state_url: Option<String>,
    /// `[secrets] allow`: what looks like a secret and is not.
    pub secrets_allow: Vec<String>,
    /// `[hooks]`: the user's commands run on the build's events (design: project.hooks).
    pub hooks: crate::hooks::HooksTable,
    /// `[build] agents_md`: a build writes AGENTS.md into its output [default: true, but
    /// false for an adopted repository]
    /// (design: project.agents-md).
    pub agents_md: bool,
}

#[derive(Deserialize)]
struct File {
    build: Option<BuildTable>,
    sandbox: Option<SandboxTable>,
    state: Option<StateTable>,
    secrets: Option<SecretsTable>,
    hooks: Option<crate::hooks::HooksTable>,
    /// Read by `specc mcp` itself; here so that a misspelt key is refused.
    #[allow(dead_code)]
    mcp: Option<McpTable>,
}

/// `[mcp]`: what `specc mcp` may do without being told on its command line (design:
/// driver.mcp).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct McpTable {
    #[allow(dead_code)]
    allow_spend: Option<bool>,
}

/// `[secrets]`: values that look like secrets and are not (design: secrets.redaction).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsTable {
    /// Regular expressions a redacted value may match whole to pass.
    allow: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateTable {
    url: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct BuildTable {
    out: Option<PathBuf>,
    jobs: Option<usize>,
    approve: Option<ApproveSetting>,
    /// The output is an existing repository `specc adopt` took in (design: driver.adopt).
    adopted: Option<bool>,
    /// Write AGENTS.md into the output (design: project.agents-md).
    agents_md: Option<bool>,
}

/// `[build] approve`: what a build waits for (design: driver.approval).
#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum ApproveSetting {
    /// Stop after planning; `specc build --approve` runs the saved plan.
    Plan,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct SandboxTable {
    allow_weaker: Option<bool>,
    read: Option<Vec<PathBuf>>,
    memory_mb: Option<u64>,
    file_mb: Option<u64>,
    open_files: Option<u64>,
    pids: Option<u64>,
}

pub fn load(source: &Source, dir: &Path, state: &Path) -> Result<BuildConfig, ConfigError> {
    let mut cfg = load_file(source.config.as_deref(), dir)?;
    if source.replay {
        let recording = source
            .recording
            .clone()
            .unwrap_or_else(|| state.join("recordings").join("build.jsonl"));
        if !recording.is_file() {
            return Err(ConfigError::NoRecording(recording));
        }
        cfg.llm.providers.insert(
            "replay".to_owned(),
            ProviderConfig {
                kind: ProviderKind::Replay,
                base_url: None,
                api_key_env: None,
                concurrency: 8,
                recording: Some(recording.display().to_string()),
                timeouts: None,
            },
        );
        for role in cfg.llm.roles.values_mut() {
            role.provider = "replay".to_owned();
        }
    }
    Ok(cfg)
}

/// Where a build of the spec in `dir` writes its code: `[build] out` of the configuration
/// (`config`, or specc.toml in `dir`), else `out/` beside the spec.
pub fn configured_out(config: Option<&Path>, dir: &Path) -> PathBuf {
    load_file(config, dir)
        .ok()
        .and_then(|c| c.out)
        .unwrap_or_else(|| dir.join("out"))
}

/// specc.toml at `config` (or beside the spec, in `dir`), as written.
pub fn load_file(config: Option<&Path>, dir: &Path) -> Result<BuildConfig, ConfigError> {
    let path = config.map_or_else(|| dir.join("specc.toml"), Path::to_path_buf);
    if !path.is_file() {
        return Err(ConfigError::Missing {
            path,
            needed: "to say which models plan and work",
        });
    }
    let text = tables::read(&path)?;
    let at = |error: TableError| ConfigError::Invalid {
        path: path.clone(),
        error,
    };
    let limits = Limits::from_toml(&text).map_err(|e| at(TableError::Limits(e)))?;
    let review =
        specc_runtime::ReviewConfig::parse(&text).map_err(|e| at(TableError::Review(e)))?;
    let llm = LlmConfig::parse_at(&text, &path).map_err(|e| at(TableError::Models(e)))?;
    let file: File = toml::from_str(&text).map_err(|e| at(TableError::Toml(e.to_string())))?;
    let config_dir = path.parent().unwrap_or(dir);
    let eval = specc_runtime::eval::EvalConfig::parse(&text, config_dir)
        .map_err(|e| at(TableError::Eval(e)))?;
    let runners = specc_sandbox::parse_runners(&text).map_err(|e| at(TableError::Runners(e)))?;
    let key_vars = llm
        .providers
        .values()
        .filter_map(|p| p.api_key_env.clone())
        .collect();
    let sandbox = file.sandbox.unwrap_or_default();
    let build = file.build.unwrap_or_default();
    if !review.lenses.is_empty() && llm.role(specc_llm::Role::Reviewer).is_none() {
        return Err(at(TableError::NoReviewer));
    }
    let sandbox_read: Vec<PathBuf> = sandbox
        .read
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|p| if p.is_relative() { dir.join(p) } else { p })
        .collect();
    if let Some(e) = &eval {
        hidden(e, &sandbox_read).map_err(at)?;
    }
    let state_url =
        state_url(file.state.and_then(|s| s.url)).map_err(|e| at(TableError::StateUrl(e)))?;
    let secrets_allow = file.secrets.and_then(|s| s.allow).unwrap_or_default();
    specc_passes::secrets::Redactor::new(&secrets_allow)
        .map_err(|e| at(TableError::SecretsAllow(e)))?;
    Ok(BuildConfig {
        hooks: file.hooks.unwrap_or_default(),
        // A person's own repository keeps its own AGENTS.md, if it has one.
        agents_md: build.agents_md.unwrap_or(build.adopted != Some(true)),
        state_url,
        secrets_allow,
        llm,
        limits,
        review,
        out: build
            .out
            .map(|o| if o.is_relative() { dir.join(o) } else { o }),
        jobs: build.jobs,
        approve_plan: build.approve == Some(ApproveSetting::Plan),
        adopted: build.adopted.unwrap_or(false),
        allow_weaker: sandbox.allow_weaker.unwrap_or(false),
        sandbox_read,
        sandbox_limits: limits_of(&sandbox),
        key_vars,
        runners,
        eval,
    })
}

/// `[eval] tests` must be a directory the sandbox cannot read: not under the system's
/// directories, the toolchains or `[sandbox] read`.
fn hidden(e: &specc_runtime::eval::EvalConfig, sandbox_read: &[PathBuf]) -> Result<(), TableError> {
    if !e.tests.is_dir() {
        return Err(TableError::NoTests(e.tests.clone()));
    }
    let system = specc_sandbox::SYSTEM_READABLE.iter().map(PathBuf::from);
    let mut readable: Vec<PathBuf> = system.chain(specc_sandbox::toolchain_dirs()).collect();
    readable.extend(sandbox_read.iter().cloned());
    match readable.iter().find_map(|r| e.exposed_by(r)) {
        Some(why) => Err(TableError::TestsExposed(why)),
        None => Ok(()),
    }
}

/// `[sandbox]`'s limits over the defaults.
fn limits_of(sandbox: &SandboxTable) -> specc_sandbox::Rlimits {
    let d = specc_sandbox::Rlimits::default();
    specc_sandbox::Rlimits {
        address_space: d.address_space,
        memory: sandbox.memory_mb.map_or(d.memory, |m| m << 20),
        file_size: sandbox.file_mb.map_or(d.file_size, |m| m << 20),
        open_files: sandbox.open_files.unwrap_or(d.open_files),
        pids: sandbox.pids.unwrap_or(d.pids),
    }
}

/// The state database's URL: `SPECC_STATE_URL`, else specc.toml's `[state] url` (`from_file`),
/// which may not hold a password; `None`: the embedded SQLite store (design: state.backends).
pub fn state_url(from_file: Option<String>) -> Result<Option<String>, StateUrlError> {
    let url = match std::env::var("SPECC_STATE_URL")
        .ok()
        .filter(|u| !u.is_empty())
    {
        Some(url) => Some(url),
        None => match from_file {
            Some(url) if has_password(&url) => {
                return Err(StateUrlError::Password);
            }
            url => url,
        },
    };
    if let Some(url) = &url
        && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
    {
        return Err(StateUrlError::NotPostgres);
    }
    Ok(url)
}

/// The password for a state URL that has none: `PGPASSWORD`, as libpq reads it.
pub fn pg_password() -> Option<String> {
    std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty())
}

/// Whether a postgres:// URL carries a password (`user:password@`, or `password=`).
fn has_password(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let user_info = authority.rsplit_once('@').map(|(u, _)| u);
    user_info.is_some_and(|u| u.contains(':')) || url.contains("password=")
}

#[cfg(test)]
mod tests {
    use super::has_password;

    #[test]
    fn a_password_in_a_state_url_is_found() {
        assert!(has_password("postgres://specc:secret@db:5432/specc"));
        assert!(has_password("postgres://db/specc?password=secret"));
        assert!(!has_password("postgres://specc@db:5432/specc"));
        assert!(!has_password("postgresql://db/specc?sslmode=disable"));
        assert!(!has_password("postgres://[::1]:5432/specc"));
    }

    /// Planners are told the line budget the VCS keeps: one figure, in two crates that do
    /// not depend on each other (design: runtime.landing-refusals).
    #[test]
    fn planners_are_told_the_line_budget_the_vcs_keeps() {
        assert_eq!(
            specc_plan::Limits::default().line_budget,
            specc_vcs::Options::default().line_budget
        );
    }
}
