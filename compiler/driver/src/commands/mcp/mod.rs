//! `specc mcp [DIR] [--allow-spend] [--list-tools]`: a Model Context Protocol server over
//! stdio, bound to one project, through which a coding agent or editor previews, builds,
//! follows and explains specc's work. Each tool runs a specc command in-process with
//! `--format json` (so it answers what the command prints), and the tools that spend money
//! (build, approve) answer only when the server was started with `--allow-spend` or the
//! project's specc.toml says `[mcp] allow_spend = true`.
//! design: driver.mcp

mod answer;
mod builds;
mod call;
mod spec_tree;
mod tools;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use self::answer::{Answer, Ran};
use self::builds::{Build, Builds};
use self::call::{BadArgs, Call};
use self::tools::Effect;
use crate::cli::McpArgs;
use crate::{Env, exit};

pub(crate) fn run(args: &McpArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    if args.list_tools {
        for t in tools::TOOLS {
            let kind = match t.effect {
                Effect::Reads => "read-only",
                Effect::AsksModels => "read-only, may ask a model",
                Effect::Spends => "spends (needs --allow-spend)",
            };
            let _ = writeln!(out, "{:<16} {:<30} {}", t.name, kind, t.title);
        }
        return exit::OK;
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let root = match dir.canonicalize() {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "specc mcp: {}: {e}", dir.display());
            return exit::USAGE;
        }
    };
    let allow_spend = args.allow_spend || spend_allowed_by_config(&root);
    let server = Server {
        root,
        allow_spend,
        env: Env {
            no_color: true,
            stdout_is_terminal: false,
            stderr_is_terminal: false,
            width: Some(100),
            signals: false,
            ..env.clone()
        },
        builds: Arc::new(Builds::default()),
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = writeln!(err, "specc mcp: no async runtime: {e}");
            return exit::USAGE;
        }
    };
    let served = rt.block_on(async {
        let service = server.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    });
    match served {
        Ok(()) => exit::OK,
        Err(e) => {
            let _ = writeln!(err, "specc mcp: {e}");
            exit::ERRORS
        }
    }
}

/// `[mcp] allow_spend = true` in the project's specc.toml.
fn spend_allowed_by_config(root: &std::path::Path) -> bool {
    std::fs::read_to_string(root.join("specc.toml"))
        .ok()
        .and_then(|t| t.parse::<toml::Table>().ok())
        .and_then(|t| t.get("mcp")?.get("allow_spend")?.as_bool())
        .unwrap_or(false)
}

