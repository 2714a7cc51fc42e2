//! `specc check [PATH] [--spec FILE] [--unreferenced] [--watch]`.

mod print;
mod watch;

use std::io::Write;
use std::path::{Path, PathBuf};

use specc_ir::{Diagnostic, codes};

use self::print::print;
use crate::check::{CheckOptions, CheckSession};
use crate::cli::CheckArgs;
use crate::db::Database;
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &CheckArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter =
        Reporter::new(args.messages.message_format, env).with_limit(args.messages.error_limit());
    if let Err(d) = check_dir(&args.path) {
        reporter.report(&Files::default(), &d, err);
        return exit::USAGE;
    }
    let spec = spec_path(args);
    let options = CheckOptions {
        unreferenced: args.unreferenced,
    };
    let mut session =
        match CheckSession::open(Database::default(), &args.path, spec.as_deref(), options) {
            Ok(session) => session,
            Err(e) => {
                reporter.report(&Files::default(), &e.0, err);
                return exit::USAGE;
            }
        };
    let report = session.check();
    print(&mut reporter, session.files(), &report, out, err);
    if args.watch {
        return watch::run(session, &mut reporter, args, out, err);
    }
    reporter.status()
}

/// The spec given, or `PATH/spec.md` when it exists.
fn spec_path(args: &CheckArgs) -> Option<PathBuf> {
    args.spec.clone().or_else(|| {
        let default = args.path.join("spec.md");
        default.is_file().then_some(default)
    })
}

fn check_dir(path: &Path) -> Result<(), Box<Diagnostic>> {
    let shown = path.display();
    let fail = |d: Diagnostic| Err(Box::new(d));
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => fail(
            Diagnostic::new(codes::FILE_NOT_FOUND, format!("`{shown}` does not exist")).with_help(
                "name the directory to check; it is read relative to the current directory",
            ),
        ),
        Err(e) => fail(
            Diagnostic::new(codes::IO_ERROR, format!("cannot read `{shown}`: {e}"))
                .with_help("check the directory's permissions"),
        ),
        Ok(m) if !m.is_dir() => fail(
            Diagnostic::new(codes::NOT_A_FILE, format!("`{shown}` is not a directory"))
                .with_help("`specc check` takes the root of a tree, e.g. `specc check .`"),
        ),
        Ok(_) => Ok(()),
    }
}
