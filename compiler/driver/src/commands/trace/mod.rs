//! `specc trace [SPEC] [--tree DIR] [--format text|json|markdown] [--fail-under PCT]`: every
//! requirement of the spec followed to the work tasks that cover it (the latest plan), the
//! code and the tests that reference it (`req:` comments, found incrementally by the
//! `specc check` session), and whether those tests passed: a test in the tree passed when
//! the task that last changed its file landed (its checks passed) and nobody changed it
//! since; a test of the `[eval]` suite when the last eval passed; a spec test block of the
//! requirement's section when a task that covers it landed (the block was one of its
//! checks). The summary counts the binding requirements (MUST, MUST NOT, SHALL, SHALL NOT)
//! covered by a task, by code and by a passing test; `--fail-under` turns it into a gate.
//! design: driver.trace

mod render;
mod rows;

use std::io::Write;
use std::path::{Path, PathBuf};

use specc_ir::{IntentTree, Level};

pub(crate) use self::rows::{Place, Row, Summary, TaskRef, Test};
use crate::check::{CheckOptions, CheckSession};
use crate::cli::{MessageFormat, TraceArgs, TraceFormat};
use crate::db::Database;
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};
use specc_project::trace::{Evidence, TestStatus};

impl Row {
    fn tested(&self) -> bool {
        self.tests.iter().any(|t| t.status.passed())
    }
}

impl Summary {
    fn of(rows: &[Row]) -> Summary {
        let binding: Vec<&Row> = rows
            .iter()
            .filter(|r| r.binding && r.waived.is_none())
            .collect();
        Summary {
            binding: binding.len(),
            waived: rows
                .iter()
                .filter(|r| r.binding && r.waived.is_some())
                .count(),
            by_task: binding.iter().filter(|r| !r.tasks.is_empty()).count(),
            by_code: binding.iter().filter(|r| !r.code.is_empty()).count(),
            by_passing_test: binding.iter().filter(|r| r.tested()).count(),
        }
    }

    /// `n` as a percentage of the binding requirements (100 when there are none).
    pub(crate) fn pct(&self, n: usize) -> f64 {
        if self.binding == 0 {
            100.0
        } else {
            n as f64 * 100.0 / self.binding as f64
        }
    }
}

pub(crate) fn run(args: &TraceArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let mut files = Files::default();
    let (spec, tree) = match super::plan::parse_named(
        args.spec.as_deref(),
        args.config.as_deref(),
        &mut files,
        &mut reporter,
        err,
    ) {
        Ok(parsed) => parsed,
        Err(status) => return status,
    };
    let dir = specc_project::spec_dir(Some(&spec));
    if let Some(tree) = args.tree.as_ref().filter(|t| !t.is_dir()) {
        let d = specc_ir::Diagnostic::new(
            specc_ir::codes::NOT_A_FILE,
            format!("--tree {} is not a directory", tree.display()),
        )
        .with_help("name the directory that holds the code (default: the build's out/)");
        reporter.report(&files, &d, err);
        return exit::USAGE;
    }
    let in_postgres = specc_project::config::load_file(args.config.as_deref(), &dir)
        .ok()
        .and_then(|c| c.state_url)
        .is_some();
    if in_postgres {
        let _ = writeln!(
            err,
            "trace: the build's state is in PostgreSQL (a state URL); trace reads .specc/state.db only, so no task shows as landed and no eval is known"
        );
    }
    let code_dir = args
        .tree
        .clone()
        .unwrap_or_else(|| default_tree(args, &dir));
    let evidence = Evidence::gather(&dir, args.config.as_deref(), &code_dir);
    let sites = if code_dir.is_dir() {
        match CheckSession::open(
            Database::default(),
            &code_dir,
            Some(&spec),
            CheckOptions::default(),
        ) {
            Ok(mut session) => session.requirement_sites().clone(),
            Err(e) => {
                reporter.report(&files, &e.0, err);
                return exit::USAGE;
            }
        }
    } else {
        Default::default()
    };
    let rows = rows(&tree, &files, &spec, &sites, &evidence);
    let summary = Summary::of(&rows);
    let shown = match args.format {
        TraceFormat::Text => render::text(&rows, &summary, &code_dir, out),
        TraceFormat::Markdown => render::markdown(&rows, &summary, out),
        TraceFormat::Json => render::json(&rows, &summary, &code_dir, out),
    };
    if shown.is_err() {
        return exit::USAGE;
    }
    let status = reporter.finish(err);
    match args.fail_under {
        Some(pct) if gate(&rows, &summary, pct, err) => exit::ERRORS,
        _ => status,
    }
}

