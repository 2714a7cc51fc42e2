//! The `[eval]` table of specc.toml:
//!
//! ```toml
//! [eval]
//! command = "cargo test --offline --test hidden"   # run in the eval's checkout, sandboxed
//! tests = "hidden"             # beside specc.toml; copied into the eval's checkout only
//! into = "tests"               # where its files go in the checkout (default: `tests`' own path)
//! every = { merges = 2, minutes = 10 }   # during a build; either or both (default: 10 merges)
//! format = "cargo"             # cargo, pytest, tap, junit or auto (the default)
//! output = "report.xml"        # a file the command writes, read instead of its stdout
//! timeout_seconds = 600
//! ```
//!
//! Unknown keys are refused, so a typo is not silently "no eval".
//! design: eval.config

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use specc_passes::eval::Format;

/// How often a build evaluates its head: after this many landings, or this much time,
/// whichever comes first (an evaluation already running is never started twice).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Every {
    pub merges: Option<u32>,
    pub minutes: Option<f64>,
}

/// `[eval]`, resolved against the directory of specc.toml.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalConfig {
    pub command: String,
    /// The hidden tests: an absolute directory.
    pub tests: PathBuf,
    /// Where the tests' files go, relative to the checkout's root.
    pub into: PathBuf,
    pub every: Every,
    pub format: Format,
    /// A file in the checkout the command writes its results to (JUnit XML, say).
    pub output: Option<PathBuf>,
    pub timeout: Duration,
}

#[derive(Deserialize)]
struct File {
    eval: Option<Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    command: String,
    tests: PathBuf,
    into: Option<PathBuf>,
    every: Option<EveryTable>,
    format: Option<String>,
    output: Option<PathBuf>,
    timeout_seconds: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EveryTable {
    merges: Option<u32>,
    minutes: Option<f64>,
}

/// Why `[eval]` was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum EvalConfigError {
    /// Not TOML, or a key `[eval]` does not have (the parser's message).
    Toml(String),
    EmptyCommand,
    /// A path (`into`, `output`) that leaves the checkout: the key as the message names it.
    Outside {
        key: &'static str,
        path: PathBuf,
    },
    /// A format specc does not read.
    Format(String),
    /// `every` out of range.
    Every,
    /// `every` with neither merges nor minutes.
    EveryEmpty,
    /// A timeout of 0.
    Timeout,
}

impl std::fmt::Display for EvalConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalConfigError::Toml(why) => write!(f, "{why}"),
            EvalConfigError::EmptyCommand => write!(f, "[eval] command is empty"),
            EvalConfigError::Outside { key, path } => write!(
                f,
                "[eval] {key} `{}` must be a relative path inside the checkout, without `..`",
                path.display()
            ),
            EvalConfigError::Format(name) => write!(
                f,
                "[eval] format `{name}` is not one of cargo, pytest, tap, junit, auto"
            ),
            EvalConfigError::Every => write!(
                f,
                "[eval] every: merges must be above 0, minutes above 0 and at most a year (525600)"
            ),
            EvalConfigError::EveryEmpty => write!(f, "[eval] every needs merges, minutes or both"),
            EvalConfigError::Timeout => write!(f, "[eval] timeout_seconds must be above 0"),
        }
    }
}

impl std::error::Error for EvalConfigError {}

impl EvalConfig {
    /// The `[eval]` table of `text` (specc.toml, in directory `dir`), if it has one.
    pub fn parse(text: &str, dir: &Path) -> Result<Option<EvalConfig>, EvalConfigError> {
        let file: File = toml::from_str(text).map_err(|e| EvalConfigError::Toml(e.to_string()))?;
        let Some(t) = file.eval else {
            return Ok(None);
        };
        if t.command.trim().is_empty() {
            return Err(EvalConfigError::EmptyCommand);
        }
        let tests = if t.tests.is_absolute() {
            t.tests.clone()
        } else {
            dir.join(&t.tests)
        };
        let into_given = t.into.is_some();
        let into = match t.into {
            Some(into) => into,
            None if t.tests.is_relative() => t.tests.clone(),
            None => PathBuf::from(t.tests.file_name().unwrap_or_default()),
        };
        inside(
            if into_given {
                "into"
            } else {
                "into (by default, the path of `tests`)"
            },
            &into,
        )?;
        if let Some(output) = &t.output {
            inside("output", output)?;
        }
        let format = match t.format.as_deref() {
            None => Format::Auto,
            Some(name) => {
                Format::parse(name).ok_or_else(|| EvalConfigError::Format(name.to_owned()))?
            }
        };
        let every = match t.every {
            None => Every {
                merges: Some(10),
                minutes: None,
            },
            Some(e) => {
                // A year at most: a finite clock the runtime can add to an instant.
                if e.merges == Some(0)
                    || e.minutes
                        .is_some_and(|m| !m.is_finite() || m <= 0.0 || m > 525_600.0)
                {
                    return Err(EvalConfigError::Every);
                }
                if e.merges.is_none() && e.minutes.is_none() {
                    return Err(EvalConfigError::EveryEmpty);
                }
                Every {
                    merges: e.merges,
                    minutes: e.minutes,
                }
            }
        };
        Ok(Some(EvalConfig {
            command: t.command,
            tests,
            into,
            every,
            format,
            output: t.output,
            timeout: match t.timeout_seconds {
                Some(0) => return Err(EvalConfigError::Timeout),
                Some(s) => Duration::from_secs(s),
                None => Duration::from_secs(600),
            },
        }))
    }

