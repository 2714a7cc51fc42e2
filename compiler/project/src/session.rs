//! What a build opens before any work: the configuration, the output directory's check,
//! the sandbox gate, the state database (ledger and journal), the VCS store, the client and
//! the async runtime. Each failure is one [`BuildError`].
//! design: driver.build, project.library

use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_llm::config::ProviderKind;
use specc_llm::{Client, Ledger};
use specc_sandbox::{Confinement, ProcessRunner, Runner, SandboxRunner};
use specc_state::{Journal, StateDb};
use specc_vcs::git::{self, OutDirError, Pending};

use crate::config::{self, BuildConfig, Source};
use crate::{BuildError, Overrides};

/// What a build opens: its spec, its configuration's source, where its code goes
/// (`[build] out`, else `out/` beside the spec, unless `out` says), and where its model
/// exchanges are recorded.
#[derive(Clone, Debug, Default)]
pub struct Open {
    pub spec: PathBuf,
    pub source: Source,
    pub out: Option<PathBuf>,
    pub record: Option<PathBuf>,
}

/// An opened build.
pub struct Session {
    pub dir: PathBuf,
    pub state: PathBuf,
    pub cfg: BuildConfig,
    pub out: PathBuf,
    /// The sandbox, or (with no helper binary) the interim runner.
    pub runner: Arc<dyn Runner>,
    /// The runner confines commands only partly, as specc.toml allows (W0407): what is
    /// missing, in words.
    pub weaker: Option<String>,
    pub ledger: Arc<Ledger>,
    pub journal: Journal,
    pub repo: specc_vcs::Repo,
    pub client: Client,
    /// What the build's requests and journal rows are screened with (design:
    /// secrets.redaction), and what it redacted, for the summary.
    pub secrets: Arc<specc_passes::secrets::Redactor>,
    /// The adopted packages' test commands (design: driver.adopt).
    pub adopted_checks: Vec<specc_passes::adopted::KeptChecks>,
    pub run: String,
    /// The run was killed before it finished and is being resumed.
    pub resumed: bool,
    /// Commits people made in `out/`, imported into the store before this build.
    pub imported: usize,
    /// The first build of an adopted repository: the files its snapshot took in, and the
    /// git entries (symlinks, submodules) it left out.
    pub adopted_files: Option<(usize, usize)>,
    pub rt: tokio::runtime::Runtime,
    /// Held while the build runs: one `specc build` per state directory.
    _lock: std::fs::File,
}

impl Session {
    pub fn open(open: &Open, overrides: &Overrides) -> Result<Session, BuildError> {
        let dir = crate::spec_dir(Some(&open.spec));
        let state = dir.join(".specc");
        let cfg = config::load(&open.source, &dir, &state)?;
        let out = open
            .out
            .clone()
            .or_else(|| cfg.out.clone())
            .unwrap_or_else(|| dir.join("out"));
        if cfg.adopted {
            let branch = git::read(&out, &["symbolic-ref", "--short", "HEAD"]);
            if branch.as_deref().map(str::trim) != Some("main") {
                return Err(BuildError::NotOnMain { out });
            }
        }
        // An adopted repository's first build finds no commit of specc's: the snapshot comes
        // first, and `out/` is read again once it is in.
        let (first_adopted, pending) = match git::check_clean(&out) {
            Err(OutDirError::ForeignCommits(_)) if cfg.adopted => (true, Pending::default()),
            read => (false, read.map_err(git::GitError::from)?),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(BuildError::Runtime)?;
        let (runner, missing) = runner(&cfg, overrides.sandbox_helper.as_deref(), &rt);
        let weaker = (runner.confinement() == Confinement::Weaker && live(&cfg, overrides))
            .then_some(missing);
        if let Some(missing) = weaker.as_ref().filter(|_| !cfg.allow_weaker) {
            return Err(BuildError::WeakerSandbox {
                missing: missing.clone(),
            });
        }
        let lock = lock(&state)?;
        // A few descriptors for each attempt in flight (design: perf.width).
        specc_sandbox::raise_open_files();
        let ledger = open_state(&cfg, &state)?;
        // One writer for the ledger and the journal: one commit takes both.
        // Secrets are screened out of every request and every journaled row (design:
        // secrets.redaction); the allow list was checked when specc.toml was read.
        let secrets = crate::secrets::redactor(&cfg.secrets_allow);
        let journal = Journal::on(ledger.state_db())?.screened(crate::secrets::screen(&secrets));
        let mut pending = pending;
        let mut adopted_files = None;
        if first_adopted {
            std::fs::create_dir_all(state.join("vcs")).map_err(BuildError::Store)?;
            let taken = git::snapshot(&out, &state.join("vcs").join("log"), &rt)
                .map_err(git::GitError::from)?;
            adopted_files = Some(taken);
            pending = git::check_clean(&out).map_err(git::GitError::from)?;
        }
        let repo = std::fs::create_dir_all(state.join("vcs"))
            .and_then(|()| {
                specc_vcs::Repo::open(
                    &state.join("vcs").join("log"),
                    specc_vcs::Options::default(),
                )
            })
            .map_err(BuildError::Store)?;
        // A person's commits in `out/` become the base this build works on.
        let imported = match pending.base {
            Some(base) if !pending.commits.is_empty() => rt
                .block_on(git::import(
                    &out,
                    &repo,
                    base,
                    &pending.base_sha,
                    &pending.commits,
                ))
                .map_err(git::GitError::from)?,
            _ => 0,
        };
        // A run that never finished died with its process: it is resumed, under its own id,
        // so its idempotency keys and journaled responses are found again.
        let (run, resumed) = match journal.unfinished_run()? {
            Some(run) => {
                journal.reopen_run(&run)?;
                (run, true)
            }
            None => {
                let run = format!(
                    "build-{}",
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis())
                );
                journal.start_run(&run, &open.spec.display().to_string())?;
                (run, false)
            }
        };
        let client =
            crate::client::build(&cfg.llm, open.record.as_deref(), overrides.models.as_ref())
                .with_ledger(ledger.clone(), &run)
                .with_redactor(Arc::new(crate::secrets::Secrets(secrets.clone())));
        Ok(Session {
            dir,
            state,
            cfg,
            out,
            runner,
            weaker,
            ledger,
            journal,
            secrets,
            adopted_checks: Vec::new(),
            repo,
            client,
            run,
            resumed,
            imported,
            adopted_files,
            rt,
            _lock: lock,
        })
    }
}

