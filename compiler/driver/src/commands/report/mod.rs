//! `specc report [SPEC] [--state DB…] [--run R…] [--out report.html] [--list]`: the eval
//! series of one or more builds (`specc_runtime::eval::series`), drawn as charts over time
//! (plotters, SVG) in one self-contained HTML page, and summed up in the terminal. Runs from
//! several state databases (two configurations, two versions of a spec) share each chart,
//! one line per run, named in the legend.
//! design: eval.report

pub(in crate::commands) mod charts;
mod html;
mod runs;
mod summary;
pub(in crate::commands) mod text;
mod timeline;

use std::io::Write;
use std::path::{Path, PathBuf};

use specc_ir::{Diagnostic, codes};
use specc_runtime::eval::series::{self, Point};

use self::charts::{Chart, Line, PALETTE, Spec};
use self::runs::{Run, Unit};
use self::text::tokens;
use crate::cli::{MessageFormat, ReportArgs};
use crate::commands::state_url::ReadError;
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &ReportArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let fail = |reporter: &mut Reporter, err: &mut dyn Write, why: String| {
        let d = Diagnostic::new(codes::REPORT_SETUP, why).with_help("see `specc explain E0502`");
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let runs = match load(args) {
        Ok(runs) => runs,
        Err(why) => return fail(&mut reporter, err, why.to_string()),
    };
    if args.list {
        for r in &runs {
            let _ = writeln!(
                out,
                "{}\t{} points\t{}",
                r.label,
                r.points.len(),
                super::state_url::of(&r.db)
                    .map_or_else(|| r.db.display().to_string(), super::state_url::label)
            );
        }
        return exit::OK;
    }
    let unit = Unit::of(&runs);
    let charts = charts_of(&runs, unit);
    let page = html::page(&runs, &charts, unit);
    if let Err(e) = std::fs::write(&args.out, page) {
        return fail(
            &mut reporter,
            err,
            format!("writing {}: {e}", args.out.display()),
        );
    }
    let _ = summary::write(&runs, out);
    let _ = writeln!(
        out,
        "report: {} ({} charts, {} run{})",
        args.out.display(),
        charts.len(),
        runs.len(),
        if runs.len() == 1 { "" } else { "s" }
    );
    exit::OK
}

