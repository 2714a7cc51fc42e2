//! Scoring a commit of the build against `[eval]`'s hidden tests, outside a build (`specc
//! eval`): the state directory's lock (an eval never runs beside a build), the sandbox, the
//! store, the commit named by a prefix of its id, and the evaluator in `.specc/eval/cli/`.
//! Each failure is one [`EvalSetupError`]; the driver says what to do about it.
//! design: eval.run, project.library

use std::path::{Path, PathBuf};

use specc_runtime::eval::{EvalError, Evaluation, Evaluator};
use specc_sandbox::Confinement;
use specc_vcs::object::ObjectId;

use crate::config::{self, ConfigError};
use crate::{BuildError, session};

/// What to score: the spec's directory, its configuration, the commit (`None`: the head).
pub struct Scoring<'a> {
    pub dir: &'a Path,
    pub config: Option<&'a Path>,
    pub commit: Option<&'a str>,
    /// The specc binary whose `__sandbox` confines the eval command; `None`: the interim
    /// runner.
    pub sandbox_helper: Option<&'a Path>,
}

/// Why a commit could not be scored.
#[derive(Debug)]
pub enum EvalSetupError {
    Config(ConfigError),
    /// specc.toml has no `[eval]` table.
    NoEval,
    /// No build has made a store in the directory yet.
    NothingBuilt(PathBuf),
    /// The state directory's lock (a build holds it), or no lock could be made.
    Lock(BuildError),
    Runtime(std::io::Error),
    Store {
        dir: PathBuf,
        error: std::io::Error,
    },
    /// The store has no commit yet.
    Empty,
    NoCommit(NoCommit),
    Eval(EvalError),
}

impl std::fmt::Display for EvalSetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalSetupError::Config(e) => e.fmt(f),
            EvalSetupError::NoEval => write!(
                f,
                "specc.toml has no [eval] table: nothing says which tests to run"
            ),
            EvalSetupError::NothingBuilt(dir) => {
                write!(f, "nothing has been built at {} yet", dir.display())
            }
            EvalSetupError::Lock(e) => e.fmt(f),
            EvalSetupError::Runtime(e) => write!(f, "no async runtime: {e}"),
            EvalSetupError::Store { dir, error } => {
                write!(f, "the VCS store in {}: {error}", dir.display())
            }
            EvalSetupError::Empty => write!(f, "the VCS store has no commit yet"),
            EvalSetupError::NoCommit(e) => e.fmt(f),
            EvalSetupError::Eval(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EvalSetupError {}

/// Scores the commit; `weaker` hears, before the tests run, what the sandbox leaves
/// unconfined when it is not the full one.
pub fn evaluate(
    scoring: &Scoring<'_>,
    weaker: impl FnOnce(&str),
) -> Result<Evaluation, EvalSetupError> {
    let state = scoring.dir.join(".specc");
    let cfg = config::load_file(scoring.config, scoring.dir).map_err(EvalSetupError::Config)?;
    let eval = cfg.eval.clone().ok_or(EvalSetupError::NoEval)?;
    let log = state.join("vcs").join("log");
    if !log.exists() {
        return Err(EvalSetupError::NothingBuilt(scoring.dir.to_path_buf()));
    }
    let _lock = session::lock(&state).map_err(EvalSetupError::Lock)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(EvalSetupError::Runtime)?;
    let (runner, missing) = session::runner(&cfg, scoring.sandbox_helper, &rt);
    if runner.confinement() == Confinement::Weaker {
        weaker(&missing);
    }
    let repo = specc_vcs::Repo::open(&log, specc_vcs::Options::default()).map_err(|error| {
        EvalSetupError::Store {
            dir: state.join("vcs"),
            error,
        }
    })?;
    rt.block_on(async {
        let stats = repo.stats().await;
        let head = stats.head.ok_or(EvalSetupError::Empty)?;
        let commit = match scoring.commit {
            None => head,
            Some(c) => resolve(&repo, head, c)
                .await
                .map_err(EvalSetupError::NoCommit)?,
        };
        let ev = Evaluator {
            config: eval,
            repo: repo.clone(),
            runner,
            dir: state.join("eval").join("cli"),
            output_cap: crate::execute::EVAL_OUTPUT_CAP,
        };
        ev.evaluate(commit, &stats.conflicts)
            .await
            .map_err(EvalSetupError::Eval)
    })
}

/// The commit of the branch whose id is `given` or starts with it (one only).
async fn resolve(
    repo: &specc_vcs::Repo,
    head: ObjectId,
    given: &str,
) -> Result<ObjectId, NoCommit> {
    let given = given.trim().to_ascii_lowercase();
    if given.len() < 4 || !given.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(NoCommit::NotAnId(given));
    }
    let mut found = Vec::new();
    let mut at = Some(head);
    while let Some(id) = at {
        if id.hex().starts_with(&given) {
            found.push(id);
        }
        at = repo.commit(id).await.ok().and_then(|c| c.parent);
    }
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(NoCommit::None(given)),
        many => Err(NoCommit::Several {
            given,
            count: many.len(),
        }),
    }
}

/// Why `--commit` names no one commit of the build.
#[derive(Debug)]
pub enum NoCommit {
    NotAnId(String),
    None(String),
    Several { given: String, count: usize },
}

impl std::fmt::Display for NoCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCommit::NotAnId(g) => {
                write!(
                    f,
                    "`{g}` is not a commit id (at least 4 hexadecimal digits)"
                )
            }
            NoCommit::None(g) => write!(f, "no commit of the build starts with `{g}`"),
            NoCommit::Several { given, count } => {
                write!(f, "`{given}` names {count} commits: give more digits")
            }
        }
    }
}