/// Where the code is when `--tree` is not given: the build's output if it exists, else the
/// spec's directory (a project adopted in place).
fn default_tree(args: &TraceArgs, dir: &Path) -> PathBuf {
    let out = specc_project::config::configured_out(args.config.as_deref(), dir);
    if out.is_dir() { out } else { dir.to_owned() }
}

/// The rows of every requirement of `tree`, in document order.
fn rows(
    tree: &IntentTree,
    files: &Files,
    spec: &Path,
    sites: &std::collections::BTreeMap<String, Vec<specc_passes::check::Site>>,
    evidence: &Evidence,
) -> Vec<Row> {
    let spec_name = spec.display().to_string();
    let mut rows = Vec::new();
    for node in tree.nodes() {
        for r in &node.requirements {
            let id = r.id.as_str().to_owned();
            let tasks: Vec<TaskRef> = evidence
                .covering(&id)
                .into_iter()
                .map(|t| TaskRef {
                    landed: evidence.landed(&t),
                    id: t,
                })
                .collect();
            let mut code = Vec::new();
            let mut tests = Vec::new();
            for site in sites.get(&id).into_iter().flatten() {
                if site.test {
                    tests.push(Test {
                        status: evidence.tree_test(&site.path),
                        path: site.path.clone(),
                        line: site.line,
                        spec_check: false,
                    });
                } else {
                    code.push(Place {
                        path: site.path.clone(),
                        line: site.line,
                    });
                }
            }
            for (path, line) in evidence.eval_sites(&id) {
                tests.push(Test {
                    status: evidence.eval_status(),
                    path,
                    line,
                    spec_check: false,
                });
            }
            for check in &node.checks {
                let landed = tasks.iter().any(|t| t.landed);
                tests.push(Test {
                    path: spec_name.clone(),
                    line: files.line_col(check.span.file, check.span.start).line,
                    spec_check: true,
                    status: if landed {
                        TestStatus::Passed(
                            "a task that covers it landed with it among its checks".to_owned(),
                        )
                    } else {
                        TestStatus::NotRun("no task that covers it has landed".to_owned())
                    },
                });
            }
            rows.push(Row {
                binding: matches!(
                    r.level,
                    Level::Must | Level::MustNot | Level::Shall | Level::ShallNot
                ),
                level: r.level.to_string(),
                text: r.text.clone(),
                place: format!(
                    "{spec_name}:{}",
                    files.line_col(r.span.file, r.span.start).line
                ),
                tasks,
                code,
                tests,
                waived: evidence.waived(&id),
                id,
            });
        }
    }
    rows
}

/// Whether the gate fails: any of the three measures under `pct`; names what is missing.
fn gate(rows: &[Row], summary: &Summary, pct: f64, err: &mut dyn Write) -> bool {
    let measures = [
        (
            "covered by a task",
            summary.by_task,
            &(|r: &Row| !r.tasks.is_empty()) as &dyn Fn(&Row) -> bool,
        ),
        ("referenced by code", summary.by_code, &|r: &Row| {
            !r.code.is_empty()
        }),
        (
            "tested by a passing test",
            summary.by_passing_test,
            &|r: &Row| r.tested(),
        ),
    ];
    let mut failed = false;
    for (what, n, has) in measures {
        if summary.pct(n) + 1e-9 < pct {
            failed = true;
            let missing: Vec<&str> = rows
                .iter()
                .filter(|r| r.binding && r.waived.is_none() && !has(r))
                .map(|r| r.id.as_str())
                .collect();
            let _ = writeln!(
                err,
                "trace: {:.1}% of the binding (MUST and SHALL) requirements are {what}, under {pct}%: not {what}: {}",
                summary.pct(n),
                missing.join(", ")
            );
        }
    }
    failed
}
