//! The worker's tools: JSON-schema definitions the model sees, and their implementations
//! over the task's checkout. A malformed call (unknown tool, arguments that do not fit the
//! schema) is answered with an error the model can act on, never a crash. Writes outside
//! the write scope, into `.specc/` or `.git/`, or through a symlink are refused.
//! One file per family: `view` (read, list, search), `edit` (edit, write), `run`,
//! `notes` (note, flag_big_file); `done` and `give_up` end the attempt.
//! design: runtime.tools

mod breaking;
mod edit;
mod notes;
mod run;
mod view;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::json;
use specc_llm::{Tool, ToolCall};

use crate::runner::{CommandLimits, Runner};
use crate::scope::Scope;

pub use notes::GUIDE;
pub use view::SKIPPED as SKIPPED_DIRS;

/// Every file under `root` (relative paths), without build output or specc's state.
pub fn walk_files(root: &Path, out: &mut Vec<String>) {
    view::walk(root, root, out);
}

/// The tools of one attempt, bound to its checkout.
pub struct Toolbox {
    pub root: PathBuf,
    pub scope: Scope,
    pub runner: Arc<dyn Runner>,
    /// For `run` commands and acceptance checks alike.
    pub limits: CommandLimits,
    /// Where `run` logs go (one file per call).
    pub logs: PathBuf,
    /// The field guide's line budget.
    pub guide_lines: usize,
    /// The attempt's base commit: what is restored outside the write scope before the
    /// acceptance checks run.
    pub base: Base,
    /// What the tools wrote, and whether a command ran. Until one runs, `root` must hold
    /// no link outside `KEPT` (a checkout slot's lease guarantees it): the tools look for
    /// links on a path only once a command ran.
    pub tracked: Arc<crate::slots::Tracked>,
    /// `specc check`'s and `specc pin`'s work, for the `pin` tool.
    pub pins: Option<Arc<dyn crate::revisit::Pins>>,
    /// The attempt's deliberate breaks (`break_scope`).
    pub breaks: std::sync::Mutex<Vec<crate::revisit::Break>>,
    /// Decisions the worker found contradicting each other (`report_contradiction`).
    pub contradictions: std::sync::Mutex<Vec<crate::contradiction::Contradiction>>,
}

/// The attempt's base commit; its files are read from the VCS only if a full comparison
/// is needed (a command ran), once.
pub struct Base {
    pub repo: specc_vcs::Repo,
    pub commit: specc_vcs::object::ObjectId,
    files: tokio::sync::OnceCell<Vec<specc_vcs::FileEntry>>,
}

impl Base {
    pub fn new(repo: specc_vcs::Repo, commit: specc_vcs::object::ObjectId) -> Base {
        Base {
            repo,
            commit,
            files: tokio::sync::OnceCell::new(),
        }
    }

    /// Every file of the base commit.
    pub async fn files(&self) -> std::io::Result<&[specc_vcs::FileEntry]> {
        self.files
            .get_or_try_init(|| async {
                self.repo
                    .files(self.commit)
                    .await
                    .ok_or_else(|| std::io::Error::other("the base commit has no files listing"))
            })
            .await
            .map(Vec::as_slice)
    }
}

/// What a tool call means for the attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// The worker says it is finished.
    Done(String),
    GiveUp(String),
}

/// A tool's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutcome {
    pub text: String,
    pub failed: bool,
    pub control: Control,
    /// A file the worker flagged as too big.
    pub flagged: Option<String>,
}

impl ToolOutcome {
    fn ok(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: text.into(),
            failed: false,
            control: Control::Continue,
            flagged: None,
        }
    }

    fn error(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            text: format!("error: {}", text.into()),
            failed: true,
            control: Control::Continue,
            flagged: None,
        }
    }
}

/// The tools' definitions, as the model sees them.
pub fn definitions() -> std::sync::Arc<[Tool]> {
    // Built once and shared: every turn of every worker sends them.
    static DEFINITIONS: std::sync::LazyLock<std::sync::Arc<[Tool]>> =
        std::sync::LazyLock::new(|| build().into());
    DEFINITIONS.clone()
}