    /// Why `path`, a directory a sandboxed command may read, would show it the hidden tests.
    /// Both are resolved first (links, `..`), where they exist.
    pub fn exposed_by(&self, path: &Path) -> Option<String> {
        let resolve = |p: &Path| {
            std::fs::canonicalize(p)
                .or_else(|_| std::path::absolute(p))
                .unwrap_or_else(|_| p.to_path_buf())
        };
        let (tests, readable) = (resolve(&self.tests), resolve(path));
        (tests.starts_with(&readable) || readable.starts_with(&tests)).then(|| {
            format!(
                "the sandbox lets commands read {}, which would show the workers the eval tests in {}",
                path.display(),
                tests.display()
            )
        })
    }
}

/// A relative path that stays inside the checkout.
fn inside(key: &'static str, path: &Path) -> Result<(), EvalConfigError> {
    let plain = path
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if plain && path.components().any(|c| matches!(c, Component::Normal(_))) {
        Ok(())
    } else {
        Err(EvalConfigError::Outside {
            key,
            path: path.to_path_buf(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<EvalConfig>, String> {
        EvalConfig::parse(text, Path::new("/p")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_full_table_resolves_against_the_config_directory() {
        let c = parse(
            "[eval]\ncommand = \"cargo test\"\ntests = \"hidden\"\ninto = \"tests\"\n\
             every = { merges = 2, minutes = 1.5 }\nformat = \"cargo\"\ntimeout_seconds = 9\n",
        )
        .expect("parses")
        .expect("has eval");
        assert_eq!(c.tests, Path::new("/p/hidden"));
        assert_eq!(c.into, Path::new("tests"));
        assert_eq!(c.every.merges, Some(2));
        assert_eq!(c.every.minutes, Some(1.5));
        assert_eq!(c.format, Format::Cargo);
        assert_eq!(c.timeout, Duration::from_secs(9));
    }

    #[test]
    fn defaults_and_absence() {
        assert_eq!(parse("[budget]\ndollars = 1\n"), Ok(None));
        let c = parse("[eval]\ncommand = \"t\"\ntests = \"eval/tests\"\n")
            .expect("parses")
            .expect("has eval");
        assert_eq!(c.into, Path::new("eval/tests"));
        assert_eq!(c.format, Format::Auto);
        assert_eq!(c.every.merges, Some(10));
    }

    #[test]
    fn typos_and_escapes_are_refused() {
        for bad in [
            "[eval]\ncommand = \"t\"\ntests = \"h\"\nevery_merges = 3\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\nformat = \"nunit\"\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\ninto = \"../up\"\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\ninto = \"/abs\"\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\nevery = { merges = 0 }\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\nevery = {}\n",
            "[eval]\ncommand = \"  \"\ntests = \"h\"\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\nevery = { minutes = inf }\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\nevery = { minutes = 1e9 }\n",
            "[eval]\ncommand = \"t\"\ntests = \"h\"\ntimeout_seconds = 0\n",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_readable_directory_around_or_inside_the_tests_exposes_them() {
        let c = parse("[eval]\ncommand = \"t\"\ntests = \"hidden\"\n")
            .expect("parses")
            .expect("has eval");
        assert!(c.exposed_by(Path::new("/p")).is_some());
        assert!(c.exposed_by(Path::new("/p/hidden/sub")).is_some());
        assert!(c.exposed_by(Path::new("/p/hiddenother")).is_none());
        assert!(c.exposed_by(Path::new("/usr/lib")).is_none());
    }
}
