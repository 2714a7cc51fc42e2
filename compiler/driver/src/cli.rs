//! The command line, as clap sees it.

use std::path::PathBuf;

/// The default `--error-limit`.
pub(crate) const ERROR_LIMIT: usize = 20;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "specc",
    version,
    about = "Compile a prose specification into a working codebase."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Start a project: a commented spec.md, a specc.toml with every role your provider
    /// needs (keys named by environment variable), and a field guide. Never overwrites.
    Init(InitArgs),
    /// Take an existing code base in: write a spec.md (a section per package and module, the
    /// public surface as requirements to keep, the test commands as checks) and a
    /// specc.toml that builds on the code where it is. Offline unless --prose.
    Adopt(AdoptArgs),
    /// Parse a spec and print one of its intermediate representations.
    Plan(PlanArgs),
    /// Build a spec: plan it, run every work task with worker models, integrate their
    /// commits, check the result and export it to `out/` (a git repository).
    Build(BuildArgs),
    /// Run exactly the plan `specc build SPEC --approve plan` saved (what `specc build SPEC
    /// --approve` does), asking the planner nothing.
    Approve(BuildArgs),
    /// Host one build for `specc worker` processes: plan, schedule, integrate and export as
    /// `specc build` does, while workers here or on other machines run the work tasks
    /// (needs SPECC_SERVE_TOKEN).
    Serve(ServeArgs),
    /// Run work tasks for a `specc serve`, in this machine's sandbox, until its build is over
    /// (needs SPECC_SERVE_TOKEN).
    Worker(WorkerArgs),
    /// Check code references to design decisions: unknown ids, stale pins, superseded and
    /// conflicting decisions, decisions that contradict the spec.
    Check(CheckArgs),
    /// Rewrite the pins of references in FILE (or on one line of it) to the current
    /// decisions, once the code has been revisited.
    Pin(PinArgs),
    /// Tokens and dollars spent on models, by role and by model, from the state database.
    Cost(CostArgs),
    /// The latest build of a spec, read-only (also while it runs): tasks by state, running
    /// attempts, cost against the budget, recent commits, failures.
    Status(StatusArgs),
    /// One task's whole story from the journal, read-only (also while the build runs): what
    /// it was told, every model turn and tool call, its checks, what landed and its cost.
    Show(ShowArgs),
    /// Follow every requirement of the spec to the tasks that cover it, the code and the
    /// tests that reference it (`req: ID` comments), and whether those tests passed;
    /// `--fail-under PCT` makes it a CI gate.
    Trace(TraceArgs),
    /// What people changed in the built code since specc built it, per requirement and
    /// decision: references and tests removed, pinned code edited, stale pins, changed
    /// files; `--accept` records an accepted baseline so only new drift is reported.
    Drift(DriftArgs),
    /// Score the build's head (or a commit) against the hidden tests of `[eval]`, in the
    /// sandbox: passed, failed, total and every test's result.
    Eval(EvalArgs),
    /// Draw the eval series of one or more builds as a self-contained HTML page (score,
    /// commits, conflicts, hottest file, packages, tokens and dollars by role over time) and
    /// print a summary.
    Report(ReportArgs),
    /// Print the long explanation of a diagnostic code, or list every code.
    Explain(ExplainArgs),
    /// Serve specc to a coding agent or editor over the Model Context Protocol (stdio):
    /// preview, status, show, cost, trace, drift, check, explain and the spec's text, and
    /// with --allow-spend build and approve.
    Mcp(McpArgs),
    /// Build a suite of specs with a matrix of model configurations (bench.toml), each run
    /// in a folder of its own, and print the table: hidden score, dollars and tokens by role,
    /// calls, attempts, time, per run and per configuration; `--html` draws it. A bench
    /// started again skips the runs that finished.
    Bench(BenchArgs),
    /// Show what the sandbox enforces on this host (`--probe`), or run a command in it
    /// exactly as a worker's `run` would.
    Sandbox(SandboxArgs),
    /// The sandbox helper (specc re-executed); not for people.
    #[command(name = "__sandbox", hide = true)]
    SandboxHelper {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

#[derive(clap::Args, Debug)]
pub(crate) struct SandboxArgs {
    /// Report what this host enforces; exit 0 only when the full sandbox is available.
    #[arg(long, conflicts_with = "command")]
    pub(crate) probe: bool,
    /// The writable root the command runs in [default: the current directory].
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// Seconds before the command's processes are killed.
    #[arg(long, default_value_t = 300)]
    pub(crate) timeout: u64,
    /// The command and its arguments, after `--`.
    #[arg(last = true)]
    pub(crate) command: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct CostArgs {
    /// The state database [default: .specc/state.db].
    #[arg(long, default_value = ".specc/state.db")]
    pub(crate) state: PathBuf,
    /// Only this run's calls.
    #[arg(long)]
    pub(crate) run: Option<String>,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

#[derive(clap::Args, Debug)]
pub(crate) struct StatusArgs {
    /// The spec whose build to show [default: the state in .specc/ here].
    pub(crate) spec: Option<PathBuf>,
    /// How to print it (`prometheus`: the metrics text format, for a textfile collector).
    #[arg(long, value_enum, default_value_t = StatusFormat::Text)]
    pub(crate) format: StatusFormat,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ShowArgs {
    /// The task's id, as the build's progress and `specc status` name it.
    pub(crate) task: String,
    /// The spec whose build to read [default: the state in .specc/ here].
    pub(crate) spec: Option<PathBuf>,
    /// Only this attempt.
    #[arg(long)]
    pub(crate) attempt: Option<u32>,
    /// A run other than the latest one that has the task.
    #[arg(long)]
    pub(crate) run: Option<String>,
    /// Show every text whole instead of capping it.
    #[arg(long)]
    pub(crate) full: bool,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

#[derive(clap::Args, Debug)]
pub(crate) struct TraceArgs {
    /// The spec [default: spec.md here].
    pub(crate) spec: Option<PathBuf>,
    /// The code to follow the requirements into [default: the build's output (`[build] out`,
    /// or out/ beside the spec) if there is one, else the spec's directory].
    #[arg(long)]
    pub(crate) tree: Option<PathBuf>,
    /// The configuration [default: specc.toml beside the spec].
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub(crate) format: TraceFormat,
    /// Exit 1 when any of the three measures is under PCT percent of the binding (MUST and
    /// SHALL) requirements: covered by a task, referenced by code, tested by a passing test;
    /// names the requirements each misses.
    #[arg(long, value_name = "PCT", value_parser = percent)]
    pub(crate) fail_under: Option<f64>,
}

/// A percentage from 0 to 100.
fn percent(s: &str) -> Result<f64, NotAPercent> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(NotAPercent(s.to_owned())),
    }
}

/// A `--fail-under` that is no percentage from 0 to 100.
#[derive(Debug)]
struct NotAPercent(String);

impl std::fmt::Display for NotAPercent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is not a percentage from 0 to 100", self.0)
    }
}

impl std::error::Error for NotAPercent {}

#[derive(clap::Args, Debug)]
pub(crate) struct DriftArgs {
    /// The spec [default: spec.md here].
    pub(crate) spec: Option<PathBuf>,
    /// The built code [default: the build's output, `[build] out` or out/ beside the spec].
    #[arg(long)]
    pub(crate) tree: Option<PathBuf>,
    /// The configuration [default: specc.toml beside the spec].
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = DriftFormat::Text)]
    pub(crate) format: DriftFormat,
    /// Accept the drift found now into specc-drift.json beside the spec: all of it, or that
    /// of the requirements, decisions or paths named.
    /// (`--accept`, or `--accept=R-3,store.wal`).
    #[arg(long, value_name = "ID", num_args = 0..=1, require_equals = true, value_delimiter = ',')]
    pub(crate) accept: Option<Vec<String>>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DriftFormat {
    Text,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TraceFormat {
    Text,
    Json,
    Markdown,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatusFormat {
    Text,
    Json,
    Prometheus,
}

#[derive(clap::Args, Debug)]
pub(crate) struct EvalArgs {
    /// The spec whose build to score [default: the build in .specc/ here].
    pub(crate) spec: Option<PathBuf>,
    /// A commit of the build (its id, or a prefix of at least 4 digits) [default: the head].
    #[arg(long)]
    pub(crate) commit: Option<String>,
    /// specc.toml [default: beside the spec].
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ReportArgs {
    /// The spec whose builds to draw [default: the state in .specc/ here].
    pub(crate) spec: Option<PathBuf>,
    /// State databases to draw runs from (repeatable) [default: the spec's .specc/state.db].
    #[arg(long)]
    pub(crate) state: Vec<PathBuf>,
    /// Only these runs (repeatable) [default: every run with a series].
    #[arg(long)]
    pub(crate) run: Vec<String>,
    /// Where the HTML page goes.
    #[arg(long, default_value = "report.html")]
    pub(crate) out: PathBuf,
    /// List the runs that have a series, and draw nothing.
    #[arg(long)]
    pub(crate) list: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct CheckArgs {
    /// The tree to check; design documents are read from its `design-docs/`.
    #[arg(default_value = ".")]
    pub(crate) path: PathBuf,
    /// The spec whose `Decision:` quotes bind the design [default: PATH/spec.md, if present].
    #[arg(long)]
    pub(crate) spec: Option<PathBuf>,
    /// Also warn about accepted decisions that no code references.
    #[arg(long)]
    pub(crate) unreferenced: bool,
    /// Keep running: re-check whenever a file under PATH changes.
    #[arg(long)]
    pub(crate) watch: bool,
    /// Stop watching after this many re-checks (for tests).
    #[arg(long, hide = true, requires = "watch")]
    pub(crate) watch_limit: Option<usize>,
    #[command(flatten)]
    pub(crate) messages: MessageArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct PinArgs {
    /// The file to re-pin, optionally with a line: `src/store.rs:42`.
    pub(crate) target: String,
    /// The checked tree whose `design-docs/` holds the decisions [default: the nearest
    /// ancestor of FILE that has a `design-docs/` directory].
    #[arg(long)]
    pub(crate) root: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) messages: MessageArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct InitArgs {
    /// Where to start the project [default: the current directory].
    pub(crate) dir: Option<PathBuf>,
    /// Whose models: `openai`, `anthropic`, or `openai-compatible URL` for any server that
    /// speaks OpenAI's API (llama.cpp, vLLM, Ollama) [default: openai].
    #[arg(long, num_args = 1..=2, value_names = ["PROVIDER", "URL"])]
    pub(crate) provider: Vec<String>,
    /// A worked example instead of the skeleton: RFC 4648's encodings in Python, with a
    /// hidden test suite that scores the build.
    #[arg(long)]
    pub(crate) example: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct AdoptArgs {
    /// The code base to adopt, the top of its git repository [default: the current directory].
    pub(crate) dir: Option<PathBuf>,
    /// Whose models specc.toml names, as for `specc init` [default: openai].
    #[arg(long, num_args = 1..=2, value_names = ["PROVIDER", "URL"])]
    pub(crate) provider: Vec<String>,
    /// Ask the planner model to describe each section (one paid call); without it, adopt
    /// runs offline and writes only what the scan found.
    #[arg(long)]
    pub(crate) prose: bool,
    /// Re-record the digests of an adopted spec's `[adopted]` sections as their text is now.
    #[arg(long, conflicts_with_all = ["prose", "provider"])]
    pub(crate) refresh: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct PlanArgs {
    /// The spec to read (Markdown).
    pub(crate) spec: PathBuf,
    /// Which representation to print.
    #[arg(long, value_enum, default_value_t = Emit::Intent)]
    pub(crate) emit: Emit,
    /// How to print it.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// With `--emit tasks`: who answers the planner's requests.
    #[arg(long, value_enum, default_value_t = ProviderChoice::Config)]
    pub(crate) provider: ProviderChoice,
    /// With `--provider replay`: the recording [default: .specc/recordings/plan.jsonl beside the spec].
    #[arg(long)]
    pub(crate) recording: Option<PathBuf>,
    /// Append every model exchange to this recording (for `--provider replay` later).
    #[arg(long)]
    pub(crate) record: Option<PathBuf>,
    /// The configuration [default: specc.toml beside the spec].
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// With `--emit tasks`: print what building the plan would cost (worker, reviewer and
    /// merge-agent tokens and dollars per task, low to high) instead of the bare tree.
    #[arg(long)]
    pub(crate) estimate: bool,
    /// Set by `specc build --approve plan`: the plan is saved for approval.
    #[arg(skip)]
    pub(crate) approve: bool,
    #[command(flatten)]
    pub(crate) messages: MessageArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct BuildArgs {
    /// The spec to build (Markdown).
    pub(crate) spec: PathBuf,
    /// The configuration [default: specc.toml beside the spec].
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Where the built repository goes [default: `[build] out`, or out/ beside the spec].
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// Work tasks run at once [default: `[build] jobs`, or 4].
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// Who answers the models' requests.
    #[arg(long, value_enum, default_value_t = BuildProvider::Config)]
    pub(crate) provider: BuildProvider,
    /// With `--provider replay`: the recording [default: .specc/recordings/build.jsonl beside the spec].
    #[arg(long)]
    pub(crate) recording: Option<PathBuf>,
    /// Append every model exchange to this recording (for `--provider replay` later).
    #[arg(long)]
    pub(crate) record: Option<PathBuf>,
    /// Plan, then print the plan and what building it would cost, without running any
    /// worker (the planner's answers are cached for the build; `--provider outline` asks no
    /// model at all).
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// With `--dry-run`: how to print the preview.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Run this work task again even if it is up to date (a task id; may be repeated).
    #[arg(long, value_name = "TASK")]
    pub(crate) force: Vec<String>,
    /// Plan approval: `--approve plan` plans, prints the preview and saves the plan without
    /// running any worker; `--approve` alone runs exactly the saved plan, asking the planner
    /// nothing (put it after the spec, or use `specc approve SPEC`) [default: `[build]
    /// approve`].
    #[arg(long, value_enum, num_args = 0..=1, default_missing_value = "saved", value_name = "plan")]
    pub(crate) approve: Option<Approve>,
    /// Append the build's gauges to FILE once a second, as JSON lines: attempts working and
    /// waiting for a job, model calls waiting and out, the state database's uncommitted
    /// writes, submissions at the VCS, memory, open files and threads (to choose `jobs`).
    #[arg(long, value_name = "FILE")]
    pub(crate) gauges: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) messages: MessageArgs,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) build: BuildArgs,
    /// Where workers connect (host:port; port 0 picks a free one, printed on stderr).
    #[arg(long, default_value = "127.0.0.1:7420")]
    pub(crate) listen: String,
    /// How long a worker's claim of a task holds without a heartbeat, in seconds.
    #[arg(long, default_value_t = 30.0)]
    pub(crate) lease_seconds: f64,
}

#[derive(clap::Args, Debug)]
pub(crate) struct WorkerArgs {
    /// The `specc serve` to work for (http://host:port).
    #[arg(long)]
    pub(crate) connect: String,
    /// Work tasks run at once [default: 4].
    #[arg(long)]
    pub(crate) jobs: Option<usize>,
    /// The project: its specc.toml says which models work and how commands are confined,
    /// and the worker keeps its state under its .specc/workers/ [default: .].
    #[arg(long)]
    pub(crate) dir: Option<PathBuf>,
    /// The configuration [default: specc.toml in --dir].
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    /// Who answers the models' requests.
    #[arg(long, value_enum, default_value_t = BuildProvider::Config)]
    pub(crate) provider: BuildProvider,
    /// With `--provider replay`: the recording.
    #[arg(long)]
    pub(crate) recording: Option<PathBuf>,
}

/// What `specc build --approve` does (design: driver.approval).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Approve {
    /// Plan, preview and save the plan for approval; run no worker.
    Plan,
    /// Run exactly the saved plan (what `--approve` alone means).
    Saved,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildProvider {
    /// The providers specc.toml configures for each role.
    Config,
    /// Recorded answers only: offline, and a request never recorded is an error.
    Replay,
    /// With `--dry-run`: specc's outline planner, no model at all.
    Outline,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProviderChoice {
    /// The providers specc.toml configures for each role.
    Config,
    /// Recorded answers only: offline, and a request never recorded is an error.
    Replay,
    /// specc's deterministic outline planner: no model, the spec's outline as the plan.
    Outline,
}

#[derive(clap::Args, Debug)]
pub(crate) struct MessageArgs {
    /// How to print diagnostics: for people, or one JSON object per line.
    #[arg(long, value_enum, default_value_t = MessageFormat::Human)]
    pub(crate) message_format: MessageFormat,
    /// Show at most this many diagnostics of one code, then one line with the count of the
    /// rest (0: show all) [default: 20 for people, 0 with --message-format json].
    #[arg(long)]
    pub(crate) error_limit: Option<usize>,
}

impl MessageArgs {
    /// `--error-limit`, or its default: machine output is never cut.
    pub(crate) fn error_limit(&self) -> usize {
        self.error_limit.unwrap_or(match self.message_format {
            MessageFormat::Human => ERROR_LIMIT,
            MessageFormat::Json => 0,
        })
    }
}

#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// The suite: a bench.toml naming its cases and configurations.
    pub(crate) suite: PathBuf,
    /// Where the runs go [default: .specc-bench/ beside bench.toml].
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// How to print the table.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(crate) format: Format,
    /// Also draw the table as a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct McpArgs {
    /// The project the tools work in: specs and paths are read relative to it, and none
    /// outside it [default: the current directory].
    pub(crate) dir: Option<PathBuf>,
    /// Offer the tools that spend money on models (build, approve) [default: `[mcp]
    /// allow_spend` in the project's specc.toml].
    #[arg(long)]
    pub(crate) allow_spend: bool,
    /// Print the tools (name, what they do, whether they spend) and exit.
    #[arg(long)]
    pub(crate) list_tools: bool,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ExplainArgs {
    /// A diagnostic code such as E0101; without one, every code is listed.
    pub(crate) code: Option<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Emit {
    /// The Intent IR: the goal tree the front end builds from the spec.
    Intent,
    /// The Task IR: the planned tree of tasks (calls the planner model).
    Tasks,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MessageFormat {
    Human,
    Json,
}

impl BuildArgs {
    /// Where this build's (or a worker's) configuration comes from.
    pub(crate) fn source(&self) -> specc_project::config::Source {
        specc_project::config::Source {
            config: self.config.clone(),
            replay: self.provider == BuildProvider::Replay,
            recording: self.recording.clone(),
        }
    }
}
