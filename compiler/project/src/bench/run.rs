//! One run of a bench: a case built with a configuration in a scratch folder of its own, by
//! the specc binary as a process (so a time limit can stop it), then measured from its own
//! state database: the hidden score over time, the ledger by role, tasks and attempts.
//! Its `result.json`, written last and atomically, says it is finished: a bench started
//! again skips it.
//! design: project.bench

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::suite::{Case, Configuration};

/// What one run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub case: String,
    pub configuration: String,
    /// `specc build`'s exit status (`None`: stopped by the time limit).
    pub exit: Option<i32>,
    pub wall_seconds: f64,
    /// Why it stopped early, if it did: the time limit, the budget, a failure to start.
    pub stopped: Option<String>,
    /// Hidden tests passed and total at the end (`None`: never scored).
    pub passed: Option<u64>,
    pub total: Option<u64>,
    /// The score over time: seconds since the build started, and passed/total (0 for an
    /// evaluation that could not run).
    pub curve: Vec<(f64, f64)>,
    pub dollars_by_role: BTreeMap<String, f64>,
    pub tokens_by_role: BTreeMap<String, u64>,
    pub calls: u64,
    pub attempts: u64,
    pub landed: u64,
    pub failed: u64,
    /// A digest of what the run was made from (the merged specc.toml and the spec): a
    /// result made from other inputs is not reused.
    #[serde(default)]
    pub inputs: String,
}

impl RunResult {
    pub fn dollars(&self) -> f64 {
        self.dollars_by_role.values().sum()
    }

    pub fn score(&self) -> Option<f64> {
        match (self.passed, self.total) {
            (Some(p), Some(t)) if t > 0 => Some(p as f64 / t as f64),
            _ => None,
        }
    }

    pub fn fully_passing(&self) -> bool {
        matches!((self.passed, self.total), (Some(p), Some(t)) if t > 0 && p == t)
    }
}

/// Where the run of `case` with `config` lives under `out`.
pub fn dir_of(out: &Path, case: &Case, config: &Configuration) -> PathBuf {
    out.join(&case.name).join(&config.name)
}

/// The finished run's result, if it finished from `inputs`. A result.json that no longer
/// reads is an error, not a run to pay for again.
pub fn finished(dir: &Path, inputs: &str) -> std::io::Result<Option<RunResult>> {
    let text = match std::fs::read_to_string(dir.join("result.json")) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let r: RunResult = serde_json::from_str(&text).map_err(|e| {
        std::io::Error::other(format!(
            "{}: {e} (remove it to run again)",
            dir.join("result.json").display()
        ))
    })?;
    Ok((r.inputs == inputs).then_some(r))
}

/// What a run is made from: the case's specc.toml with the configuration applied, and the
/// digest of that and the spec.
pub fn inputs(
    case: &Case,
    config: &Configuration,
    budget: Option<f64>,
) -> std::io::Result<(String, String)> {
    let toml = std::fs::read_to_string(case.dir.join("specc.toml"))?;
    let merged = config.apply(&toml, budget).map_err(std::io::Error::other)?;
    let spec = std::fs::read(case.dir.join(&case.spec))?;
    let mut h = blake3::Hasher::new();
    h.update(merged.as_bytes());
    h.update(&[0]);
    h.update(&spec);
    Ok((merged, h.finalize().to_hex()[..16].to_owned()))
}

/// Runs `case` with `config` in `dir` (made anew) with the specc binary `specc`, and writes
/// its result, unless the build did not start (then it runs again next time).
/// `(merged, digest)` are the run's [`inputs`].
pub(super) fn run(
    specc: &Path,
    dir: &Path,
    (case, config): (&Case, &Configuration),
    (merged, digest): (String, String),
    limit: Duration,
) -> std::io::Result<RunResult> {
    if dir.exists() {
        stop_orphan(dir);
        std::fs::remove_dir_all(dir)?; // an unfinished run starts again from nothing
    }
    copy(&case.dir, dir)?;
    std::fs::write(dir.join("specc.toml"), merged)?;
    let started = Instant::now();
    let log = std::fs::File::create(dir.join("build.log"))?;
    let mut cmd = Command::new(specc);
    cmd.args(["build", &case.spec])
        .current_dir(dir)
        // Its own state, never a database the environment names.
        .env_remove("SPECC_STATE_URL")
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    let mut child = cmd.spawn()?;
    let waited = wait(&mut child, dir, started, limit);
    let (exit, timed_out) = match waited {
        Ok(w) => w,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    let wall = started.elapsed().as_secs_f64();
    let mut result = measure(dir, case, config, exit.and_then(|s| s.code()), wall);
    result.inputs = digest;
    if timed_out {
        result.stopped = Some(format!("the time limit ({} s)", limit.as_secs()));
    } else if let Some(sig) = exit.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)) {
        result.stopped = Some(format!("killed by signal {sig}"));
    } else if result.stopped.is_none() && exit.and_then(|s| s.code()).is_some_and(|c| c != 0) {
        result.stopped = Some(format!(
            "the build exited with {} (see build.log)",
            exit.and_then(|s| s.code()).unwrap_or_default()
        ));
    }
    if !dir.join(".specc").join("state.db").is_file() {
        // Not a result: a key, a provider or a name to fix. It runs again next time.
        return Ok(result);
    }
    let text = serde_json::to_vec_pretty(&result).map_err(std::io::Error::other)?;
    crate::atomic::write(dir, &dir.join("result.json"), &text)?;
    Ok(result)
}

