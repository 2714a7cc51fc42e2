//! Acceptance: after a worker's `done`, its task's acceptance commands and the spec's test
//! blocks for the requirements it covers run on the checkout, through the runner. A check
//! fails on a non-zero exit, a signal or its timeout.
//! design: runtime.acceptance

use std::time::{Duration, Instant};

use specc_sandbox::{CommandResult, CommandSpec, Runners, block_script};

use super::budget::OverBudget;
use super::references::Unreferenced;
use crate::tools::Toolbox;

/// One check to run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Check {
    /// Where it comes from: `task acceptance #1`, or the spec node and line.
    pub name: String,
    /// The check as its author wrote it (a spec block, an acceptance entry) or as specc
    /// made it.
    pub script: String,
    /// How `script` runs (design: runtime.acceptance).
    #[serde(default)]
    pub shell: Shell,
    /// The spec section whose test block it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Why it runs for information only in this attempt: the section's other tasks have not
    /// all landed, so this landing does not complete the section (design:
    /// runtime.section-checks). `None`: it gates the landing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub informs: Option<String>,
    /// An adopted project's test command: a failure the task's base shares does not gate
    /// (`baseline.rs`, design: driver.adopt).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baseline: bool,
}

/// How a check's script runs. A spec's `sh` block runs with `-e` and a `bash` block with
/// `-e -o pipefail`, as CI systems run a step: the first failing line (or pipe stage) fails
/// the check. An acceptance entry runs by bash with `-e -o pipefail` too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shell {
    /// `sh -c SCRIPT` as it stands: specc's own checks and a declared runner's command line.
    #[default]
    Plain,
    /// `sh -e`.
    Errexit,
    /// `bash -e -o pipefail`: a spec's `bash` block and an acceptance entry.
    StrictBash,
    /// `bash -o pipefail`: an acceptance entry in a journal written before entries ran with
    /// `-e` (a resumed build's follow-ups keep the shell they were journaled with).
    Pipefail,
}

impl Shell {
    /// The script the runner's `sh -c` is given.
    pub fn command(self, script: &str) -> String {
        match self {
            Shell::Plain => script.to_owned(),
            Shell::Errexit => format!("set -e\n{script}"),
            Shell::StrictBash => bash("-eo pipefail", script),
            Shell::Pipefail => bash("-o pipefail", script),
        }
    }
}

impl Check {
    /// The shell script that runs a spec test block in `runner`'s language — a runner of
    /// specc.toml's `[runners]` first, then the built-in ones — or `None` for a runner specc
    /// cannot run.
    pub fn from_block(name: String, runner: &str, code: &str, runners: &Runners) -> Option<Check> {
        // A declared runner first; `sh` and `bash` get the block as written, another
        // built-in one reads it on standard input, as a template without `{file}` does.
        let (script, shell) = match (runners.get(runner), runner) {
            (Some(template), _) => (block_script(template, code), Shell::Plain),
            (None, "sh") => (code.to_owned(), Shell::Errexit),
            (None, "bash") => (code.to_owned(), Shell::StrictBash),
            (None, "python" | "python3") => (block_script("python3 -", code), Shell::Plain),
            (None, "node" | "js" | "javascript") => (block_script("node -", code), Shell::Plain),
            (None, _) => return None,
        };
        Some(Check {
            name,
            script,
            shell,
            section: None,
            informs: None,
            baseline: false,
        })
    }

    /// This check as the test block of spec section `node`.
    pub fn of_section(self, node: &str) -> Check {
        Check {
            section: Some(node.to_owned()),
            ..self
        }
    }

    /// A check specc made itself, run by `sh -c` as it stands.
    pub(crate) fn plain(name: String, script: String) -> Check {
        Check {
            name,
            script,
            shell: Shell::Plain,
            section: None,
            informs: None,
            baseline: false,
        }
    }

    /// The task's `n`th acceptance entry (from 1), run by bash with `-o pipefail`, so a
    /// failing stage of a pipe fails the check.
    pub fn acceptance(n: usize, entry: &str) -> Check {
        Check {
            name: format!("acceptance #{n}"),
            script: entry.to_owned(),
            shell: Shell::StrictBash,
            section: None,
            informs: None,
            baseline: false,
        }
    }
}

/// A script for `sh -c` that runs `script` by bash with `options`, as an argument rather
/// than a here-document so that the check's standard input is left alone.
fn bash(options: &str, script: &str) -> String {
    format!(
        "exec bash {options} -c {} specc-check",
        single_quoted(script)
    )
}

/// `text` as one single-quoted shell word.
fn single_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// One check's outcome.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct CheckResult {
    pub name: String,
    pub result: CommandResult,
    /// Why it ran for information only (it does not gate this landing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub informs: Option<String>,
}

impl CheckResult {
    /// Whether it keeps the work from landing: a gating check that failed.
    fn fails(&self) -> bool {
        self.informs.is_none() && !self.result.success()
    }
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub(crate) struct Report {
    /// Paths outside the write scope that were restored to the base before the checks ran,
    /// so they checked what would land.
    pub restored: Vec<String>,
    pub results: Vec<CheckResult>,
    /// The covered requirements no file of the write scope references (after `done`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub references: Option<Unreferenced>,
    /// Evidence that the attempt weakened its checks (design: runtime.ratchet).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<String>,
    /// Files the work would grow past the line budget (design: runtime.landing-refusals).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub over_budget: Vec<OverBudget>,
}

impl Report {
    pub(crate) fn passed(&self) -> bool {
        !self.results.iter().any(CheckResult::fails)
            && self.references.is_none()
            && self.weakened.is_empty()
            && self.over_budget.is_empty()
    }

