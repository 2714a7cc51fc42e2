//! What a build opens before any work: the configuration, the output directory's check,
//! the sandbox gate, the state database (ledger and journal), the VCS store, the client and
//! the async runtime. Each failure is one typed refusal with its code.
//! design: driver.build

use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_ir::{Diagnostic, codes};
use specc_llm::config::ProviderKind;
use specc_llm::{Client, Ledger, Provider};
use specc_sandbox::{Confinement, ProcessRunner, Runner, SandboxRunner};
use specc_state::{Journal, StateDb};

use super::config::{self, BuildConfig};
use super::{adopt_import, import, out_dir};
use crate::cli::BuildArgs;
use crate::{Env, exit};

/// Why a build could not start.
pub(in crate::commands) struct Refused {
    pub(in crate::commands) diagnostic: Box<Diagnostic>,
    pub(in crate::commands) status: i32,
}

impl Refused {
    fn setup(message: String) -> Refused {
        Refused {
            diagnostic: Box::new(
                Diagnostic::new(codes::BUILD_SETUP, message).with_help("see `specc explain E0406`"),
            ),
            status: exit::USAGE,
        }
    }
}

/// An opened build.
pub(in crate::commands) struct Session {
    pub(in crate::commands) dir: PathBuf,
    pub(in crate::commands) state: PathBuf,
    pub(in crate::commands) cfg: BuildConfig,
    pub(in crate::commands) out: PathBuf,
    /// The sandbox, or (with no helper binary) the interim runner.
    pub(in crate::commands) runner: Arc<dyn Runner>,
    /// The runner confines commands only partly, as specc.toml allows (W0407): what is
    /// missing, in words.
    pub(in crate::commands) weaker: Option<String>,
    pub(in crate::commands) ledger: Arc<Ledger>,
    pub(in crate::commands) journal: Journal,
    pub(in crate::commands) repo: specc_vcs::Repo,
    pub(in crate::commands) client: Client,
    /// What the build's requests and journal rows are screened with (design:
    /// secrets.redaction), and what it redacted, for the summary.
    pub(in crate::commands) secrets: Arc<specc_passes::secrets::Redactor>,
    /// The adopted packages' test commands (design: driver.adopt).
    pub(in crate::commands) adopted_checks: Vec<specc_passes::adopted::KeptChecks>,
    pub(in crate::commands) run: String,
    /// The run was killed before it finished and is being resumed.
    pub(in crate::commands) resumed: bool,
    /// Commits people made in `out/`, imported into the store before this build.
    pub(in crate::commands) imported: usize,
    /// The first build of an adopted repository: the files its snapshot took in, and the
    /// git entries (symlinks, submodules) it left out.
    pub(in crate::commands) adopted_files: Option<(usize, usize)>,
    pub(in crate::commands) rt: tokio::runtime::Runtime,
    /// Held while the build runs: one `specc build` per state directory.
    _lock: std::fs::File,
}

