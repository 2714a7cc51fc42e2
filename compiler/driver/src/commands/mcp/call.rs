//! A tool call's arguments, checked and turned into what to run: a specc command line, or
//! one of the tools `specc mcp` answers itself (the outline, a node, following a build).
//! Paths stay inside the project root.
//! design: driver.mcp

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use serde_json::{Map, Value};

/// What a tool call runs.
pub(super) enum Call {
    /// A specc command, its output the answer.
    Command(Vec<OsString>),
    /// The spec's outline, from its Intent IR.
    Outline(Vec<OsString>),
    /// One node of the spec, from its Intent IR.
    Node { argv: Vec<OsString>, id: String },
    /// A build to start (`spec` names it for the one-at-a-time rule).
    Start {
        argv: Vec<OsString>,
        spec: PathBuf,
        follow: bool,
    },
    /// Following a started build.
    Follow { build: String, timeout: f64 },
}

/// Arguments the tool does not take, or of the wrong kind: a protocol error (invalid
/// params), not a tool's failure.
#[derive(Debug)]
pub(super) struct BadArgs(pub(super) String);

/// What `tool` runs with `args`, in the project at `root`.
/// Without `allow_spend`, a preview asks no model unless told to (design: driver.mcp).
pub(super) fn call(
    tool: &str,
    args: &Map<String, Value>,
    root: &Path,
    allow_spend: bool,
) -> Result<Call, BadArgs> {
    let a = Args { args, root };
    let spec = || a.spec();
    let json = ["--format", "json"];
    let command = |parts: &[&str], extra: Vec<OsString>| {
        let mut argv: Vec<OsString> = std::iter::once("specc")
            .chain(parts.iter().copied())
            .map(OsString::from)
            .collect();
        argv.extend(extra);
        argv
    };
    Ok(match tool {
        "specc_preview" => {
            let provider = a.choice("provider", &["config", "replay", "outline"])?;
            let mut argv = command(&["build"], vec![spec()?.into()]);
            argv.extend(["--dry-run", "--format", "json", "--provider"].map(OsString::from));
            let default = if allow_spend { "config" } else { "outline" };
            argv.push(provider.unwrap_or(default).into());
            Call::Command(argv)
        }
        "specc_status" => Call::Command(command(&["status"], vec![spec()?.into()]).with(&json)),
        "specc_show" => Call::Command(show(&a, command(&["show"], Vec::new()))?),
        "specc_cost" => {
            let state = specc_project::spec_dir(Some(&spec()?))
                .join(".specc")
                .join("state.db");
            Call::Command(command(&["cost", "--state"], vec![state.into()]).with(&json))
        }
        "specc_trace" => Call::Command(command(&["trace"], vec![spec()?.into()]).with(&json)),
        "specc_drift" => Call::Command(command(&["drift"], vec![spec()?.into()]).with(&json)),
        "specc_check" => {
            let path = match a.string("path")? {
                Some(p) => a.inside(p)?,
                None => root.to_path_buf(),
            };
            let mut argv = command(&["check"], vec![path.into()]);
            argv.extend(["--message-format", "json", "--spec"].map(OsString::from));
            argv.push(spec()?.into());
            Call::Command(argv)
        }
        "specc_explain" => {
            let code = a.string("code")?.ok_or_else(|| missing("code"))?;
            Call::Command(command(&["explain", code], Vec::new()))
        }
        "specc_outline" => Call::Outline(intent(spec()?)),
        "specc_node" => {
            let id = a.string("id")?.ok_or_else(|| missing("id"))?.to_owned();
            Call::Node {
                argv: intent(spec()?),
                id,
            }
        }
        "specc_follow" => Call::Follow {
            build: a
                .string("build")?
                .ok_or_else(|| missing("build"))?
                .to_owned(),
            timeout: a.number("timeout_seconds")?.unwrap_or(600.0),
        },
        "specc_build" | "specc_approve" => start(tool, &a)?,
        other => return Err(BadArgs(format!("no tool `{other}`"))),
    })
}

