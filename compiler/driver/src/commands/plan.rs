//! `specc plan SPEC --emit intent [--format text|json]`.

use std::io::Write;
use std::sync::Arc;

use specc_ir::{IntentNode, IntentTree, Level};
use specc_passes::db::{NodeKey, SpecFile, node_summary, parse_spec};

use crate::cli::{Emit, Format, PlanArgs};
use crate::db::Database;
use crate::reporter::Reporter;
use crate::source::{Files, read_source};
use crate::{Env, exit};

pub(crate) fn run(args: &PlanArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter =
        Reporter::new(args.messages.message_format, env).with_limit(args.messages.error_limit());
    let mut files = Files::default();
    let name = args.spec.display().to_string();
    let text = match read_source(&args.spec) {
        Ok(text) => text,
        Err(e) => {
            reporter.report(&files, &e.0, err);
            return exit::USAGE;
        }
    };
    let text: Arc<str> = text.into();
    let file_id = files.add(name.clone(), text.clone());
    let db = Database::default();
    let file = SpecFile::new(&db, name.clone(), file_id, text.to_string());
    let parsed = parse_spec(&db, file);
    let runners = super::runners::beside(&args.spec, args.config.as_deref());
    for d in super::runners::known(&parsed.diagnostics, &parsed.tree, &runners) {
        reporter.report(&files, d, err);
    }
    reporter.flush_suppressed(err);
    let written = match (args.emit, args.format) {
        (Emit::Intent, Format::Json) => write_json(&parsed.tree, &name, out),
        (Emit::Intent, Format::Text) => write_tree(&db, file, &parsed.tree, &files, out),
        (Emit::Tasks, _) => {
            let cx = super::plan_tasks::Cx {
                env,
                files: &files,
                reporter: &mut reporter,
            };
            return super::plan_tasks::run(args, &parsed.tree, cx, out, err);
        }
    };
    if written.is_err() {
        return exit::USAGE;
    }
    reporter.status()
}

/// The spec a command names (`spec.md` here when none) and its intent tree, parsed with
/// its diagnostics reported; `Err` is the exit status.
pub(crate) fn parse_named(
    spec: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
    files: &mut Files,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) -> Result<(std::path::PathBuf, IntentTree), i32> {
    let spec = spec.map_or_else(|| std::path::PathBuf::from("spec.md"), ToOwned::to_owned);
    let tree = parse(&spec, config, files, reporter, err)?;
    Ok((spec, tree))
}

/// Reads and parses the spec at `path`, reporting its diagnostics (but E0105 for a runner
/// specc.toml — `config`, or beside the spec — declares); `Err` holds the exit status when
/// it could not be read.
pub(crate) fn parse(
    path: &std::path::Path,
    config: Option<&std::path::Path>,
    files: &mut Files,
    reporter: &mut Reporter,
    err: &mut dyn Write,
) -> Result<IntentTree, i32> {
    let name = path.display().to_string();
    let text = match read_source(path) {
        Ok(text) => text,
        Err(e) => {
            reporter.report(files, &e.0, err);
            return Err(exit::USAGE);
        }
    };
    let text: Arc<str> = text.into();
    let file_id = files.add(name, text.clone());
    let parsed = specc_passes::parse_spec(file_id, &text);
    let runners = super::runners::beside(path, config);
    for d in super::runners::known(&parsed.diagnostics, &parsed.tree, &runners) {
        reporter.report(files, d, err);
    }
    Ok(parsed.tree)
}

fn write_json(tree: &IntentTree, name: &str, out: &mut dyn Write) -> std::io::Result<()> {
    let value = serde_json::json!({
        "spec": name,
        "requirement_count": tree.requirements().count(),
        "node_count": tree.nodes().count(),
        "tree": tree,
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}

/// The tree, one node a line: id, title, place, and requirement counts by level.
fn write_tree(
    db: &Database,
    file: SpecFile,
    tree: &IntentTree,
    files: &Files,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let total = tree.requirements().count();
    let nodes = tree.nodes().count();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let (nodes, total) = (plural(nodes, "node"), plural(total, "requirement"));
    writeln!(out, "{}: {nodes}, {total}", file.path(db))?;
    // Iterative depth-first walk: (node, prefix for its children, is last child).
    let mut stack: Vec<(&IntentNode, String, bool, bool)> =
        vec![(&tree.root, String::new(), true, true)];
    while let Some((node, prefix, last, is_root)) = stack.pop() {
        let key = NodeKey::new(db, file, node.id.as_str().to_owned());
        let summary = node_summary(db, key);
        let branch = if is_root {
            ""
        } else if last {
            "└─ "
        } else {
            "├─ "
        };
        let line = files.line_col(node.span.file, node.span.start).line;
        write!(out, "{prefix}{branch}{}", node.id)?;
        if !node.title.is_empty() {
            write!(out, " \"{}\"", node.title)?;
        }
        write!(out, "  {}:{line}", file.path(db))?;
        if let Some(s) = summary {
            let counts: Vec<String> = Level::ALL
                .iter()
                .filter(|l| s.count(**l) > 0)
                .map(|l| format!("{l} {}", s.count(*l)))
                .collect();
            if !counts.is_empty() {
                write!(out, "  [{}]", counts.join(", "))?;
            }
            for (n, what) in [
                (s.checks, "check"),
                (s.decisions, "decision"),
                (s.non_goals, "non-goal"),
            ] {
                if n > 0 {
                    write!(out, "  {n} {what}{}", if n == 1 { "" } else { "s" })?;
                }
            }
        }
        writeln!(out)?;
        let child_prefix = if is_root {
            String::new()
        } else {
            format!("{prefix}{}", if last { "   " } else { "│  " })
        };
        let n = node.children.len();
        for (i, child) in node.children.iter().enumerate().rev() {
            stack.push((child, child_prefix.clone(), i + 1 == n, false));
        }
    }
    Ok(())
}
