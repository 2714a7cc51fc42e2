//! `specc show TASK [SPEC] [--attempt N] [--run RUN] [--full] [--format text|json]`: one
//! task's whole story from the journal, read without writing anything (so it works while a
//! build runs, and on PostgreSQL state as `specc status` does): what each attempt was told,
//! every model turn and tool call with its result, the checks, re-plans and the work kept,
//! the submission and the diff that landed (from `out/`, by its `Specc-Id` trailer),
//! reviews and merges, and what the task cost by role.
//! design: driver.show

mod cost;
mod render;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use specc_ir::{Diagnostic, codes};
use specc_llm::{CallRow, Ledger};
use specc_state::Story;

use self::cost::RoleCost;
use super::state_url::ReadError;
use super::status::{Source, source_of};
use crate::cli::{Format, MessageFormat, ShowArgs};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &ShowArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let dir = specc_project::spec_dir(args.spec.as_deref());
    let fail = |reporter: &mut Reporter, err: &mut dyn Write, d: Diagnostic| {
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let read = source_of(&dir, &dir.join(".specc/state.db"))
        .and_then(|source| read(&source, &args.task, args.run.as_deref()));
    let (story, rows) = match read {
        Ok(Some(read)) => read,
        Ok(None) => {
            let d = Diagnostic::new(
                codes::IO_ERROR,
                format!("no build here has a task `{}`", args.task),
            )
            .with_help("`specc status` lists the latest build's tasks; a task's id is its path in the plan, `lib/parse`");
            return fail(&mut reporter, err, d);
        }
        Err(e) => {
            let d = Diagnostic::new(codes::IO_ERROR, e.to_string())
                .with_help("run it beside the spec, or name the spec");
            return fail(&mut reporter, err, d);
        }
    };
    let mut story = story;
    if let Some(n) = args.attempt {
        story.attempts.retain(|a| a.attempt == n);
    }
    // The ledger counts a task's calls, not its attempts': the cost is the task's.
    let costs = costs(&rows);
    let diff = story
        .commit
        .as_deref()
        .and_then(|id| landed_diff(&dir.join("out"), id));
    let written = match args.format {
        Format::Json => {
            let v = serde_json::json!({"story": story, "cost": costs, "diff": diff});
            writeln!(out, "{v}")
        }
        Format::Text => render::story(out, &story, &costs, diff.as_deref(), args.full),
    };
    if written.is_err() {
        return exit::USAGE;
    }
    exit::OK
}

/// The task's story and the run's ledger rows, read without writing anything.
fn read(
    source: &Source,
    task: &str,
    run: Option<&str>,
) -> Result<Option<(Story, Vec<CallRow>)>, ReadError> {
    let (story, ledger) = match source {
        Source::Sqlite(db) => {
            let story =
                specc_state::read_story(db, task, run).map_err(|error| ReadError::Journal {
                    path: db.clone(),
                    error,
                })?;
            (story, Ledger::open_existing(db).ok())
        }
        Source::Postgres(url) => {
            // Read only: nothing is migrated, and an unreachable server fails in seconds.
            let db = super::state_url::reader(url)?;
            let story = db
                .read(|c| specc_state::story_of(c, task, run))
                .map_err(ReadError::Postgres)?;
            (story, Some(Ledger::on_state(Arc::new(db))))
        }
    };
    let Some(story) = story else {
        return Ok(None);
    };
    let rows = ledger
        .and_then(|l| l.rows().ok())
        .unwrap_or_default()
        .into_iter()
        // The merge agent's and the reviewers' calls about the task are `merge:<task>`,
        // `review:<lens>:<task>` (a task id holds no `:`).
        .filter(|r| {
            r.run == story.run
                && (r.task == story.task
                    || r.task
                        .rsplit_once(':')
                        .is_some_and(|(_, t)| t == story.task))
        })
        .collect();
    Ok(Some((story, rows)))
}

/// The task's calls by role, every attempt's (the planner's re-plans of it included).
fn costs(rows: &[CallRow]) -> BTreeMap<String, RoleCost> {
    let mut by: BTreeMap<String, RoleCost> = BTreeMap::new();
    for r in rows {
        let c = by.entry(r.role.clone()).or_default();
        c.calls += 1;
        c.input += r.usage.input + r.usage.cached_input;
        c.output += r.usage.output;
        c.dollars += r.dollars;
    }
    by
}

/// The diff of the commit whose `Specc-Id` trailer is `id` in the exported repository
/// `out`, if it is there (git, read only).
fn landed_diff(out: &Path, id: &str) -> Option<String> {
    let git = |args: &[&str]| specc_vcs::git::read(out, args);
    let log = git(&[
        "log",
        "--all",
        "--format=%H %(trailers:key=Specc-Id,valueonly,separator=)",
    ])?;
    let sha = log.lines().find_map(|l| {
        l.split_once(' ')
            .filter(|(_, t)| t.trim() == id)
            .map(|(s, _)| s.to_owned())
    })?;
    git(&[
        "show",
        "--stat",
        "--patch",
        "--format=commit %H%n%n    %s%n",
        &sha,
    ])
}