fn build() -> Vec<Tool> {
    let tool = |name: &str, description: &str, parameters: serde_json::Value| Tool {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    let obj = |props: serde_json::Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required});
    vec![
        tool(
            "read",
            "Read a file of the checkout with line numbers, a window at a time.",
            obj(
                json!({"path": {"type": "string"},
                       "start_line": {"type": "integer", "description": "1-based, default 1"},
                       "lines": {"type": "integer", "description": "default 200, at most 1000"}}),
                &["path"],
            ),
        ),
        tool(
            "list",
            "List the files under a directory of the checkout (default: all).",
            obj(json!({"path": {"type": "string"}}), &[]),
        ),
        tool(
            "search",
            "Search the checkout with a regular expression; answers path:line: text.",
            obj(
                json!({"pattern": {"type": "string"}, "path": {"type": "string"}}),
                &["pattern"],
            ),
        ),
        tool(
            "edit",
            "Replace the one exact occurrence of `old` in a file with `new`.",
            obj(
                json!({"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}}),
                &["path", "old", "new"],
            ),
        ),
        tool(
            "write",
            "Write a whole file (created with its directories if missing).",
            obj(
                json!({"path": {"type": "string"}, "content": {"type": "string"},
                       "executable": {"type": "boolean"}}),
                &["path", "content"],
            ),
        ),
        tool(
            "run",
            "Run a shell command in the checkout (sandboxed; output capped).",
            obj(
                json!({"command": {"type": "string"},
                       "timeout_secs": {"type": "integer"}}),
                &["command"],
            ),
        ),
        tool(
            "note",
            "Add a line to the field guide (field-guide/index.md), the notes every agent reads, under a section.",
            obj(
                json!({"text": {"type": "string"}, "section": {"type": "string"}}),
                &["text"],
            ),
        ),
        tool(
            "flag_big_file",
            "Flag a file that is too big to work on: it gets split before it grows further.",
            obj(
                json!({"path": {"type": "string"}, "reason": {"type": "string"}}),
                &["path", "reason"],
            ),
        ),
        tool(
            "break_scope",
            "Only when core code outside your write scope must change for the task: replace the one occurrence of `old` in that file with `new` (at most 20 lines in all), where `new` carries a comment referencing `design: <decision>`, and give the decision its new text and why. The code that relied on the old text is revisited after you land.",
            obj(
                json!({"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"},
                       "why": {"type": "string"}, "decision": {"type": "string"},
                       "decision_text": {"type": "string"}}),
                &["path", "old", "new", "why", "decision", "decision_text"],
            ),
        ),
        tool(
            "pin",
            "Pin the `design:` references on a line of a file in your scope to their decisions' current text (after you revisited the code).",
            obj(
                json!({"path": {"type": "string"}, "line": {"type": "integer"}}),
                &["path", "line"],
            ),
        ),
        tool(
            "report_contradiction",
            "Report two decisions (by id) that contradict each other, and how: the coordinator merges them once you land.",
            obj(
                json!({"a": {"type": "string"}, "b": {"type": "string"},
                       "explanation": {"type": "string"}}),
                &["a", "b", "explanation"],
            ),
        ),
        tool(
            "done",
            "Finish: the task is complete. Its acceptance checks run next.",
            obj(json!({"summary": {"type": "string"}}), &["summary"]),
        ),
        tool(
            "give_up",
            "Stop: the task cannot be done as given. Say why.",
            obj(json!({"reason": {"type": "string"}}), &["reason"]),
        ),
    ]
}

/// The text that names an action for the stuck detector: the tool and its arguments.
pub fn action_key(call: &ToolCall) -> String {
    format!("{} {}", call.name, call.arguments)
}