/// The runs to draw: every run with a series in the state databases named (or the spec's),
/// those `--run` names if any.
fn load(args: &ReportArgs) -> Result<Vec<Run>, ReadError> {
    let dbs: Vec<PathBuf> = if args.state.is_empty() {
        vec![
            specc_project::spec_dir(args.spec.as_deref())
                .join(".specc")
                .join("state.db"),
        ]
    } else {
        args.state.clone()
    };
    let mut runs = Vec::new();
    for db in &dbs {
        let series = match super::state_url::of(db) {
            Some(url) => super::state_url::reader(url)?
                .read(series::all)
                .map_err(|error| ReadError::Labelled {
                    label: super::state_url::label(url),
                    error,
                })?,
            None if !db.is_file() => {
                return Err(ReadError::NoDatabase(db.clone()));
            }
            None => series::read(db).map_err(|error| ReadError::Labelled {
                label: db.display().to_string(),
                error,
            })?,
        };
        for (run, points) in series {
            let label = if dbs.len() > 1 {
                format!("{} {run}", place(db))
            } else {
                run.clone()
            };
            if args.run.is_empty() || args.run.iter().any(|r| *r == run || *r == label) {
                let (timeline, started_ms) = in_time(db, &run);
                runs.push(Run {
                    label,
                    db: db.clone(),
                    points,
                    timeline,
                    started_ms,
                });
            }
        }
    }
    for wanted in &args.run {
        if !runs
            .iter()
            .any(|r| r.label == *wanted || r.label.ends_with(&format!(" {wanted}")))
        {
            return Err(ReadError::NoRun(wanted.clone()));
        }
    }
    if runs.is_empty() {
        return Err(ReadError::NoSeries(
            dbs.iter()
                .map(|d| {
                    super::state_url::of(d)
                        .map_or_else(|| d.display().to_string(), super::state_url::label)
                })
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    Ok(runs)
}

/// `run`'s attempts in time and its series' start, read from `db` (nothing when they cannot
/// be read: the timeline is then left out, and the charts are drawn as before).
fn in_time(db: &Path, run: &str) -> (specc_state::Timeline, Option<i64>) {
    let read = |c: &mut dyn specc_state::Sql| {
        Ok((specc_state::timeline(c, run)?, series::started(c, run)?))
    };
    let got = match super::state_url::of(db) {
        Some(url) => super::state_url::reader(url)
            .ok()
            .and_then(|r| r.read(read).ok()),
        None => specc_state::sqlite::open_read_only(db)
            .ok()
            .and_then(|mut c| read(&mut c).ok()),
    };
    got.unwrap_or_default()
}

/// A state database's project, for a legend: the directory that holds `.specc/` (or a
/// PostgreSQL database's host and name).
fn place(db: &Path) -> String {
    if let Some(url) = super::state_url::of(db) {
        return super::state_url::label(url);
    }
    db.parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map_or_else(
            || db.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
}

impl Unit {
    fn of(runs: &[Run]) -> Unit {
        let longest = runs
            .iter()
            .filter_map(|r| r.points.last())
            .map(|p| p.t_ms)
            .max()
            .unwrap_or(0);
        if longest < 120_000 {
            Unit::Seconds
        } else {
            Unit::Minutes
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Unit::Seconds => "seconds",
            Unit::Minutes => "minutes",
        }
    }

    fn desc(self) -> &'static str {
        match self {
            Unit::Seconds => "seconds since the build started",
            Unit::Minutes => "minutes since the build started",
        }
    }

    fn at(self, p: &Point) -> f64 {
        match self {
            Unit::Seconds => p.t_ms as f64 / 1000.0,
            Unit::Minutes => p.t_ms as f64 / 60_000.0,
        }
    }
}

/// One line per run of `y` at each point (points where it is `None` are left out: an
/// unknown score is not drawn as zero).
fn per_run(runs: &[Run], unit: Unit, y: impl Fn(&Point) -> Option<f64>) -> Vec<Line> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| Line {
            name: r.label.clone(),
            color: PALETTE[i % PALETTE.len()],
            points: r
                .points
                .iter()
                .filter_map(|p| y(p).map(|v| (unit.at(p), v)))
                .collect(),
        })
        .collect()
}

/// One line per run and role of `y(cost)` summed over the role's models.
fn per_role(runs: &[Run], unit: Unit, y: impl Fn(&series::Cost) -> f64) -> Vec<Line> {
    let mut lines = Vec::new();
    for r in runs {
        let mut roles: Vec<&str> = r
            .points
            .iter()
            .flat_map(|p| p.costs.iter().map(|c| c.role.as_str()))
            .collect();
        roles.sort_unstable();
        roles.dedup();
        for role in roles {
            let name = if runs.len() > 1 {
                format!("{} · {role}", r.label)
            } else {
                role.to_owned()
            };
            lines.push(Line {
                name,
                color: PALETTE[lines.len() % PALETTE.len()],
                points: r
                    .points
                    .iter()
                    .map(|p| {
                        let v = p.costs.iter().filter(|c| c.role == role).map(&y).sum();
                        (unit.at(p), v)
                    })
                    .collect(),
            });
        }
    }
    lines
}

fn whole(v: f64) -> String {
    format!("{v:.0}")
}

fn percent(v: f64) -> String {
    format!("{v:.0}%")
}

fn dollars(v: f64) -> String {
    if v >= 10.0 {
        format!("${v:.0}")
    } else {
        format!("${v:.3}")
    }
}

/// Every chart of the page, with its id.
fn charts_of(runs: &[Run], unit: Unit) -> Vec<(&'static str, Chart)> {
    let count = |f: fn(&Point) -> u64| per_run(runs, unit, move |p| Some(f(p) as f64));
    let x_desc = unit.desc();
    let specs = [
        (
            "score",
            Spec {
                x_desc,
                title: "Hidden tests passing",
                y_desc: "tests passing (%)",
                y_format: percent,
                y_floor_max: 100.0,
                integer: false,
                // An evaluation that could not run counts as 0, its reason on hover.
                lines: per_run(runs, unit, |p| Some(p.score.map_or(0.0, |s| s * 100.0))),
                nothing: "No evaluation yet: the hidden tests have not been run on this build.",
                zero_is_nothing: false,
                marks_only: false,
            },
        ),
        (
            "commits",
            Spec {
                title: "Commits (cumulative)",
                x_desc,
                y_desc: "commits",
                y_format: whole,
                y_floor_max: 1.0,
                integer: true,
                lines: count(|p| p.commits),
                nothing: "No commits yet: nothing has landed.",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
        (
            "conflicts",
            Spec {
                title: "Conflicts (cumulative)",
                x_desc,
                y_desc: "conflicts",
                y_format: whole,
                y_floor_max: 1.0,
                integer: true,
                lines: count(|p| p.conflicts),
                nothing: "No conflicts: no two tasks changed the same lines at once.",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
        (
            "hottest",
            Spec {
                title: "Lines of the most-conflicted file",
                x_desc,
                y_desc: "lines",
                y_format: whole,
                y_floor_max: 1.0,
                integer: true,
                lines: per_run(runs, unit, |p| p.hottest.as_ref().map(|h| h.2 as f64)),
                nothing: "No file was fought over: no conflict, so no most-conflicted file.",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
        (
            "packages",
            Spec {
                title: "Packages (manifests in the tree)",
                x_desc,
                y_desc: "packages",
                y_format: whole,
                y_floor_max: 1.0,
                integer: true,
                lines: count(|p| p.packages),
                nothing: "No package manifest in the tree (Cargo.toml, pyproject.toml, package.json, go.mod).",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
        (
            "lines",
            Spec {
                title: "Lines in the tree",
                x_desc,
                y_desc: "lines",
                y_format: whole,
                y_floor_max: 1.0,
                integer: true,
                lines: count(|p| p.lines),
                nothing: "The tree is empty: no lines yet.",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
        (
            "tokens",
            Spec {
                title: "Tokens by role (cumulative, input + output)",
                x_desc,
                y_desc: "tokens",
                y_format: tokens,
                y_floor_max: 1.0,
                integer: false,
                lines: per_role(runs, unit, |c| (c.input_tokens + c.output_tokens) as f64),
                nothing: "No model call recorded at these points.",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
        (
            "dollars",
            Spec {
                title: "Dollars by role (cumulative)",
                x_desc,
                y_desc: "US dollars",
                y_format: dollars,
                y_floor_max: 0.01,
                integer: false,
                lines: per_role(runs, unit, |c| c.dollars),
                nothing: "Nothing spent: every answer cost nothing (a free model, or a recording priced at zero).",
                zero_is_nothing: true,
                marks_only: false,
            },
        ),
    ];
    let mut charts: Vec<(&'static str, Chart)> = specs
        .into_iter()
        .map(|(id, spec)| (id, charts::draw(&spec)))
        .collect();
    if let Some((_, score)) = charts.iter_mut().find(|(id, _)| *id == "score") {
        unscored(score, runs, unit);
    }
    charts
}

/// A mark with its reason on hover over each score point that is 0 because its evaluation
/// could not run (or its output could not be read).
fn unscored(chart: &mut Chart, runs: &[Run], unit: Unit) {
    let mut marks = String::new();
    for r in runs {
        for p in r.points.iter().filter(|p| p.score.is_none()) {
            let (x, y) = chart.pixel((unit.at(p), 0.0));
            let why = p
                .why
                .as_deref()
                .unwrap_or("no test summary could be read from the suite's output");
            let _ = std::fmt::Write::write_fmt(
                &mut marks,
                format_args!(
                    "<circle class=\"unscored\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"6\" fill=\"none\" \
                     stroke=\"#D62728\" stroke-width=\"2\"><title>{}: could not score at point {} \
                     ({}): {}</title></circle>",
                    text::escape(&r.label),
                    p.point,
                    text::escape(&p.commit.chars().take(12).collect::<String>()),
                    text::escape(why)
                ),
            );
        }
    }
    chart.overlay(&marks);
}
