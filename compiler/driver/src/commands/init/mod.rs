//! `specc init [DIR] [--provider openai|anthropic|openai-compatible [URL]] [--example]`: a
//! project to start from — a commented `spec.md` (or, with `--example`, RFC 4648's
//! encodings with a hidden test suite), a `specc.toml` with every role the provider needs,
//! prices for the models it names, a budget, `[review]`, `[build]` and the rest commented,
//! and `field-guide/index.md`. It never overwrites: existing files are listed and nothing is
//! written (exit 2). Keys are named by environment variable, never written.
//! design: driver.init

mod presets;

pub(in crate::commands) use self::presets::{Preset, preset};

use std::io::Write;
use std::path::{Path, PathBuf};

use specc_ir::{Diagnostic, codes};

use crate::cli::{InitArgs, MessageFormat};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

const SKELETON: &str = include_str!("skeleton.md");
const GUIDE: &str = include_str!("guide.md");
const CONFIG_HEAD: &str = include_str!("config_head.toml");
const CONFIG_TAIL: &str = include_str!("config_tail.toml");
const EXAMPLE_SPEC: &str = include_str!("../../../../../fixtures/capable/basen/spec.md");
const EXAMPLE_TESTS: &str = include_str!("../../../../../fixtures/capable/basen/hidden/run_tap.py");

const SKELETON_TESTS: &str = include_str!("skeleton_tests.py");

/// What the skeleton's and the example's `[eval]` say of their hidden tests.
const SKELETON_EVAL: &str =
    "# A hidden test suite (`hidden/`, beside this file, never shown to a worker) scores the build
# after every landing; `specc report` draws the series. Replace it with your own.";
const EXAMPLE_EVAL: &str =
    "# The example's hidden tests (RFC 4648's test vectors, errors, the command line), never shown
# to a worker, score the build after every landing; `specc report` draws the series.";

/// `[eval]` with its hidden tests on, under `comment`.
fn eval_table(comment: &str) -> String {
    format!(
        "\n{comment}\n[eval]\ncommand = \"python3 hidden_tests/run_tap.py\"\ntests = \"hidden\"\ninto = \"hidden_tests\"\nevery = {{ merges = 1 }}\nformat = \"tap\"\n"
    )
}

pub(crate) fn run(args: &InitArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut reporter = Reporter::new(MessageFormat::Human, env);
    let fail = |reporter: &mut Reporter, err: &mut dyn Write, d: Diagnostic| {
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let preset = match preset(&args.provider) {
        Ok(p) => p,
        Err(why) => {
            let d = Diagnostic::new(codes::INVALID_CONFIG, why.to_string()).with_help(
                "`--provider openai`, `--provider anthropic`, or `--provider openai-compatible http://127.0.0.1:8080/v1`",
            );
            return fail(&mut reporter, err, d);
        }
    };
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let files = files(&preset, args.example);
    let existing: Vec<String> = files
        .iter()
        .filter(|(rel, _)| dir.join(rel).exists())
        .map(|(rel, _)| rel.clone())
        .collect();
    if !existing.is_empty() {
        let d = Diagnostic::new(
            codes::IO_ERROR,
            format!(
                "{} already holds {}: nothing was written",
                dir.display(),
                existing.join(", ")
            ),
        )
        .with_help("run `specc init` in a new directory (`specc init my-project`), or move those files aside");
        return fail(&mut reporter, err, d);
    }
    for (rel, text) in &files {
        if let Err(e) = write(&dir.join(rel), text) {
            let d = Diagnostic::new(codes::IO_ERROR, format!("{}: {e}", dir.join(rel).display()));
            return fail(&mut reporter, err, d);
        }
    }
    let _ = say(out, &dir, &preset, &files);
    exit::OK
}

/// specc.toml's text for `p`'s models, with `build` in place of the `[build]` table's
/// commented `out` line (what `specc adopt` sets).
pub(in crate::commands) fn config_text(p: &Preset, build: Option<&str>) -> String {
    let tail = match build {
        Some(b) => CONFIG_TAIL.replace(
            "# out = \"out\"          # where the built repository goes (a git repository)",
            b,
        ),
        None => CONFIG_TAIL.to_owned(),
    };
    format!("{CONFIG_HEAD}{}{tail}", p.toml())
}

/// The files `init` writes, relative to the directory, and their text.
fn files(p: &Preset, example: bool) -> Vec<(String, String)> {
    let mut config = config_text(p, None);
    let mut out = Vec::new();
    if example {
        config.push_str(&eval_table(EXAMPLE_EVAL));
        out.push(("spec.md".to_owned(), EXAMPLE_SPEC.to_owned()));
        out.push(("hidden/run_tap.py".to_owned(), EXAMPLE_TESTS.to_owned()));
    } else {
        config.push_str(&eval_table(SKELETON_EVAL));
        out.push(("spec.md".to_owned(), SKELETON.to_owned()));
        out.push(("hidden/run_tap.py".to_owned(), SKELETON_TESTS.to_owned()));
    }
    out.push(("specc.toml".to_owned(), config));
    out.push(("field-guide/index.md".to_owned(), GUIDE.to_owned()));
    // How a person's coding agent works on the project (design: project.agents-md).
    out.push((
        specc_project::agents_md::PATH.to_owned(),
        specc_project::agents_md::PROJECT.to_owned(),
    ));
    out
}

/// Writes a new file, its directories made; an existing one is an error (never replaced).
fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// What was written, and the next steps.
fn say(
    out: &mut dyn Write,
    dir: &Path,
    p: &Preset,
    files: &[(String, String)],
) -> std::io::Result<()> {
    for (rel, _) in files {
        writeln!(out, "wrote {}", dir.join(rel).display())?;
    }
    let spec = dir.join("spec.md");
    writeln!(out)?;
    writeln!(out, "next:")?;
    if let Some(var) = p.key_env {
        writeln!(
            out,
            "  export {var}=…            # your key; specc reads it from the environment"
        )?;
    }
    writeln!(
        out,
        "  specc build {} --dry-run --provider outline   # the plan's shape and cost estimate, free",
        spec.display()
    )?;
    writeln!(
        out,
        "  specc build {} --dry-run                      # the planner's real plan and its estimate",
        spec.display()
    )?;
    writeln!(
        out,
        "  specc build {}                                # build it into {}",
        spec.display(),
        dir.join("out").display()
    )?;
    writeln!(
        out,
        "  specc show TASK {}                            # what one task did",
        spec.display()
    )?;
    writeln!(
        out,
        "  specc report {} --out report.html             # the build over time",
        spec.display()
    )
}