fn parse<T: DeserializeOwned>(call: &ToolCall) -> Result<T, ToolOutcome> {
    serde_json::from_value(call.arguments.clone()).map_err(|e| {
        let schema = definitions()
            .iter()
            .find(|t| t.name == call.name)
            .map(|t| t.parameters.to_string())
            .unwrap_or_default();
        ToolOutcome::error(format!(
            "the arguments of `{}` do not fit its schema ({e}); the schema is {schema}",
            call.name
        ))
    })
}

#[derive(serde::Deserialize)]
struct Finish {
    #[serde(default, alias = "reason")]
    summary: String,
}

impl Toolbox {
    /// Carries out one call; a command it runs gets at most `left` of the attempt's wall
    /// clock.
    pub async fn call(&self, call: &ToolCall, seq: u32, left: Duration) -> ToolOutcome {
        let outcome = match call.name.as_str() {
            "read" => parse(call).map(|a| view::read(self, a)),
            "list" => parse(call).map(|a| view::list(self, a)),
            "search" => parse(call).map(|a| view::search(self, a)),
            "edit" => parse(call).map(|a| edit::edit(self, a)),
            "write" => parse(call).map(|a| edit::write(self, a)),
            "run" => match parse(call) {
                Ok(a) => Ok(run::run(self, a, seq, left).await),
                Err(e) => Err(e),
            },
            "note" => parse(call).map(|a| notes::note(self, a)),
            "flag_big_file" => parse(call).map(|a| notes::flag(self, a)),
            "break_scope" => parse(call).map(|a| breaking::break_scope(self, a)),
            "pin" => parse(call).map(|a| breaking::pin(self, a)),
            "report_contradiction" => parse(call).map(|a| breaking::contradiction(self, a)),
            "done" => parse::<Finish>(call).map(|a| ToolOutcome {
                text: "finished; the acceptance checks run now".to_owned(),
                failed: false,
                control: Control::Done(a.summary),
                flagged: None,
            }),
            "give_up" => parse::<Finish>(call).map(|a| ToolOutcome {
                text: "stopped".to_owned(),
                failed: false,
                control: Control::GiveUp(a.summary),
                flagged: None,
            }),
            other => Err(ToolOutcome::error(format!(
                "there is no tool `{other}`; the tools are read, list, search, edit, write, run, note, flag_big_file, break_scope, pin, report_contradiction, done and give_up"
            ))),
        };
        outcome.unwrap_or_else(|e| e)
    }

    /// The checkout path of a relative `path` the task may read, or an error for the model.
    fn readable(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        let rel = crate::scope::normalise(path).ok_or_else(|| {
            ToolOutcome::error(format!(
                "`{path}` is not a relative path inside the checkout"
            ))
        })?;
        if crate::scope::reserved(&rel) {
            return Err(ToolOutcome::error(format!(
                "`{rel}` is specc's own state, not part of the code"
            )));
        }
        if let Some(link) = (!self.as_leased(&rel))
            .then(|| symlink_on_path(&self.root, &rel))
            .flatten()
        {
            return Err(ToolOutcome::error(format!(
                "`{link}` is a symbolic link; specc's tools do not follow links"
            )));
        }
        Ok((rel.clone(), self.root.join(&rel)))
    }

    /// Whether the checkout at `rel` is still as its lease made it: no command ran and
    /// `rel` is outside `KEPT`. It then holds no link (a checkout removes them all and the
    /// tools make none) and, until the tools write it, the base's file (design:
    /// perf.orchestration).
    fn as_leased(&self, rel: &str) -> bool {
        let top = rel.split('/').next().unwrap_or_default();
        !self.tracked.ran() && !crate::workspace::KEPT.contains(&top)
    }

    /// [`Toolbox::readable`] for a path that must be a regular file if it exists (a FIFO or
    /// a device would block or misbehave).
    fn readable_file(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        let (rel, full) = self.readable(path)?;
        not_special(&rel, &std::fs::symlink_metadata(&full))?;
        Ok((rel, full))
    }