/// `specc show TASK SPEC --format json` with its options, after `argv` (`specc show`).
fn show(a: &Args<'_>, mut argv: Vec<OsString>) -> Result<Vec<OsString>, BadArgs> {
    let task = a.string("task")?.ok_or_else(|| missing("task"))?;
    argv.push(task.into());
    argv.push(a.spec()?.into());
    argv.extend(["--format", "json"].map(OsString::from));
    if let Some(n) = a.positive("attempt")? {
        argv.extend(["--attempt".into(), n.to_string().into()]);
    }
    if a.flag("full")? {
        argv.push("--full".into());
    }
    Ok(argv)
}

/// A build (`specc_build`) or the approved plan's run (`specc_approve`) to start.
fn start(tool: &str, a: &Args<'_>) -> Result<Call, BadArgs> {
    let spec = a.spec()?;
    let verb = if tool == "specc_build" {
        "build"
    } else {
        "approve"
    };
    let mut argv: Vec<OsString> = vec!["specc".into(), verb.into(), spec.clone().into()];
    if let Some(p) = a.choice("provider", &["config", "replay"])? {
        argv.extend(["--provider".into(), p.into()]);
    }
    Ok(Call::Start {
        argv,
        spec,
        follow: a.flag("follow")?,
    })
}

/// The Intent IR of `spec` as JSON.
fn intent(spec: PathBuf) -> Vec<OsString> {
    let mut argv: Vec<OsString> = ["specc", "plan"].map(OsString::from).to_vec();
    argv.push(spec.into());
    argv.extend(["--emit", "intent", "--format", "json"].map(OsString::from));
    argv
}

fn missing(name: &str) -> BadArgs {
    BadArgs(format!("`{name}` is required"))
}

trait With {
    fn with(self, more: &[&str]) -> Self;
}

impl With for Vec<OsString> {
    fn with(mut self, more: &[&str]) -> Self {
        self.extend(more.iter().map(OsString::from));
        self
    }
}

/// A call's arguments, read by name and kind.
struct Args<'a> {
    args: &'a Map<String, Value>,
    root: &'a Path,
}

impl Args<'_> {
    fn string(&self, name: &str) -> Result<Option<&str>, BadArgs> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(BadArgs(format!("`{name}` must be a string"))),
        }
    }

    fn flag(&self, name: &str) -> Result<bool, BadArgs> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(BadArgs(format!("`{name}` must be true or false"))),
        }
    }

    fn number(&self, name: &str) -> Result<Option<f64>, BadArgs> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x >= 0.0 && x.is_finite() => Ok(Some(x)),
                _ => Err(BadArgs(format!("`{name}` must be a number of at least 0"))),
            },
            Some(_) => Err(BadArgs(format!("`{name}` must be a number"))),
        }
    }

    fn positive(&self, name: &str) -> Result<Option<u32>, BadArgs> {
        match self.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(n) if n >= 1 => Ok(Some(n)),
                _ => Err(BadArgs(format!(
                    "`{name}` must be a whole number of at least 1"
                ))),
            },
        }
    }

    fn choice<'c>(&self, name: &str, of: &[&'c str]) -> Result<Option<&'c str>, BadArgs> {
        let Some(s) = self.string(name)? else {
            return Ok(None);
        };
        of.iter()
            .find(|c| **c == s)
            .copied()
            .map(Some)
            .ok_or_else(|| BadArgs(format!("`{name}` must be one of {}", of.join(", "))))
    }

    /// The spec, inside the root [default: spec.md].
    fn spec(&self) -> Result<PathBuf, BadArgs> {
        self.inside(self.string("spec")?.unwrap_or("spec.md"))
    }

    /// `rel` under the root: a relative path that does not climb out of it.
    fn inside(&self, rel: &str) -> Result<PathBuf, BadArgs> {
        let p = Path::new(rel);
        let climbs = p
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
        if climbs || rel.is_empty() {
            return Err(BadArgs(format!(
                "`{rel}` is not a path inside the project (relative, without `..`)"
            )));
        }
        let joined = self.root.join(p);
        // Nor through a link: the nearest part of it that exists is under the root.
        let existing = joined.ancestors().find_map(|a| a.canonicalize().ok());
        if existing.is_some_and(|e| !e.starts_with(self.root)) {
            return Err(BadArgs(format!(
                "`{rel}` leads out of the project through a link"
            )));
        }
        Ok(joined)
    }
}
