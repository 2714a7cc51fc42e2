//! One evaluation: the commit checked out into the evaluator's own directory, the hidden
//! tests copied in, the command run through the build's runner, and its output scored.
//! design: eval.run

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use specc_passes::eval::{self as scoring, Score};
use specc_vcs::Repo;
use specc_vcs::object::ObjectId;

use specc_sandbox::{CommandResult, CommandSpec, Exit, LOG_CAP, Runner};

use super::config::EvalConfig;
use super::error::{EvalError, io};
use super::metrics::Metrics;
use crate::checkouts::KEPT;

/// What one evaluation found.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub commit: ObjectId,
    /// `None`: the output could not be read whole (garbage, cut, no summary): unknown,
    /// never zero.
    pub score: Option<Score>,
    pub exit: Exit,
    /// The command's full output.
    pub log: PathBuf,
    pub metrics: Metrics,
    pub elapsed: Duration,
}

impl Evaluation {
    /// Passed over total, 0 to 1, when the score is known and there was a test.
    pub fn ratio(&self) -> Option<f64> {
        self.score.as_ref().and_then(Score::ratio)
    }
}

/// Runs `[eval]` on commits, one at a time, in its own directory.
pub struct Evaluator {
    pub config: EvalConfig,
    pub repo: Repo,
    pub runner: Arc<dyn Runner>,
    /// The evaluator's directory: its checkout and logs live here.
    pub dir: PathBuf,
    /// Bytes of each stream kept in memory (the log on disk keeps more).
    pub output_cap: usize,
}

impl Evaluator {
    /// Scores `commit`. `conflicts` (per path, hottest first) picks the hottest file.
    pub async fn evaluate(
        &self,
        commit: ObjectId,
        conflicts: &[(String, u64)],
    ) -> Result<Evaluation, EvalError> {
        let started = Instant::now();
        let files = self
            .repo
            .files(commit)
            .await
            .map_err(|_| EvalError::NoCommit(commit))?;
        // The commit's files are read once: measured, then written out.
        let conflicts = conflicts.to_vec();
        let (metrics, files) =
            tokio::task::spawn_blocking(move || (Metrics::of(&files, &conflicts), files)).await?;
        let checkout = self.dir.join("checkout");
        self.repo
            .checkout_files(files, &checkout, KEPT)
            .await
            .map_err(io(format!("checking out {}", commit.hex())))?;
        let log = self.dir.join("logs").join("eval.log");
        let prepare = {
            let (from, checkout, log) = (self.config.tests.clone(), checkout.clone(), log.clone());
            let (into, output) = (self.config.into.clone(), self.config.output.clone());
            move || prepare(&from, &checkout, &into, output.as_deref(), &log)
        };
        tokio::task::spawn_blocking(prepare).await??;
        let result = self
            .runner
            .run(CommandSpec {
                script: self.config.command.clone(),
                dir: checkout.clone(),
                read_only: Vec::new(),
                timeout: self.config.timeout,
                output_cap: self.output_cap,
                env: Vec::new(),
                log: log.clone(),
                home: None,
            })
            .await;
        let (format, output) = (self.config.format, self.config.output.clone());
        let read = tokio::task::spawn_blocking(move || {
            // A command that never started wrote nothing: there is nothing to score.
            if matches!(result.exit, Exit::NotStarted(_)) {
                return (None, result);
            }
            let text = match &output {
                Some(file) => std::fs::read(checkout.join(file))
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .ok(),
                None => Some(stdout_of(&result)),
            };
            (text.and_then(|t| scoring::score(format, &t)), result)
        });
        let (score, result) = read.await?;
        Ok(Evaluation {
            commit,
            score,
            exit: result.exit,
            log,
            metrics,
            elapsed: started.elapsed(),
        })
    }
}

/// Readies the checkout for a run: the hidden tests copied in (what is in their way removed:
/// the checkout is the evaluator's), and nothing left from before that could be read as this
/// run's result — the log, the private home (a command may leave configuration there for
/// the next one), and the `output` file (a commit may hold one of its own).
pub(super) fn prepare(
    tests: &Path,
    checkout: &Path,
    into: &Path,
    output: Option<&Path>,
    log: &Path,
) -> Result<(), EvalError> {
    let gone = |p: &Path| match std::fs::symlink_metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(p),
        Ok(_) => std::fs::remove_file(p),
    };
    let fail = |what: &Path| io(format!("removing {}", what.display()));
    for stale in [log.to_path_buf(), log.with_extension("home")] {
        gone(&stale).map_err(fail(&stale))?;
    }
    if let Some(output) = output {
        let stale = checkout.join(output);
        gone(&stale).map_err(fail(&stale))?;
    }
    let to = checkout.join(into);
    copy_tree(tests, &to).map_err(io(format!(
        "copying the eval tests {} into {}",
        tests.display(),
        to.display()
    )))?;
    Ok(())
}

/// The command's whole standard output: from its log on disk (the runner keeps up to 16 MiB
/// per stream there), or the captured head and tail if the log is gone. Offsets are taken on
/// the log's bytes; only the stdout part is decoded.
pub(super) fn stdout_of(result: &CommandResult) -> String {
    const OPEN: &[u8] = b"--- stdout ---\n";
    const CLOSE: &[u8] = b"\n--- stderr ---\n";
    let Ok(bytes) = std::fs::read(&result.log) else {
        return result.stdout.text();
    };
    let Some(body) = bytes.strip_prefix(OPEN) else {
        return result.stdout.text();
    };
    // The runner writes stdout, the marker, then stderr: the stdout part ends at the marker
    // that leaves exactly the stderr the runner captured after it.
    let stderr_len = (result.stderr.total as usize).min(LOG_CAP);
    let end = match body.len().checked_sub(stderr_len + CLOSE.len()) {
        Some(end) if body[end..].starts_with(CLOSE) => end,
        _ => body
            .windows(CLOSE.len())
            .position(|w| w == CLOSE)
            .unwrap_or(body.len()),
    };
    String::from_utf8_lossy(&body[..end]).into_owned()
}

/// Copies the regular files and directories under `from` into `to` (made if missing);
/// links and special files are left out, so the tests directory cannot smuggle a path
/// outside the checkout in. Whatever is in the way in `to` (a file where a directory goes, a
/// link or a directory where a file goes) is removed first: nothing is written through a link.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<usize> {
    if std::fs::symlink_metadata(to).is_ok_and(|m| !m.is_dir()) {
        std::fs::remove_file(to)?;
    }
    std::fs::create_dir_all(to)?;
    let mut copied = 0;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        let there = std::fs::symlink_metadata(&target).ok();
        if kind.is_dir() {
            if there.as_ref().is_some_and(|m| !m.is_dir()) {
                std::fs::remove_file(&target)?; // a file or a link where a directory goes
            }
            copied += copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            match there {
                Some(m) if m.is_dir() => std::fs::remove_dir_all(&target)?,
                Some(_) => std::fs::remove_file(&target)?, // never written through a link
                None => {}
            }
            std::fs::copy(entry.path(), &target)?;
            copied += 1;
        }
    }
    Ok(copied)
}
