//! `specc eval [SPEC] [--commit C] [--format text|json]`: scores the build's head (or a
//! commit of it) against `[eval]`'s hidden tests, in the sandbox, and prints passed, failed,
//! total and every test's result. It takes the state directory's lock, so it never runs
//! beside a build (which evaluates at its own interval). Exit 0 when tests ran and every one
//! passed, 1 when one failed, none ran or the score is unknown, 2 when it could not run
//! (E0501).
//! design: eval.run

use std::io::Write;

use specc_ir::{Diagnostic, codes};
use specc_passes::eval::Outcome;
use specc_runtime::eval::{EvalError, Evaluation, Evaluator};
use specc_sandbox::Confinement;
use specc_vcs::object::ObjectId;

use super::build::evals;
use crate::cli::{EvalArgs, Format, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};
use specc_project::{config, session};

pub(crate) fn run(args: &EvalArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    match evaluate(args, env, &mut reporter, err) {
        Ok(e) => {
            let _ = match args.format {
                Format::Json => writeln!(out, "{}", json(&e)),
                Format::Text => write_text(&e, out),
            };
            match &e.score {
                Some(s) if s.failed == 0 && s.total() > 0 => exit::OK,
                _ => exit::ERRORS,
            }
        }
        Err(Failure { message, help }) => {
            let d = Diagnostic::new(codes::EVAL_SETUP, message).with_help(help);
            reporter.report(&Files::default(), &d, err);
            exit::USAGE
        }
    }
}

/// Why the command could not score, and what to do about it.
struct Failure {
    message: String,
    help: &'static str,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            help: "see `specc explain E0501`",
        }
    }
}

impl From<specc_project::config::ConfigError> for Failure {
    fn from(e: specc_project::config::ConfigError) -> Failure {
        Failure::from(e.to_string())
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Failure {
        Failure::from(message.to_owned())
    }
}

impl From<EvalError> for Failure {
    fn from(e: EvalError) -> Failure {
        let help = match &e {
            EvalError::NoCommit(_) => {
                "the commit is not on this build's branch: `specc status` lists the last commits"
            }
            EvalError::Io { .. } => {
                "the evaluator works in .specc/eval/: check that the disk has room and the directory is writable"
            }
            EvalError::State(_) => {
                "the state database (.specc/state.db) could not be used: check its disk, or that no other program holds it"
            }
            EvalError::Task(_) => "this is a bug in specc: please report it with this output",
        };
        Failure {
            message: e.to_string(),
            help,
        }
    }
}

fn evaluate(
    args: &EvalArgs,
    env: &Env,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) -> Result<Evaluation, Failure> {
    let dir = specc_project::spec_dir(args.spec.as_deref());
    let state = dir.join(".specc");
    let cfg = config::load_file(args.config.as_deref(), &dir)?;
    let Some(eval) = cfg.eval.clone() else {
        return Err(Failure {
            message: "specc.toml has no [eval] table: nothing says which tests to run".to_owned(),
            help: "add an [eval] table with the command and the hidden tests' directory; see `specc explain E0501`",
        });
    };
    let log = state.join("vcs").join("log");
    if !log.exists() {
        return Err(Failure {
            message: format!("nothing has been built at {} yet", dir.display()),
            help: "run `specc build` first: the eval scores what a build committed",
        });
    }
    let _lock = session::lock(&state).map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("no async runtime: {e}"))?;
    let (runner, missing) = session::runner(&cfg, env.sandbox_helper.as_deref(), &rt);
    if runner.confinement() == Confinement::Weaker {
        let d = Diagnostic::new(
            codes::WEAKER_SANDBOX_ALLOWED,
            format!(
                "the eval command runs the built code with partial confinement only ({missing})"
            ),
        );
        reporter.report(&Files::default(), &d, err);
    }
    let repo = specc_vcs::Repo::open(&log, specc_vcs::Options::default())
        .map_err(|e| format!("the VCS store in {}: {e}", state.join("vcs").display()))?;
    rt.block_on(async {
        let stats = repo.stats().await;
        let head = stats.head.ok_or("the VCS store has no commit yet")?;
        let commit = match &args.commit {
            None => head,
            Some(c) => resolve(&repo, head, c).await?,
        };
        let ev = Evaluator {
            config: eval,
            repo: repo.clone(),
            runner,
            dir: state.join("eval").join("cli"),
            output_cap: specc_project::execute::EVAL_OUTPUT_CAP,
        };
        Ok(ev.evaluate(commit, &stats.conflicts).await?)
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
        at = repo.commit(id).await.and_then(|c| c.parent);
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
enum NoCommit {
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

impl From<NoCommit> for Failure {
    fn from(e: NoCommit) -> Failure {
        Failure::from(e.to_string())
    }
}

fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "ok",
        Outcome::Failed => "FAILED",
        Outcome::Skipped => "skipped",
    }
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Skipped => "skipped",
    }
}

fn write_text(e: &Evaluation, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "commit {}: {}",
        &e.commit.hex()[..12],
        evals::score_words(e)
    )?;
    if let Some(s) = &e.score {
        if s.skipped > 0 {
            writeln!(out, "{} skipped", s.skipped)?;
        }
        for t in &s.tests {
            writeln!(out, "  {:<7} {}", outcome_word(t.outcome), t.name)?;
        }
    }
    let m = &e.metrics;
    writeln!(
        out,
        "tree: {} files, {} lines, {} packages · took {:.1}s · output in {}",
        m.files,
        m.lines,
        m.packages,
        e.elapsed.as_secs_f64(),
        e.log.display()
    )
}

fn json(e: &Evaluation) -> serde_json::Value {
    let (passed, failed, skipped, tests) = match &e.score {
        Some(s) => (
            Some(s.passed),
            Some(s.failed),
            Some(s.skipped),
            s.tests
                .iter()
                .map(|t| serde_json::json!({"name": t.name, "outcome": outcome_name(t.outcome)}))
                .collect(),
        ),
        None => (None, None, None, Vec::new()),
    };
    serde_json::json!({
        "commit": e.commit.hex(),
        "score": e.ratio(),
        "passed": passed,
        "failed": failed,
        "skipped": skipped,
        "total": e.score.as_ref().map(|s| s.total()),
        "tests": tests,
        "exit": e.exit,
        "log": e.log,
        "lines": e.metrics.lines,
        "files": e.metrics.files,
        "packages": e.metrics.packages,
        "seconds": e.elapsed.as_secs_f64(),
    })
}