    /// [`Toolbox::writable`] for a file: a regular file, or nothing yet. The caller is
    /// about to write it, so it is tracked from here (a write that then fails costs only a
    /// comparison). Until the first write, and while no command ran, the checkout holds
    /// the base there: what it held is kept, and the task's change is measured against it
    /// without asking the VCS (design: perf.orchestration).
    fn writable_file(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        use std::os::unix::fs::PermissionsExt as _;
        let (rel, full) = self.writable(path)?;
        let meta = std::fs::symlink_metadata(&full);
        not_special(&rel, &meta)?;
        if self.tracked.wrote(&rel) && self.as_leased(&rel) {
            let before = match &meta {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
                Ok(m) if m.is_file() => std::fs::read(&full)
                    .ok()
                    .map(|b| Some((b, m.permissions().mode() & 0o111 != 0))),
                _ => None,
            };
            if let Some(before) = before {
                self.tracked.before(&rel, before);
            }
        }
        Ok((rel, full))
    }

    /// The changes outside the write scope (other than the field guide) undone, so the
    /// acceptance checks run on what would land: the base plus the task's own changes.
    /// Returns the paths restored or removed. While no command has run, only the tools
    /// wrote, and they write nothing outside the scope: nothing to look at.
    pub async fn restore_outside_scope(&self) -> std::io::Result<Vec<String>> {
        if self.tracked.known().is_some() {
            return Ok(Vec::new());
        }
        let files = self.base.files().await?;
        crate::workspace::restore_outside(&self.root, files, &self.landing_scope())
    }

    /// The breaks so far.
    pub fn breaks(&self) -> Vec<crate::revisit::Break> {
        self.breaks.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// What the attempt may land: its write scope and the files its deliberate breaks
    /// patched.
    pub fn landing_scope(&self) -> Scope {
        let breaks = self.breaks();
        if breaks.is_empty() {
            return self.scope.clone();
        }
        let mut patterns = self.scope.patterns().to_vec();
        for b in breaks {
            patterns.push(b.path);
            patterns.push(b.doc);
        }
        Scope::new(&patterns)
    }

    /// The checkout path of a relative `path` the task may write, or an error that says
    /// what it may write instead.
    fn writable(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        use crate::scope::Denied;
        let rel = crate::scope::normalise(path);
        let allowed = match &rel {
            Some(r) if r == GUIDE => Ok(()),
            Some(r) => self.scope.check(r),
            None => Err(Denied::NotRelative),
        };
        match allowed {
            Ok(()) => self.readable(path),
            Err(Denied::NotRelative) => Err(ToolOutcome::error(format!(
                "`{path}` is not a relative path inside the checkout"
            ))),
            Err(Denied::Reserved) => Err(ToolOutcome::error(format!(
                "`{path}` is inside .specc/ or .git/, which no task writes"
            ))),
            Err(Denied::OutsideScope) => Err(ToolOutcome::error(format!(
                "`{path}` is outside your write scope ({}). Write only there; if the task needs \
                 a change elsewhere, finish with `done` or `give_up` and say what is needed",
                self.scope.patterns().join(", ")
            ))),
        }
    }
}

/// Refuses an existing path that is not a regular file.
fn not_special(rel: &str, meta: &std::io::Result<std::fs::Metadata>) -> Result<(), ToolOutcome> {
    match meta {
        Ok(m) if m.is_dir() => Err(ToolOutcome::error(format!("`{rel}` is a directory"))),
        Ok(m) if !m.is_file() => Err(ToolOutcome::error(format!("`{rel}` is not a regular file"))),
        _ => Ok(()),
    }
}

/// The first part of `rel` below `root` that is a symbolic link, if any.
fn symlink_on_path(root: &Path, rel: &str) -> Option<String> {
    let mut at = root.to_path_buf();
    let mut seen = String::new();
    for part in rel.split('/') {
        at.push(part);
        if !seen.is_empty() {
            seen.push('/');
        }
        seen.push_str(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Some(seen),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}
