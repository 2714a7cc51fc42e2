//! `specc status [SPEC] [--format text|json|prometheus]`: the latest build, read without
//! writing anything, so it works while the build runs, from the state backend the
//! configuration chooses: `.specc/state.db`, or PostgreSQL with `[state] url` or
//! `SPECC_STATE_URL` (design: state.backends): its run, tasks, attempts, spend and, for a
//! `specc serve` build, the task leases (who holds which leaf, for how long).
//! design: driver.build
//! design: runtime.metrics

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::state_url::ReadError;
use crate::commands::metrics;
use specc_ir::{Diagnostic, codes};
use specc_llm::{Ledger, LlmConfig};
use specc_state::PgState;
use specc_state::Status;
use specc_state::{LeaseRow, LeaseStore};

use crate::cli::{MessageFormat, StatusArgs, StatusFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &StatusArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let dir = specc_project::spec_dir(args.spec.as_deref());
    let db = dir.join(".specc/state.db");
    let fail = |reporter: &mut Reporter, err: &mut dyn Write, message: String| {
        let d = Diagnostic::new(codes::IO_ERROR, message)
            .with_help("run it beside the spec, or name the spec");
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let source = match source_of(&dir, &db) {
        Ok(s) => s,
        Err(e) => return fail(&mut reporter, err, e.to_string()),
    };
    let (status, rows) = match read(&source) {
        Ok(Some(read)) => read,
        Ok(None) => {
            // Metrics text has no series yet: an empty exposition, not prose.
            if args.format != StatusFormat::Prometheus {
                let _ = writeln!(out, "no build has run here yet");
            }
            return exit::OK;
        }
        Err(e) => return fail(&mut reporter, err, e.to_string()),
    };
    let spent: f64 = rows.iter().map(|r| r.dollars).sum();
    // The leases are a section of the text and JSON views; without them the rest stands.
    let leases = match args.format {
        StatusFormat::Prometheus => Vec::new(),
        _ => leases_of(&source, &status.run.run).unwrap_or_else(|e| {
            let _ = writeln!(err, "warning: the task leases could not be read: {e}");
            Vec::new()
        }),
    };
    let budget = LlmConfig::load(&dir.join("specc.toml"))
        .ok()
        .and_then(|c| c.budget.dollars);
    let written = match args.format {
        StatusFormat::Json => {
            let v = serde_json::json!({
                "status": status, "spent": spent, "budget": budget, "leases": leases,
            });
            writeln!(out, "{v}")
        }
        StatusFormat::Text => {
            write_text(&status, spent, budget, out).and_then(|()| write_leases(&leases, out))
        }
        StatusFormat::Prometheus => {
            let spend = metrics::Spend::of(&rows, budget);
            out.write_all(metrics::prometheus(&status, &spend).as_bytes())
        }
    };
    if written.is_err() {
        return exit::USAGE;
    }
    exit::OK
}

fn write_text(
    s: &Status,
    spent: f64,
    budget: Option<f64>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    writeln!(
        out,
        "build {} of {}: {}",
        s.run.run, s.run.spec, s.run.status
    )?;
    let counts: Vec<String> = s
        .counts
        .iter()
        .map(|(st, n)| format!("{n} {}", st.replace('_', " ")))
        .collect();
    writeln!(out, "tasks: {}", counts.join(", "))?;
    let cap = budget.map_or_else(|| " (no budget cap)".to_owned(), |b| format!(" of ${b:.2}"));
    writeln!(out, "spent: ${spent:.4}{cap}")?;
    for a in &s.running {
        writeln!(
            out,
            "running: {} attempt {} ({}), {} steps, {} s",
            a.task,
            a.attempt,
            a.role,
            a.steps,
            (now - a.started_unix).max(0)
        )?;
    }
    for l in &s.merging {
        writeln!(
            out,
            "merge queue: {} ({})",
            l.task,
            l.detail.as_deref().unwrap_or_default()
        )?;
    }
    for l in &s.landed {
        let commit = l.detail.as_deref().unwrap_or_default();
        writeln!(
            out,
            "landed: {} ({})",
            l.task,
            &commit[..commit.len().min(12)]
        )?;
    }
    for l in &s.failed {
        // What one would run next to see why.
        let see = if l.state == "failed" {
            format!(" (specc show {})", l.task)
        } else {
            String::new()
        };
        writeln!(
            out,
            "{}: {}: {}{see}",
            l.state,
            l.task,
            l.detail.as_deref().unwrap_or_default()
        )?;
    }
    Ok(())
}

/// Where the build's state is: the state database beside the spec, or the PostgreSQL
/// database a state URL names (`[state] url` in specc.toml, or `SPECC_STATE_URL`).
pub(super) enum Source {
    Sqlite(PathBuf),
    Postgres(String),
}

pub(super) fn source_of(dir: &Path, db: &Path) -> Result<Source, ReadError> {
    let from_file = std::fs::read_to_string(dir.join("specc.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| Some(t.get("state")?.get("url")?.as_str()?.to_owned()));
    match specc_project::config::state_url(from_file).map_err(ReadError::Url)? {
        Some(url) => Ok(Source::Postgres(url)),
        None if db.is_file() => Ok(Source::Sqlite(db.to_owned())),
        None => Err(ReadError::NoBuildState(db.to_owned())),
    }
}

/// The latest run's status and its ledger rows, read without writing anything; `None` if
/// no build has run.
fn read(source: &Source) -> Result<Option<(Status, Vec<specc_llm::CallRow>)>, ReadError> {
    let (status, ledger) = match source {
        Source::Sqlite(db) => {
            let at = |error| ReadError::Journal {
                path: db.clone(),
                error,
            };
            let Some(status) = specc_state::read_status(db).map_err(at)? else {
                return Ok(None);
            };
            (status, Ledger::open_existing(db).ok())
        }
        Source::Postgres(url) => {
            // Read only: nothing is migrated, and an unreachable server fails in seconds.
            let db = super::state_url::reader(url)?;
            let Some(status) = db
                .read(specc_state::status_of)
                .map_err(ReadError::Postgres)?
            else {
                return Ok(None);
            };
            (status, Some(Ledger::on_state(Arc::new(db))))
        }
    };
    let rows = ledger
        .and_then(|l| l.rows().ok())
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r.run == status.run.run)
        .collect();
    Ok(Some((status, rows)))
}

/// The run's task leases: a `specc serve` run's (none for `specc build`'s), from PostgreSQL
/// when a state URL is configured, else from the state database.
fn leases_of(source: &Source, run: &str) -> Result<Vec<LeaseRow>, ReadError> {
    let url = match source {
        Source::Sqlite(db) => {
            return specc_state::read_leases(db, run).map_err(|error| ReadError::Sqlite {
                path: db.clone(),
                error,
            });
        }
        Source::Postgres(url) => url,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ReadError::Runtime)?;
    rt.block_on(async {
        let password = specc_project::config::pg_password();
        // Read only: nothing is migrated, and an unreachable server fails in seconds.
        let pg = PgState::reader(url, password.as_deref(), Duration::from_secs(5))
            .map_err(ReadError::Leases)?;
        let store = LeaseStore::reader(pg);
        let read = store.leases(run);
        match tokio::time::timeout(Duration::from_secs(10), read).await {
            Ok(leases) => leases.map_err(ReadError::Leases),
            Err(_) => Err(ReadError::Timeout),
        }
    })
}

fn write_leases(leases: &[LeaseRow], out: &mut dyn Write) -> std::io::Result<()> {
    if leases.is_empty() {
        return Ok(());
    }
    let count = |state: &str| leases.iter().filter(|l| l.state == state).count();
    writeln!(
        out,
        "leases: {} ready, {} leased, {} done",
        count("ready"),
        count("leased"),
        count("done")
    )?;
    for l in leases.iter().filter(|l| l.state == "leased") {
        let left = l.expires_in_ms.unwrap_or(0);
        let when = if left > 0 {
            format!("{:.1} s left", left as f64 / 1000.0)
        } else {
            "expired: the next claim takes it over".to_owned()
        };
        writeln!(
            out,
            "leased: {} claim {} by {}, {when}",
            l.task,
            l.attempt,
            l.holder.as_deref().unwrap_or("?")
        )?;
    }
    Ok(())
}