    /// The failed checks with their (capped) output, for the worker and the summary.
    pub(crate) fn failures(&self) -> String {
        self.results
            .iter()
            .filter(|r| r.fails())
            .map(|r| format!("check `{}`: {}", r.name, r.result.report()))
            .chain(self.references.as_ref().map(Unreferenced::failure))
            .chain((!self.weakened.is_empty()).then(|| weakened_failure(&self.weakened)))
            .chain(self.over_budget.iter().map(OverBudget::failure))
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    /// One line: which checks failed and how.
    pub(crate) fn summary(&self) -> String {
        let failed: Vec<String> = self
            .results
            .iter()
            .filter(|r| r.fails())
            .map(|r| {
                let report = r.result.report();
                let how = report.lines().next().unwrap_or_default();
                format!("`{}` ({how})", r.name)
            })
            .chain(self.references.as_ref().map(|u| {
                format!(
                    "`requirement references` ({} not referenced)",
                    u.missing.join(", ")
                )
            }))
            .chain(
                (!self.weakened.is_empty())
                    .then(|| format!("`checks weakened` ({})", self.weakened.join("; "))),
            )
            .chain(self.over_budget.iter().map(|o| {
                format!(
                    "`line budget` ({}: {} lines, over {})",
                    o.path, o.lines, o.budget
                )
            }))
            .collect();
        format!("acceptance failed: {}", failed.join(", "))
    }
}

impl Report {
    /// The checks that ran for information only and failed, with their output and why they
    /// do not gate this landing (empty when there are none).
    pub(crate) fn informed(&self) -> String {
        let failed: Vec<String> = self
            .results
            .iter()
            .filter(|r| !r.result.success())
            .filter_map(|r| {
                let why = r.informs.as_deref()?;
                Some(format!("check `{}` ({why}): {}", r.name, r.result.report()))
            })
            .collect();
        if failed.is_empty() {
            return String::new();
        }
        format!(
            "For information, these checks of your sections failed; they do not gate this \
             landing, but they gate the landing that completes their section, so your part \
             must not be what fails them:\n{}",
            failed.join("\n\n")
        )
    }
}

/// What the worker is told when it weakened its checks.
fn weakened_failure(evidence: &[String]) -> String {
    format!(
        "check `checks weakened`: the checks pass, but only because this attempt weakened them:\n- {}\nPut the tests and the checks' files back as they were at your base and make the code pass them. Only a task whose instructions say a test goes may remove it; if one must go and yours do not say so, call `give_up` with the reason, and the planner decides.",
        evidence.join("\n- ")
    )
}

/// Runs every check in the checkout of `tools`, with its runner and limits, in order (all
/// of them, so the worker sees every failure), within `left` of the attempt's wall clock.
/// `round` numbers the logs.
pub(crate) async fn run(tools: &Toolbox, checks: &[Check], round: u32, left: Duration) -> Report {
    let deadline = Instant::now() + left;
    let mut report = Report::default();
    if !checks.is_empty() {
        tools.tracked.ran_command();
    }
    let git = match checks.is_empty() {
        true => Vec::new(),
        false => tools.git_view().await,
    };
    for (i, c) in checks.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        let result = tools
            .runner
            .run(CommandSpec {
                script: c.shell.command(&c.script),
                dir: tools.root.clone(),
                read_only: git.clone(),
                timeout: tools
                    .limits
                    .timeout
                    .min(left)
                    .max(Duration::from_millis(100)),
                output_cap: tools.limits.output_cap,
                env: Vec::new(),
                log: tools.logs.join(format!("acceptance-{round}-{}.log", i + 1)),
                home: None,
            })
            .await;
        report.results.push(CheckResult {
            name: c.name.clone(),
            result,
            informs: c.informs.clone(),
        });
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shell_wraps_the_script_as_written() {
        assert_eq!(Shell::Plain.command("a\nb"), "a\nb");
        assert_eq!(Shell::Errexit.command("a\nb"), "set -e\na\nb");
        assert_eq!(
            Shell::StrictBash.command("echo 'it''s' | cat"),
            "exec bash -eo pipefail -c 'echo '\\''it'\\'''\\''s'\\'' | cat' specc-check"
        );
        assert_eq!(
            Shell::Pipefail.command("x"),
            "exec bash -o pipefail -c 'x' specc-check"
        );
        let r = Runners::default();
        let sh = Check::from_block("c".into(), "sh", "true", &r).expect("sh");
        assert_eq!((sh.script.as_str(), sh.shell), ("true", Shell::Errexit));
        let bash = Check::from_block("c".into(), "bash", "true", &r).expect("bash");
        assert_eq!(bash.shell, Shell::StrictBash);
        assert_eq!(Check::acceptance(2, "x").name, "acceptance #2");
        // A check journaled before the field existed reads as plain.
        let old: Check = serde_json::from_str(r#"{"name":"n","script":"s"}"#).expect("json");
        assert_eq!(old.shell, Shell::Plain);
    }
}