#[derive(Clone)]
struct Server {
    root: PathBuf,
    allow_spend: bool,
    /// What the in-process commands see: no terminal, no colour, no signal handlers.
    env: Env,
    builds: Arc<Builds>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let spend = if self.allow_spend {
            "specc_build and specc_approve spend money on models within the project's budget."
        } else {
            "specc_build and specc_approve are refused: the server was started without --allow-spend."
        };
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("specc", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "specc compiles a prose spec (spec.md) into a codebase. Project: {}. Preview with specc_preview, read a build with specc_status and specc_show, follow one with specc_follow. {spend}",
                self.root.display()
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tools::TOOLS
            .iter()
            .map(|t| serde_json::from_value::<Tool>(t.listed()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        let Some(tool) = tools::find(name) else {
            return Err(ErrorData::invalid_params(format!("no tool `{name}`"), None));
        };
        if tool.effect == Effect::Spends && !self.allow_spend {
            let a = Answer::failed(
                specc_ir::codes::MCP_SPEND_REFUSED,
                &format!(
                    "{name} spends money on models, and this server was started without --allow-spend"
                ),
                "start it with `specc mcp --allow-spend`, or set `[mcp] allow_spend = true` in specc.toml",
            );
            return Ok(result(a).into());
        }
        let args = request.arguments.unwrap_or_default();
        let call = call::call(name, &args, &self.root, self.allow_spend)
            .map_err(|BadArgs(why)| ErrorData::invalid_params(why, None))?;
        let answer = self.answer(name, call, &context).await?;
        Ok(result(answer).into())
    }
}

/// The protocol's result of an answer.
fn result(a: Answer) -> CallToolResult {
    let mut r = match a.error {
        true => CallToolResult::structured_error(a.structured),
        false => CallToolResult::structured(a.structured),
    };
    r.content.insert(0, ContentBlock::text(a.text));
    r
}

impl Server {
    async fn answer(
        &self,
        tool: &str,
        call: Call,
        cx: &RequestContext<RoleServer>,
    ) -> Result<Answer, ErrorData> {
        Ok(match call {
            Call::Command(argv) => answer::of(tool, &self.command(argv).await),
            Call::Outline(argv) => spec_tree::outline(&self.command(argv).await),
            Call::Node { argv, id } => spec_tree::node(&self.command(argv).await, &id),
            Call::Start { argv, spec, follow } => match self.builds.start(argv, spec, &self.env) {
                Ok(b) if follow => self.follow(&b, 600.0, cx).await,
                Ok(b) => Answer::ok(
                    json!({"build": b.id, "spec": b.spec, "state": "running"}),
                    format!("build {} started; follow it with specc_follow", b.id),
                ),
                Err(running) => Answer::failed(
                    specc_ir::codes::BUILD_SETUP,
                    &format!(
                        "a build of {} is running ({})",
                        running.spec.display(),
                        running.id
                    ),
                    "follow it with specc_follow, or wait until it ends",
                ),
            },
            Call::Follow { build, timeout } => match self.builds.get(&build) {
                Some(b) => self.follow(&b, timeout, cx).await,
                None => {
                    return Err(ErrorData::invalid_params(
                        format!("no build `{build}`"),
                        None,
                    ));
                }
            },
        })
    }

    /// Runs a specc command in-process, on a thread of its own (a command may start its own
    /// async runtime).
    async fn command(&self, argv: Vec<std::ffi::OsString>) -> Ran {
        let env = self.env.clone();
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let exit = crate::run(argv, &env, &mut out, &mut err);
            let _ = tx.send(Ran {
                exit,
                out: String::from_utf8_lossy(&out).into_owned(),
                err: String::from_utf8_lossy(&err).into_owned(),
            });
        });
        rx.await.unwrap_or(Ran {
            exit: exit::USAGE,
            out: String::new(),
            err: "error: the command ended without an answer (it panicked)".to_owned(),
        })
    }

    /// Waits for `b` up to `timeout` seconds, telling the client each line it prints as a
    /// progress notification (when the client asked for progress); then how it stands.
    async fn follow(&self, b: &Build, timeout: f64, cx: &RequestContext<RoleServer>) -> Answer {
        let token = cx.meta.get_progress_token();
        let deadline = Instant::now() + Duration::from_secs_f64(timeout.min(86_400.0));
        let mut seen = 0;
        loop {
            let p = b.progress();
            if let Some(token) = &token {
                for (i, line) in p.lines.iter().enumerate().skip(seen) {
                    let n = ProgressNotificationParam::new(token.clone(), (i + 1) as f64)
                        .with_message(line.clone());
                    let _ = cx.peer.notify_progress(n).await;
                }
            }
            seen = p.lines.len();
            if p.exit.is_some() || Instant::now() >= deadline {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            // A client that cancels the call stops following (the build runs on).
            tokio::select! {
                _ = cx.ct.cancelled() => break,
                _ = tokio::time::timeout(left, b.changed_since(seen)) => {}
            }
        }
        let p = b.progress();
        let status = self.status_of(b).await;
        let state = match p.exit {
            None => "running",
            Some(0) => "landed",
            Some(_) => "failed",
        };
        let text = match p.exit {
            None => format!("build {} still runs", b.id),
            Some(code) => format!(
                "build {} ended ({state}, exit {code}): {}",
                b.id,
                p.out.trim()
            ),
        };
        let structured = json!({"build": b.id, "spec": b.spec, "state": state, "exit": p.exit,
                                "summary": p.out, "progress": p.lines, "status": status});
        Answer {
            error: matches!(p.exit, Some(c) if c != 0),
            ..Answer::ok(structured, text)
        }
    }

    /// `specc status --format json` of the build's spec (null when there is none yet).
    async fn status_of(&self, b: &Build) -> Value {
        let argv = [
            "specc".into(),
            "status".into(),
            b.spec.clone().into(),
            "--format".into(),
            "json".into(),
        ];
        let ran = self.command(argv.to_vec()).await;
        serde_json::from_str(ran.out.trim()).unwrap_or(Value::Null)
    }
}
