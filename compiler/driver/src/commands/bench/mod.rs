//! `specc bench SUITE [--out DIR] [--format text|json] [--html FILE]`: the suite's cases
//! built by each of its model configurations (specc_project::bench), and the table: per
//! run the hidden score, dollars and tokens by role, calls, attempts, time, tasks landed
//! and failed and why it stopped; per configuration the totals and the share of cases that
//! fully pass. Runs already finished under `--out` are read, not run again.
//! design: project.bench

mod page;
mod table;

use std::io::Write;

use specc_ir::{Diagnostic, codes};
use specc_project::bench::{self, Suite};

use crate::cli::{BenchArgs, Format, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &BenchArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let fail = |err: &mut dyn Write, message: String| {
        let d = Diagnostic::new(codes::BENCH_SETUP, message).with_help("see `specc explain E0604`");
        Reporter::new(MessageFormat::Human, env).report(&Files::default(), &d, err);
        exit::USAGE
    };
    let suite = match Suite::load(&args.suite) {
        Ok(s) => s,
        Err(e) => return fail(err, e.to_string()),
    };
    let Some(specc) = env.sandbox_helper.clone() else {
        return fail(err, "no specc binary to run the builds with".to_owned());
    };
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| suite.dir.join(".specc-bench"));
    let progress = std::cell::RefCell::new(&mut *err);
    let done = |r: &bench::RunResult, skipped: bool| {
        let _ = writeln!(
            progress.borrow_mut(),
            "{} {} × {}: {}",
            if skipped { "finished before:" } else { "ran:" },
            r.case,
            r.configuration,
            table::score(r)
        );
    };
    let ran = bench::bench(&suite, &dir, &specc, &done);
    let err = progress.into_inner();
    let runs = match ran {
        Ok(runs) => runs,
        Err(e) => return fail(err, format!("{}: {e}", dir.display())),
    };
    let totals = bench::totals(&suite, &runs);
    let printed = match args.format {
        Format::Text => table::text(&runs, &totals, out),
        Format::Json => serde_json::to_writer_pretty(
            &mut *out,
            &serde_json::json!({"runs": runs, "configurations": totals}),
        )
        .map_err(std::io::Error::other)
        .and_then(|()| writeln!(out)),
    };
    if printed.is_err() {
        return exit::USAGE;
    }
    if let Some(html) = &args.html
        && let Err(e) = std::fs::write(html, page::page(&suite, &runs, &totals))
    {
        return fail(err, format!("{}: {e}", html.display()));
    }
    exit::OK
}