impl Session {
    pub(in crate::commands) fn open(args: &BuildArgs, env: &Env) -> Result<Session, Refused> {
        let dir = crate::commands::spec_dir(Some(&args.spec));
        let state = dir.join(".specc");
        let cfg = config::load(args, &dir, &state).map_err(|e| Refused {
            diagnostic: Box::new(e.diagnostic()),
            status: exit::USAGE,
        })?;
        let out = args
            .out
            .clone()
            .or_else(|| cfg.out.clone())
            .unwrap_or_else(|| dir.join("out"));
        if cfg.adopted {
            let branch = crate::commands::git::read(&out, &["symbolic-ref", "--short", "HEAD"]);
            if branch.as_deref().map(str::trim) != Some("main") {
                return Err(out_refused(format!(
                    "the adopted repository {} is not on branch `main`, which specc builds on and checks out after its export; switch to `main` (or rename yours), then build",
                    out.display()
                )));
            }
        }
        // An adopted repository's first build finds no commit of specc's: the snapshot comes
        // first, and `out/` is read again once it is in.
        let (first_adopted, pending) = match out_dir::check_clean(&out) {
            Err(out_dir::OutDirError::ForeignCommits(_)) if cfg.adopted => {
                (true, out_dir::Pending::default())
            }
            read => (false, read.map_err(out_refused)?),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Refused::setup(format!("no async runtime: {e}")))?;
        let (runner, missing) = runner(&cfg, env, &rt);
        let weaker =
            (runner.confinement() == Confinement::Weaker && live(&cfg, env)).then_some(missing);
        if let Some(missing) = weaker.as_ref().filter(|_| !cfg.allow_weaker) {
            return Err(Refused {
                diagnostic: Box::new(
                    Diagnostic::new(
                        codes::WEAKER_SANDBOX,
                        format!("the full sandbox is not available here ({missing}), and this build would run live models' commands"),
                    )
                    .with_help("build from a recording (--provider replay), or set `[sandbox] allow_weaker = true` in specc.toml"),
                ),
                status: exit::USAGE,
            });
        }
        let lock = lock(&state)?;
        // A few descriptors for each attempt in flight (design: perf.width).
        specc_sandbox::raise_open_files();
        let ledger = open_state(&cfg, &state)?;
        // One writer for the ledger and the journal: one commit takes both.
        // Secrets are screened out of every request and every journaled row (design:
        // secrets.redaction); the allow list was checked when specc.toml was read.
        let secrets = crate::commands::secrets::redactor(&cfg.secrets_allow);
        let journal = Journal::on(ledger.state_db())
            .map_err(|e| Refused::setup(e.to_string()))?
            .screened(crate::commands::secrets::screen(&secrets));
        let mut pending = pending;
        let mut adopted_files = None;
        if first_adopted {
            std::fs::create_dir_all(state.join("vcs"))
                .map_err(|e| Refused::setup(format!("the VCS store in .specc/vcs: {e}")))?;
            let taken = adopt_import::snapshot(&out, &state.join("vcs").join("log"), &rt)
                .map_err(out_refused)?;
            adopted_files = Some(taken);
            pending = out_dir::check_clean(&out).map_err(out_refused)?;
        }
        let repo = std::fs::create_dir_all(state.join("vcs"))
            .and_then(|()| {
                specc_vcs::Repo::open(
                    &state.join("vcs").join("log"),
                    specc_vcs::Options::default(),
                )
            })
            .map_err(|e| Refused::setup(format!("the VCS store in .specc/vcs: {e}")))?;
        // A person's commits in `out/` become the base this build works on.
        let imported = match pending.base {
            Some(base) if !pending.commits.is_empty() => rt
                .block_on(import::import(
                    &out,
                    &repo,
                    base,
                    &pending.base_sha,
                    &pending.commits,
                ))
                .map_err(out_refused)?,
            _ => 0,
        };
        // A run that never finished died with its process: it is resumed, under its own id,
        // so its idempotency keys and journaled responses are found again.
        let unfinished = journal
            .unfinished_run()
            .map_err(|e| Refused::setup(e.to_string()))?;
        let (run, resumed) = match unfinished {
            Some(run) => {
                journal
                    .reopen_run(&run)
                    .map_err(|e| Refused::setup(e.to_string()))?;
                (run, true)
            }
            None => {
                let run = format!(
                    "build-{}",
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis())
                );
                journal
                    .start_run(&run, &args.spec.display().to_string())
                    .map_err(|e| Refused::setup(e.to_string()))?;
                (run, false)
            }
        };
        let client = client(&cfg, args, env)
            .with_ledger(ledger.clone(), &run)
            .with_redactor(Arc::new(crate::commands::secrets::Secrets(secrets.clone())));
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

/// `out/` may not be written: nothing was overwritten (E0403).
fn out_refused(e: impl std::fmt::Display) -> Refused {
    Refused {
        diagnostic: Box::new(
            Diagnostic::new(codes::OUT_DIR_CHANGED, e.to_string())
                .with_help("see `specc explain E0403`; nothing was overwritten"),
        ),
        status: exit::ERRORS,
    }
}

/// The build's state database: `.specc/state.db`, or with a state URL (`[state] url`,
/// `SPECC_STATE_URL`) the PostgreSQL database it names, whose ledger, journal, eval series
/// and leases then live there (design: state.backends). A PostgreSQL database holds one
/// build at a time, as `.specc/` does: its advisory lock is held by the state connection,
/// and so ends with the process, however the process ends.
fn open_state(cfg: &BuildConfig, state: &Path) -> Result<Arc<Ledger>, Refused> {
    let Some(url) = &cfg.state_url else {
        return Ledger::open(&state.join("state.db"))
            .map(Arc::new)
            .map_err(|e| Refused::setup(format!("the state database: {e}")));
    };
    let password = config::pg_password();
    let db = StateDb::connect_postgres(url, password.as_deref())
        .map_err(|e| Refused::setup(format!("the state database (PostgreSQL): {e}")))?;
    let held = db
        .try_advisory_lock(BUILD_LOCK)
        .map_err(|e| Refused::setup(format!("the state database (PostgreSQL): {e}")))?;
    if !held {
        return Err(Refused::setup(
            "another specc build or serve is using this PostgreSQL state database; wait for it to end".to_owned(),
        ));
    }
    Ledger::writing_to(Arc::new(db))
        .map(Arc::new)
        .map_err(|e| Refused::setup(format!("the state database (PostgreSQL): {e}")))
}

/// The advisory lock a build holds on a PostgreSQL state database ("SPECCBLD").
const BUILD_LOCK: i64 = 0x5350_4543_4342_4c44;

/// Takes `.specc/lock`, or says that another build holds it. The lock is the operating
/// system's: it ends with the process, however the process ends.
pub(in crate::commands) fn lock(state: &Path) -> Result<std::fs::File, Refused> {
    let path = state.join("lock");
    let file = std::fs::create_dir_all(state)
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
        })
        .map_err(|e| Refused::setup(format!("{}: {e}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(Refused::setup(format!(
            "another specc build is running on {} (it holds {}); wait for it to end",
            state.display(),
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(Refused::setup(format!("{}: {e}", path.display())))
        }
    }
}

