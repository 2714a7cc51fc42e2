//! `specc cost [--state FILE|URL] [--run ID] [--format text|json]`: what the models cost, by
//! role and by model, with each one's share, from the ledger (a state database's file, or a
//! PostgreSQL state database's `postgres://` URL).

use std::io::Write;
use std::sync::Arc;

use specc_ir::{Diagnostic, codes};
use specc_llm::Ledger;
use specc_llm::cost::{Line, Summary, summarize};

use super::state_url::ReadError;
use crate::cli::{CostArgs, Format, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &CostArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let fail = |reporter: &mut Reporter, err: &mut dyn Write, message: String, help: &str| {
        let d = Diagnostic::new(codes::IO_ERROR, message).with_help(help.to_owned());
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let read = match super::state_url::of(&args.state) {
        Some(url) => super::state_url::reader(url).and_then(|db| {
            Ledger::on_state(Arc::new(db))
                .rows()
                .map_err(|e| ReadError::Ledger(Box::new(e)))
        }),
        None if !args.state.is_file() => {
            return fail(
                &mut reporter,
                err,
                format!("no state database at `{}`", args.state.display()),
                "run specc in the directory of the spec (state lives in .specc/), or name it with --state (a file, or a postgres:// URL)",
            );
        }
        None => Ledger::open_existing(&args.state)
            .and_then(|l| l.rows())
            .map_err(|e| ReadError::LedgerAt {
                path: args.state.clone(),
                error: Box::new(e),
            }),
    };
    let rows = match read {
        Ok(rows) => rows,
        Err(e) => {
            return fail(
                &mut reporter,
                err,
                e.to_string(),
                "check that this is a specc state database",
            );
        }
    };
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| args.run.as_ref().is_none_or(|run| *run == r.run))
        .collect();
    let summary = summarize(&rows);
    let written = match args.format {
        Format::Json => serde_json::to_writer_pretty(&mut *out, &summary)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(out)),
        Format::Text => write_table(&summary, out),
    };
    if written.is_err() {
        return exit::USAGE;
    }
    exit::OK
}

fn write_table(s: &Summary, out: &mut dyn Write) -> std::io::Result<()> {
    if s.total.attempts == 0 {
        return writeln!(out, "no model calls recorded");
    }
    for (title, lines) in [("by role", &s.by_role), ("by model", &s.by_model)] {
        writeln!(
            out,
            "{title:<24} {:>6} {:>8} {:>12} {:>12} {:>12} {:>12} {:>7}",
            "calls", "attempts", "input", "cached", "output", "dollars", "share"
        )?;
        for line in lines {
            row(line, out)?;
        }
        writeln!(out)?;
    }
    row(&s.total, out)
}

fn row(l: &Line, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<24} {:>6} {:>8} {:>12} {:>12} {:>12} {:>12} {:>6.1}%",
        l.name,
        l.calls,
        l.attempts,
        thousands(l.input_tokens),
        thousands(l.cached_input_tokens),
        thousands(l.output_tokens),
        format!("${:.4}", l.dollars),
        l.share * 100.0
    )
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
