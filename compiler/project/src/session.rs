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
    /// The user's `[hooks]`, fired on the build's events (design: project.hooks).
    pub hooks: crate::hooks::Hooks,
    /// Held while the build runs: one `specc build` per state directory.
    _lock: std::fs::File,
}

impl Session {
    /// Exports the store's head to `out/` and checks it out. Commits a person made there
    /// while the build ran are imported by the next build: exporting on top of them now
    /// would build on a base the build never saw, so the export is refused. `Ok(false)`:
    /// nothing to check out, the VCS holds no commit and `out/` never had a `main`.
    /// Unless `[build] agents_md = false`, AGENTS.md is committed first (design:
    /// project.agents-md), naming `spec` as a person runs specc beside it.
    pub fn export(&self, spec: &Path) -> Result<bool, git::OutDirError> {
        let pending = git::check_clean(&self.out)?;
        if !pending.commits.is_empty() {
            return Err(OutDirError::CommittedDuring(self.out.clone()));
        }
        if self.cfg.agents_md {
            // As a person beside the spec names them.
            let shown = |p: &Path| match p.strip_prefix(&self.dir) {
                Ok(r) if r.as_os_str().is_empty() => ".".to_owned(),
                Ok(r) => r.display().to_string(),
                Err(_) => p.display().to_string(),
            };
            let out = shown(&self.out);
            let text = crate::agents_md::output(&shown(spec), &out, self.repo.line_budget());
            self.rt
                .block_on(crate::agents_md::commit(&self.repo, &self.run, &text));
        }
        git::begin_export(&self.out)?;
        git::export(&self.out, || {
            self.rt.block_on(self.repo.export_git(&self.out, None))
        })
    }

    /// Opens a build: the configuration, `out/`'s check, the sandbox gate, the state
    /// database, the VCS store with a person's commits imported, the run (resumed if the
    /// last one never finished) and the client. Each step is a function below, in order.
    pub fn open(open: &Open, overrides: &Overrides) -> Result<Session, BuildError> {
        let dir = crate::spec_dir(Some(&open.spec));
        let state = dir.join(".specc");
        let cfg = config::load(&open.source, &dir, &state)?;
        let out = open
            .out
            .clone()
            .or_else(|| cfg.out.clone())
            .unwrap_or_else(|| dir.join("out"));
        let (first_adopted, pending) = out_before(&cfg, &out)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(BuildError::Runtime)?;
        let (runner, weaker) = confinement(&cfg, overrides, &rt)?;
        let lock = lock(&state)?;
        // A few descriptors for each attempt in flight (design: perf.width).
        specc_sandbox::raise_open_files();
        // One writer for the ledger and the journal: one commit takes both.
        let ledger = open_state(&cfg, &state)?;
        // Secrets are screened out of every request and every journaled row (design:
        // secrets.redaction); the allow list was checked when specc.toml was read.
        let secrets = crate::secrets::redactor(&cfg.secrets_allow);
        let journal = Journal::on(ledger.state_db())?.screened(crate::secrets::screen(&secrets));
        let store = open_store(&state, &out, first_adopted, pending, &rt)?;
        let (run, resumed) = start_run(&journal, &open.spec)?;
        let client =
            crate::client::build(&cfg.llm, open.record.as_deref(), overrides.models.as_ref())
                .with_ledger(ledger.clone(), &run)
                .with_redactor(Arc::new(crate::secrets::Secrets(secrets.clone())));
        let hooks =
            crate::hooks::Hooks::new(cfg.hooks.clone(), &dir, crate::hooks::hidden(&cfg.key_vars));
        Ok(Session {
            hooks,
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
            repo: store.repo,
            client,
            run,
            resumed,
            imported: store.imported,
            adopted_files: store.adopted_files,
            rt,
            _lock: lock,
        })
    }
}

/// What `out/` holds before the build: whether it is an adopted repository's first build
/// (no commit of specc's yet: the snapshot comes first, and `out/` is read again once it
/// is in), and the commits people made there to import. An adopted repository must be on
/// `main`.
fn out_before(cfg: &BuildConfig, out: &Path) -> Result<(bool, Pending), BuildError> {
    if cfg.adopted {
        let branch = git::read(out, &["symbolic-ref", "--short", "HEAD"]);
        if branch.as_deref().map(str::trim) != Some("main") {
            return Err(BuildError::NotOnMain {
                out: out.to_path_buf(),
            });
        }
    }
    match git::check_clean(out) {
        Err(OutDirError::ForeignCommits(_)) if cfg.adopted => Ok((true, Pending::default())),
        read => Ok((false, read.map_err(git::GitError::from)?)),
    }
}

/// The runner, and what it leaves unconfined when live models would use a weaker one
/// (W0407); refused unless specc.toml allows it.
fn confinement(
    cfg: &BuildConfig,
    overrides: &Overrides,
    rt: &tokio::runtime::Runtime,
) -> Result<(Arc<dyn Runner>, Option<String>), BuildError> {
    let (runner, missing) = runner(cfg, overrides.sandbox_helper.as_deref(), rt);
    let weaker =
        (runner.confinement() == Confinement::Weaker && live(cfg, overrides)).then_some(missing);
    match weaker {
        Some(missing) if !cfg.allow_weaker => Err(BuildError::WeakerSandbox { missing }),
        weaker => Ok((runner, weaker)),
    }
}

/// The VCS store, with what came into it before this build's work.
struct Store {
    repo: specc_vcs::Repo,
    /// A person's commits in `out/` imported now.
    imported: usize,
    /// An adopted repository's snapshot: its files, and the git entries it left out.
    adopted_files: Option<(usize, usize)>,
}

/// Opens the VCS store in `.specc/vcs`: an adopted repository's first build takes its
/// snapshot first; a person's commits in `out/` become the base this build works on.
fn open_store(
    state: &Path,
    out: &Path,
    first_adopted: bool,
    mut pending: Pending,
    rt: &tokio::runtime::Runtime,
) -> Result<Store, BuildError> {
    let log = state.join("vcs").join("log");
    std::fs::create_dir_all(state.join("vcs")).map_err(BuildError::Store)?;
    let mut adopted_files = None;
    if first_adopted {
        adopted_files = Some(git::snapshot(out, &log, rt).map_err(git::GitError::from)?);
        pending = git::check_clean(out).map_err(git::GitError::from)?;
    }
    let repo =
        specc_vcs::Repo::open(&log, specc_vcs::Options::default()).map_err(BuildError::Store)?;
    let imported = match pending.base {
        Some(base) if !pending.commits.is_empty() => rt
            .block_on(git::import(
                out,
                &repo,
                base,
                &pending.base_sha,
                &pending.commits,
            ))
            .map_err(git::GitError::from)?,
        _ => 0,
    };
    Ok(Store {
        repo,
        imported,
        adopted_files,
    })
}

/// The build's run: the last one, if it never finished (it died with its process and is
/// resumed under its own id, so its idempotency keys and journaled responses are found
/// again), else a new one. Whether it is resumed.
fn start_run(journal: &Journal, spec: &Path) -> Result<(String, bool), BuildError> {
    if let Some(run) = journal.unfinished_run()? {
        journal.reopen_run(&run)?;
        return Ok((run, true));
    }
    let run = format!(
        "build-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    journal.start_run(&run, &spec.display().to_string())?;
    Ok((run, false))
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