/// The sandbox over the helper binary, or the interim runner without one; and what the
/// host does not enforce, in words.
pub(in crate::commands) fn runner(
    cfg: &BuildConfig,
    env: &Env,
    rt: &tokio::runtime::Runtime,
) -> (Arc<dyn Runner>, String) {
    let process = ProcessRunner {
        secret_vars: cfg.key_vars.clone(),
    };
    let Some(helper) = env.sandbox_helper.clone() else {
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
pub(in crate::commands) fn live(cfg: &BuildConfig, env: &Env) -> bool {
    env.models.is_none()
        && cfg.llm.roles.values().any(|r| {
            cfg.llm
                .providers
                .get(&r.provider)
                .is_some_and(|p| p.kind != ProviderKind::Replay)
        })
}

/// The configured providers, or `Env::models` for every one of them; recorded with `--record`.
pub(in crate::commands) fn client(cfg: &BuildConfig, args: &BuildArgs, env: &Env) -> Client {
    let key_env = |var: &str| std::env::var(var).ok();
    let mut client = Client::from_config(cfg.llm.clone(), &key_env, args.record.as_deref());
    if let Some(models) = &env.models {
        let provider = match &args.record {
            Some(path) => Arc::new(client.recorder(models.0.clone(), path)) as Arc<dyn Provider>,
            None => models.0.clone(),
        };
        for name in cfg.llm.providers.keys() {
            client = client.with_provider(name, provider.clone(), 8);
        }
    }
    client
}