/// The build's state database: `.specc/state.db`, or with a state URL (`[state] url`,
/// `SPECC_STATE_URL`) the PostgreSQL database it names, whose ledger, journal, eval series
/// and leases then live there (design: state.backends). A PostgreSQL database holds one
/// build at a time, as `.specc/` does: its advisory lock is held by the state connection,
/// and so ends with the process, however the process ends.
fn open_state(cfg: &BuildConfig, state: &Path) -> Result<Arc<Ledger>, BuildError> {
    let Some(url) = &cfg.state_url else {
        return Ledger::open(&state.join("state.db"))
            .map(Arc::new)
            .map_err(BuildError::State);
    };
    let password = config::pg_password();
    let db = StateDb::connect_postgres(url, password.as_deref()).map_err(BuildError::Postgres)?;
    if !db
        .try_advisory_lock(BUILD_LOCK)
        .map_err(BuildError::Postgres)?
    {
        return Err(BuildError::PostgresBusy);
    }
    Ledger::writing_to(Arc::new(db))
        .map(Arc::new)
        .map_err(BuildError::PostgresLedger)
}

/// The advisory lock a build holds on a PostgreSQL state database ("SPECCBLD").
const BUILD_LOCK: i64 = 0x5350_4543_4342_4c44;

/// Takes `.specc/lock`, or says that another build holds it. The lock is the operating
/// system's: it ends with the process, however the process ends.
pub fn lock(state: &Path) -> Result<std::fs::File, BuildError> {
    let path = state.join("lock");
    let file = std::fs::create_dir_all(state)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
        })
        .map_err(|error| BuildError::Lock {
            path: path.clone(),
            error,
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(BuildError::Locked {
            state: state.to_path_buf(),
            lock: path,
        }),
        Err(std::fs::TryLockError::Error(error)) => Err(BuildError::Lock { path, error }),
    }
}

/// The sandbox over the helper binary, or the interim runner without one; and what the
/// host does not enforce, in words.
pub fn runner(
    cfg: &BuildConfig,
    helper: Option<&Path>,
    rt: &tokio::runtime::Runtime,
) -> (Arc<dyn Runner>, String) {
    let process = ProcessRunner {
        secret_vars: cfg.key_vars.clone(),
    };
    let Some(helper) = helper.map(Path::to_path_buf) else {
        return (Arc::new(process), "no sandbox helper binary".to_owned());
    };
    let mut sandbox = rt.block_on(SandboxRunner::new(
        helper,
        process,
        cfg.sandbox_limits.clone(),
    ));
    sandbox.readable.extend(cfg.sandbox_read.iter().cloned());
    let missing = sandbox.probe.missing().join(", ");
    (Arc::new(sandbox), missing)
}

/// Live models: a role answered by an HTTP provider (scripted answers and recordings are
/// not live).
pub fn live(cfg: &BuildConfig, overrides: &Overrides) -> bool {
    overrides.models.is_none()
        && cfg.llm.roles.values().any(|r| {
            cfg.llm
                .providers
                .get(&r.provider)
                .is_some_and(|p| p.kind != ProviderKind::Replay)
        })
}
