//! `specc adopt [DIR] [--provider …] [--prose] [--refresh]`: take an existing code base in.
//! Scans DIR (packages, languages, tests, tree-sitter outlines of the public surface) and
//! writes a starting `spec.md` — one section per package and per module, the public
//! surface as requirements to keep, the test commands as `sh test` checks, every section
//! listed as adopted in the front matter — and a `specc.toml` whose output is DIR itself
//! (`[build] out = "."`, `adopted = true`). Offline by default: the sections hold only what
//! the scan found; `--prose` asks the planner model to describe each section (and says so
//! in the spec). Never overwrites. `--refresh` rewrites only the `[adopted]` digests of an
//! adopted spec to its current text.
//! design: driver.adopt

use std::io::Write;
use std::path::Path;

use specc_ir::{Diagnostic, codes};

use specc_project::adopt::{prose, refresh, scan, spec};

use crate::cli::{AdoptArgs, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

/// `[build]`'s lines in an adopted project's specc.toml.
const BUILD_LINES: &str = "out = \".\"            # this repository is the output: specc commits on its main\nadopted = true       # `specc adopt` took it in: its main is the base every task starts from";

pub(crate) fn run(args: &AdoptArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let mut fail = |d: Diagnostic, err: &mut dyn Write| {
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let dir = scan::dir_or_here(args.dir.as_ref());
    if !dir.is_dir() {
        let d = Diagnostic::new(
            codes::NOT_A_FILE,
            format!("{} is not a directory", dir.display()),
        )
        .with_help("name the code base to adopt: `specc adopt path/to/repo`");
        return fail(d, err);
    }
    if args.refresh {
        return match refresh::refresh(&dir.join("spec.md")) {
            Ok(n) => {
                let _ = writeln!(
                    out,
                    "recorded the digests of {n} adopted sections in {}",
                    dir.join("spec.md").display()
                );
                exit::OK
            }
            Err(d) => fail(*d, err),
        };
    }
    let existing: Vec<&str> = ["spec.md", "specc.toml"]
        .into_iter()
        .filter(|f| dir.join(f).exists())
        .collect();
    if !existing.is_empty() {
        let d = Diagnostic::new(
            codes::IO_ERROR,
            format!("{} already holds {}: nothing was written", dir.display(), existing.join(" and ")),
        )
        .with_help("move them aside to adopt again, or `specc adopt --refresh` to re-record an adopted spec's digests");
        return fail(d, err);
    }
    let preset = match super::init::preset(&args.provider) {
        Ok(p) => p,
        Err(why) => return fail(Diagnostic::new(codes::INVALID_CONFIG, why.to_string()), err),
    };
    let packages = scan::scan(&dir);
    let config = super::init::config_text(&preset, Some(BUILD_LINES));
    let title = title(&dir, &packages);
    let (prose, mode) = if args.prose {
        match prose::ask(&title, &packages, &config, &dir, env.models.as_ref()) {
            Ok((prose, model)) => (
                prose,
                format!(
                    "the prose of each section was written by the planner model `{model}` from the scan, not checked by anyone: read it"
                ),
            ),
            Err(d) => return fail(*d, err),
        }
    } else {
        (
            spec::Prose::new(),
            "offline: the sections hold what the scan found; their prose is yours to write"
                .to_owned(),
        )
    };
    let text = spec::with_front_matter(&spec::body(&title, &packages, &prose, &mode));
    for (name, body) in [("spec.md", text.as_str()), ("specc.toml", config.as_str())] {
        if let Err(e) = write_new(&dir.join(name), body) {
            return fail(
                Diagnostic::new(
                    codes::IO_ERROR,
                    format!("{}: {e}", dir.join(name).display()),
                ),
                err,
            );
        }
    }
    let git_note = exclude_state(&dir);
    let _ = say(out, &dir, &packages, git_note.as_deref());
    exit::OK
}

/// The spec's title: the one package's name, or the directory's.
fn title(dir: &Path, packages: &[scan::Package]) -> String {
    match packages {
        [one] => one.name.clone(),
        _ => dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "project".to_owned()),
    }
}

/// Writes a new file; an existing one is an error (never replaced).
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

/// Keeps `.specc/` (the build's state, inside the adopted repository) out of git's view,
/// in the repository's own `info/exclude`, never in a tracked file. Returns what the user
/// must know about the repository, if anything.
fn exclude_state(dir: &Path) -> Option<String> {
    let git = |args: &[&str]| specc_vcs::git::read(dir, args).map(|s| s.trim().to_owned());
    let Some(top) = git(&["rev-parse", "--show-toplevel"]) else {
        return Some(
            "it is not a git repository: `git init -b main`, commit the code, then build"
                .to_owned(),
        );
    };
    let here = dir.canonicalize().ok();
    if here.as_deref() != Some(Path::new(&top)) {
        return Some(format!(
            "the repository's top is {top}: adopt that directory, which the build commits in"
        ));
    }
    let exclude = git(&["rev-parse", "--git-path", "info/exclude"]).map(|p| dir.join(p))?;
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    if !current.lines().any(|l| l.trim() == "/.specc/") {
        let _ = std::fs::create_dir_all(exclude.parent()?);
        let mut text = current;
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("# specc's build state (specc adopt)\n/.specc/\n");
        let _ = std::fs::write(&exclude, text);
    }
    match git(&["symbolic-ref", "--short", "HEAD"]).as_deref() {
        Some("main") => None,
        Some(branch) => Some(format!(
            "specc builds on branch `main`, and this repository is on `{branch}`: `git branch -m {branch} main` (or make a `main`)"
        )),
        None => Some("HEAD is detached: check out a branch `main`".to_owned()),
    }
}

/// What was written and found, and the next steps.
fn say(
    out: &mut dyn Write,
    dir: &Path,
    packages: &[scan::Package],
    git_note: Option<&str>,
) -> std::io::Result<()> {
    let spec = dir.join("spec.md");
    writeln!(out, "wrote {}", spec.display())?;
    writeln!(out, "wrote {}", dir.join("specc.toml").display())?;
    for p in packages {
        let items: usize = p.modules.iter().map(|m| m.items.len()).sum();
        writeln!(
            out,
            "  {} `{}`: {} modules, {items} public items, {} test files, tests: {}",
            p.language,
            p.name,
            p.modules.len(),
            p.tests.len(),
            p.test_command.as_deref().unwrap_or("none found")
        )?;
    }
    if let Some(note) = git_note {
        writeln!(out, "note: {note}")?;
    }
    writeln!(out)?;
    writeln!(out, "next:")?;
    writeln!(
        out,
        "  git -C {} add spec.md specc.toml && git -C {} commit -m 'adopt with specc'",
        dir.display(),
        dir.display()
    )?;
    writeln!(
        out,
        "  specc build {}       # up to date: the code is there, nothing is planned",
        spec.display()
    )?;
    writeln!(
        out,
        "  (add a section to the spec, commit it, and build again: only that section is built)"
    )
}
