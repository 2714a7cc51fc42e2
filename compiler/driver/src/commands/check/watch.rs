//! `specc check --watch`: keep the database, re-check on every change, say what changed.
//! design: driver.check-watch

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};
use specc_ir::{Diagnostic, codes};

use super::print::print;
use crate::check::{Changes, CheckSession};
use crate::cli::CheckArgs;
use crate::exit;
use crate::reporter::Reporter;
use crate::source::Files;

/// Events closer together than this are one change (an editor's save is several writes).
const SETTLE: Duration = Duration::from_millis(50);

pub(super) fn run(
    mut session: CheckSession,
    reporter: &mut Reporter,
    args: &CheckArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let (tx, rx) = mpsc::channel();
    let watcher = notify::recommended_watcher(tx).and_then(|mut w| {
        w.watch(&args.path, RecursiveMode::Recursive)?;
        Ok(w)
    });
    let _watcher = match watcher {
        Ok(w) => w,
        Err(e) => {
            let d = Diagnostic::new(
                codes::IO_ERROR,
                format!("cannot watch `{}`: {e}", args.path.display()),
            )
            .with_help("on Linux, raise fs.inotify.max_user_watches, or check without --watch");
            reporter.report(&Files::default(), &d, err);
            return exit::USAGE;
        }
    };
    let base = std::fs::canonicalize(&args.path).unwrap_or_else(|_| args.path.clone());
    let _ = writeln!(out, "watching {} (Ctrl-C stops)", args.path.display());
    let _ = out.flush();
    let mut rounds = 0;
    while let Ok(first) = rx.recv() {
        let mut paths = Vec::new();
        collect(first, &base, &args.path, &mut paths);
        while let Ok(event) = rx.recv_timeout(SETTLE) {
            collect(event, &base, &args.path, &mut paths);
        }
        paths.sort();
        paths.dedup();
        let started = Instant::now();
        let changes = session.update(&paths);
        if changes.is_empty() {
            continue;
        }
        let report = session.check();
        let elapsed = started.elapsed();
        reporter.reset();
        let _ = writeln!(out, "\n{}", describe(&changes));
        print(reporter, session.files(), &report, out, err);
        let _ = writeln!(out, "re-checked in {:.1} ms", elapsed.as_secs_f64() * 1e3);
        let _ = out.flush();
        let _ = err.flush();
        rounds += 1;
        if args.watch_limit.is_some_and(|limit| rounds >= limit) {
            break;
        }
    }
    reporter.status()
}

/// The paths of a content event, as the session knows them (under the root as given).
fn collect(event: notify::Result<notify::Event>, base: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(event) = event else { return };
    if event.need_rescan() {
        // The watcher lost events: look at the whole tree again.
        out.push(root.to_path_buf());
        return;
    }
    let content = match event.kind {
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
        EventKind::Modify(m) => !matches!(m, notify::event::ModifyKind::Metadata(_)),
        EventKind::Access(_) => false,
    };
    if !content {
        return;
    }
    for path in event.paths {
        let rel = path
            .strip_prefix(base)
            .or_else(|_| path.strip_prefix(root))
            .map(Path::to_path_buf);
        out.push(match rel {
            Ok(rel) => root.join(rel),
            Err(_) => path,
        });
    }
}

fn describe(changes: &Changes) -> String {
    let mut parts = Vec::new();
    for (what, paths) in [
        ("edited", &changes.edited),
        ("added", &changes.added),
        ("removed", &changes.removed),
        ("skipped or readable again", &changes.skipped),
    ] {
        if !paths.is_empty() {
            parts.push(format!("{what} {}", paths.join(", ")));
        }
    }
    format!("changed: {}", parts.join("; "))
}
