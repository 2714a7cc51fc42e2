//! `specc bench`: a suite of cases built by a matrix of model configurations, each run in a
//! scratch folder of its own with the real build, eval and ledger, and the figures the seed's
//! table has per run and per configuration. A bench killed part way resumes: a run with a
//! `result.json` is not run again.
//! design: project.bench

mod run;
mod suite;

use std::path::Path;

use serde::Serialize;

pub use run::{RunResult, dir_of, finished, inputs};
pub use suite::{Case, Configuration, Price, Suite, SuiteError};

/// A configuration's totals over its runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Totals {
    pub configuration: String,
    pub about: String,
    pub runs: usize,
    pub fully_passing: usize,
    /// Fully passing cases over cases, 0 to 1.
    pub share_fully_passing: f64,
    /// Mean final score over the runs, an unscored one counting 0.
    pub mean_score: Option<f64>,
    pub dollars: f64,
    pub dollars_by_role: std::collections::BTreeMap<String, f64>,
    pub tokens: u64,
    pub calls: u64,
    pub wall_seconds: f64,
}

/// Every run of the suite, each case with each configuration, `suite.jobs` at once, with
/// the specc binary `specc`, under `out`. Finished runs are read, not run again; `done` is
/// told of each run as it ends (or is found finished).
pub fn bench(
    suite: &Suite,
    out: &Path,
    specc: &Path,
    done: &dyn Fn(&RunResult, bool),
) -> std::io::Result<Vec<RunResult>> {
    std::fs::create_dir_all(out)?;
    // One bench per folder of runs: a second would stop the first one's builds and write
    // its runs over them.
    let lock = std::fs::File::create(out.join(".lock"))?;
    lock.try_lock().map_err(|_| {
        std::io::Error::other(format!(
            "another specc bench is running with {}",
            out.display()
        ))
    })?;
    let out_at = out.canonicalize()?;
    for c in &suite.cases {
        if c.dir.canonicalize().is_ok_and(|d| out_at.starts_with(&d)) {
            return Err(std::io::Error::other(format!(
                "case `{}`'s folder holds the runs' folder {}: give --out outside it",
                c.name,
                out.display()
            )));
        }
    }
    let pairs: Vec<(&Case, &Configuration)> = suite
        .cases
        .iter()
        .flat_map(|c| suite.configurations.iter().map(move |k| (c, k)))
        .collect();
    let mut results: Vec<Option<RunResult>> = vec![None; pairs.len()];
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut failed = None;
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..suite.jobs.min(pairs.len()) {
            let (tx, pairs, next) = (tx.clone(), &pairs, &next);
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((case, config)) = pairs.get(i) else {
                        return;
                    };
                    let dir = dir_of(out, case, config);
                    let got = run::inputs(case, config, suite.budget)
                        .and_then(|made| match finished(&dir, &made.1)? {
                            Some(r) => Ok((r, true)),
                            None => run::run(specc, &dir, (case, config), made, suite.time_limit)
                                .map(|r| (r, false)),
                        })
                        .map_err(|e| {
                            std::io::Error::other(format!("{} × {}: {e}", case.name, config.name))
                        });
                    // After a failure no new run starts: the bench ends with what it has.
                    if got.is_err() {
                        next.store(usize::MAX / 2, std::sync::atomic::Ordering::Relaxed);
                    }
                    let stop = got.is_err();
                    if tx.send((i, got)).is_err() || stop {
                        return;
                    }
                }
            });
        }
        drop(tx);
        // Told here, on the caller's thread, as each run ends.
        for (i, got) in rx {
            match got {
                Ok((r, skipped)) => {
                    done(&r, skipped);
                    results[i] = Some(r);
                }
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    Ok(results.into_iter().flatten().collect())
}

/// Each configuration's totals, in the suite's order.
pub fn totals(suite: &Suite, runs: &[RunResult]) -> Vec<Totals> {
    suite
        .configurations
        .iter()
        .map(|k| {
            let mine: Vec<&RunResult> = runs.iter().filter(|r| r.configuration == k.name).collect();
            // An unscored run counts 0, as in the page's charts.
            let scored: Vec<f64> = mine.iter().map(|r| r.score().unwrap_or(0.0)).collect();
            let mut by_role = std::collections::BTreeMap::new();
            for r in &mine {
                for (role, d) in &r.dollars_by_role {
                    *by_role.entry(role.clone()).or_insert(0.0) += d;
                }
            }
            let fully = mine.iter().filter(|r| r.fully_passing()).count();
            Totals {
                configuration: k.name.clone(),
                about: k.about.clone(),
                runs: mine.len(),
                fully_passing: fully,
                share_fully_passing: if mine.is_empty() {
                    0.0
                } else {
                    fully as f64 / mine.len() as f64
                },
                mean_score: (!scored.is_empty())
                    .then(|| scored.iter().sum::<f64>() / scored.len() as f64),
                dollars: mine.iter().map(|r| r.dollars()).sum(),
                dollars_by_role: by_role,
                tokens: mine
                    .iter()
                    .map(|r| r.tokens_by_role.values().sum::<u64>())
                    .sum(),
                calls: mine.iter().map(|r| r.calls).sum(),
                wall_seconds: mine.iter().map(|r| r.wall_seconds).sum(),
            }
        })
        .collect()
}
