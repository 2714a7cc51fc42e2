//! `specc drift [SPEC] [--tree DIR] [--format text|json] [--accept[=ID,…]]`: what people
//! changed in the built tree since specc last built it, per requirement and per decision —
//! references removed, tests of a requirement removed, pinned code edited, pins that no
//! longer match their decision, and every file the build wrote that was changed or
//! deleted. Findings people accepted (`--accept`, into `specc-drift.json` beside the spec)
//! are not reported again until the file changes again; any other finding exits 1.
//! design: driver.drift

use std::io::Write;
use std::path::Path;

use specc_ir::{Diagnostic, IntentTree, codes};

use crate::check::{CheckOptions, CheckSession};
use crate::cli::{DriftArgs, DriftFormat, MessageFormat};
use crate::db::Database;
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};
use specc_project::drift::{Baseline, Finding, NoBase, baseline, findings};

pub(crate) fn run(args: &DriftArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let mut files = Files::default();
    let (spec, intent) = match super::plan::parse_named(
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
    let tree = args
        .tree
        .clone()
        .unwrap_or_else(|| specc_project::config::configured_out(args.config.as_deref(), &dir));
    let usage = |d: Diagnostic, reporter: &mut Reporter, err: &mut dyn Write| {
        reporter.report(&files, &d, err);
        exit::USAGE
    };
    let (base, found) = match drifted(&tree, &spec) {
        Ok(drifted) => drifted,
        Err(d) => return usage(*d, &mut reporter, err),
    };
    let baseline_path = dir.join(baseline::FILE);
    let mut baseline = match Baseline::load(&baseline_path) {
        Ok(b) => b,
        Err(bad) => {
            let d = Diagnostic::new(
                codes::FILE_NOT_FOUND,
                format!("{} cannot be read: {}", bad.path.display(), bad.why),
            )
            .with_help("it is the accepted drift baseline; restore it from version control, or delete it to accept nothing");
            return usage(d, &mut reporter, err);
        }
    };
    if let Some(ids) = &args.accept {
        let n = baseline.accept(&found, ids);
        if let Err(e) = baseline.save(&dir, &baseline_path) {
            let d = Diagnostic::new(
                codes::FILE_NOT_FOUND,
                format!("{}: {e}", baseline_path.display()),
            );
            return usage(d, &mut reporter, err);
        }
        let _ = writeln!(
            out,
            "accepted {n} finding{} into {}; review and commit it with the spec",
            if n == 1 { "" } else { "s" },
            baseline_path.display()
        );
        return exit::OK;
    }
    let (accepted, new): (Vec<Finding>, Vec<Finding>) =
        found.into_iter().partition(|f| baseline.accepts(f));
    let shown = match args.format {
        DriftFormat::Text => text(&intent, &tree, &base, &new, accepted.len(), out),
        DriftFormat::Json => json(&tree, &base, &new, accepted.len(), out),
    };
    if shown.is_err() {
        return exit::USAGE;
    }
    if new.is_empty() {
        exit::OK
    } else {
        exit::ERRORS
    }
}

/// What drifted in `tree` since specc's last commit there (its base): the files changed
/// since, and the pins `specc check` finds stale, sorted and without repeats.
fn drifted(tree: &Path, spec: &Path) -> Result<(String, Vec<Finding>), Box<Diagnostic>> {
    let base = findings::base(tree).map_err(|why| {
        let message = match why {
            NoBase::NotGit => format!("{} is not in a git repository", tree.display()),
            NoBase::NoSpeccCommit => {
                format!("{}'s history has no commit specc made", tree.display())
            }
        };
        Box::new(
            Diagnostic::new(codes::NOT_A_FILE, format!("drift: {message}"))
                .with_help("drift compares the tree with what `specc build` exported to it; build first, or name the output with --tree"),
        )
    })?;
    let mut found = findings::changed_files(tree, &base);
    let mut session = CheckSession::open(
        Database::default(),
        tree,
        Some(spec),
        CheckOptions::default(),
    )
    .map_err(|e| e.0)?;
    let report = session.check();
    let files = session.files();
    let locate = |label: &specc_ir::Label| {
        let name = files.name(label.span.file).to_owned();
        (name, files.line_col(label.span.file, label.span.start).line)
    };
    found.extend(findings::stale_pins(&report.diagnostics, &locate, tree));
    found.sort();
    found.dedup();
    Ok((base, found))
}

/// The requirement `id` names (as written in a reference: a short or a full id).
fn requirement<'a>(intent: &'a IntentTree, id: &str) -> Option<&'a specc_ir::Requirement> {
    let all = || intent.nodes().flat_map(|n| n.requirements.iter());
    all()
        .find(|r| r.id.as_str() == id)
        .or_else(|| all().find(|r| r.id.as_str().ends_with(&format!(".{id}"))))
}

fn text(
    intent: &IntentTree,
    tree: &Path,
    base: &str,
    new: &[Finding],
    accepted: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let short = &base[..base.len().min(12)];
    if new.is_empty() {
        writeln!(
            out,
            "no drift in {} since specc's build at {short}{}",
            tree.display(),
            accepted_note(accepted)
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "drift in {} since specc's build at {short}:",
        tree.display()
    )?;
    let mut subject = None;
    for f in new {
        if subject != Some(&f.subject) {
            subject = Some(&f.subject);
            writeln!(out)?;
            match (f.subject.as_str(), requirement(intent, &f.subject)) {
                ("", _) => writeln!(out, "files that reference no requirement or decision")?,
                (_, Some(r)) => {
                    // The text as written starts with its `[ID]` tag: shown once.
                    let words = r.text.trim_start();
                    let words = match words.strip_prefix('[').and_then(|w| w.split_once(']')) {
                        Some((_, rest)) => rest.trim_start(),
                        None => words,
                    };
                    writeln!(out, "{} ({}) {words}", f.subject, r.level)?
                }
                (id, None) => writeln!(out, "decision {id}")?,
            }
        }
        let place = match f.line {
            0 => f.path.clone(),
            n => format!("{}:{n}", f.path),
        };
        writeln!(out, "  {:<19} {place}: {}", f.kind.words(), f.detail)?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{} finding{} of drift{}; `specc drift --accept[=ID,…]` accepts them into {}",
        new.len(),
        if new.len() == 1 { "" } else { "s" },
        accepted_note(accepted),
        baseline::FILE
    )
}

fn accepted_note(accepted: usize) -> String {
    match accepted {
        0 => String::new(),
        n => format!(" ({n} accepted in {})", baseline::FILE),
    }
}

fn json(
    tree: &Path,
    base: &str,
    new: &[Finding],
    accepted: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let v = serde_json::json!({
        "tree": tree.display().to_string(),
        "base": base,
        "findings": new,
        "accepted": accepted,
    });
    writeln!(
        out,
        "{}",
        serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?
    )
}