/// Waits for the build up to `limit`; past it, SIGTERM (a build stops cleanly), a second
/// SIGTERM after 30 s (it exits at once), SIGKILL after 30 s more. The exit status, and
/// whether the limit stopped it.
fn wait(
    child: &mut std::process::Child,
    dir: &Path,
    started: Instant,
    limit: Duration,
) -> std::io::Result<(Option<std::process::ExitStatus>, bool)> {
    // Named, so that a bench killed meanwhile and started again stops this build before it
    // starts the run anew (`stop_orphan`).
    std::fs::write(dir.join("build.pid"), child.id().to_string())?;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok((Some(status), false));
        }
        if started.elapsed() >= limit {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    use nix::sys::signal::{Signal, kill};
    for (signal, grace) in [
        (Signal::SIGTERM, 30),
        (Signal::SIGTERM, 30),
        (Signal::SIGKILL, 0),
    ] {
        let _ = kill(pid, signal);
        let since = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                return Ok((Some(status), true));
            }
            if since.elapsed() >= Duration::from_secs(grace) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok((child.wait().ok(), true))
}

/// What the run's state database says.
fn measure(
    dir: &Path,
    case: &Case,
    config: &Configuration,
    exit: Option<i32>,
    wall_seconds: f64,
) -> RunResult {
    let db = dir.join(".specc").join("state.db");
    let mut r = RunResult {
        inputs: String::new(),
        case: case.name.clone(),
        configuration: config.name.clone(),
        exit,
        wall_seconds,
        stopped: None,
        passed: None,
        total: None,
        curve: Vec::new(),
        dollars_by_role: BTreeMap::new(),
        tokens_by_role: BTreeMap::new(),
        calls: 0,
        attempts: 0,
        landed: 0,
        failed: 0,
    };
    if !db.is_file() {
        r.stopped = Some("the build did not start (see build.log)".to_owned());
        return r;
    }
    let status = specc_state::read_status(&db).ok().flatten();
    if let Some(s) = &status {
        let count = |state: &str| {
            s.counts
                .iter()
                .filter(|(k, _)| k == state)
                .map(|(_, n)| *n)
                .sum::<u64>()
        };
        r.landed = count("landed") + count("up_to_date");
        r.failed = count("failed");
        if s.run.status == "stopped" {
            r.stopped = Some("the build stopped early (its budget, or a signal)".to_owned());
        }
        let run = s.run.run.clone();
        if let Ok(ledger) = specc_llm::Ledger::open_existing(&db) {
            let mut dollars: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for row in ledger
                .rows()
                .unwrap_or_default()
                .iter()
                .filter(|c| c.run == run)
            {
                dollars
                    .entry(row.role.clone())
                    .or_default()
                    .push(row.dollars);
                *r.tokens_by_role.entry(row.role.clone()).or_default() +=
                    row.usage.input + row.usage.cached_input + row.usage.output;
                r.calls += 1;
            }
            r.dollars_by_role = dollars
                .into_iter()
                .map(|(role, d)| (role, ordered_sum(d)))
                .collect();
        }
        if let Ok(mut c) = specc_state::sqlite::open_read_only(&db) {
            r.attempts = specc_state::timeline(&mut c, &run).map_or(0, |t| t.attempts.len() as u64);
        }
        let series = specc_runtime::eval::series::read(&db).unwrap_or_default();
        if let Some((_, points)) = series.into_iter().find(|(id, _)| *id == run) {
            r.curve = points
                .iter()
                .map(|p| (p.t_ms as f64 / 1000.0, p.score.unwrap_or(0.0)))
                .collect();
            if let Some(last) = points.last() {
                r.passed = last.passed;
                r.total = last.total;
            }
        }
    }
    r
}

/// Stops the build a killed bench left running in `dir`, if it still runs there (its pid
/// file names it, and the process's working directory is `dir`): SIGTERM, then up to 30 s
/// for it to stop cleanly.
fn stop_orphan(dir: &Path) {
    let Some(pid) = std::fs::read_to_string(dir.join("build.pid"))
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
    else {
        return;
    };
    let here = |pid: i32| {
        let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok();
        cwd.is_some() && cwd == dir.canonicalize().ok()
    };
    if !here(pid) {
        return;
    }
    let p = nix::unistd::Pid::from_raw(pid);
    let _ = nix::sys::signal::kill(p, nix::sys::signal::Signal::SIGTERM);
    let since = Instant::now();
    while here(pid) && since.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if here(pid) {
        let _ = nix::sys::signal::kill(p, nix::sys::signal::Signal::SIGKILL);
    }
}

/// Copies the case's folder, leaving out what a build made at its top (`.specc/`, `out/`).
fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_in(from, to, true)
}

fn copy_in(from: &Path, to: &Path, top: bool) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let name = e.file_name();
        if top && (name == ".specc" || name == "out" || name == ".specc-bench") {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let kind = e.file_type()?;
        if kind.is_dir() {
            copy_in(&src, &dst, false)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        }
    }
    Ok(())
}

/// The sum of `values` in ascending order: the same figure whatever order the ledger's rows
/// came in (calls of two jobs land in either order, and floating-point addition is not
/// associative: a resumed bench's table must equal an uninterrupted one's).
fn ordered_sum(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.into_iter().sum()
}

#[cfg(test)]
mod tests {
    use super::ordered_sum;

    #[test]
    fn a_sum_of_dollars_does_not_depend_on_the_rows_order() {
        let rows = vec![
            0.000_315,
            0.002_1,
            0.000_018_75,
            0.011_2,
            0.000_91,
            0.007_77,
        ];
        let mut reversed = rows.clone();
        reversed.reverse();
        let naive = |v: &[f64]| v.iter().fold(0.0, |a, b| a + b);
        // The rows' own order gives different last bits; the sorted sum does not.
        assert_ne!(naive(&rows).to_bits(), naive(&reversed).to_bits());
        assert_eq!(ordered_sum(rows).to_bits(), ordered_sum(reversed).to_bits());
    }
}
