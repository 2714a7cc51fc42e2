//! One module per command; `dispatch` picks one.

mod adopt;
mod bench;
mod build;
mod check;
mod cost;
mod drift;
mod eval;
mod explain;
mod init;
mod mcp;
mod metrics;
pub use explain::explanation;
mod pin;
mod pins;
mod plan;
mod plan_tasks;
mod preview;
mod report;
mod runners;
mod sandbox;
mod serve;
mod show;
mod state_url;
mod status;
mod trace;
mod worker;

use std::io::Write;

use crate::Env;
use crate::cli::{Cli, Command, MessageFormat};

pub(crate) fn dispatch(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    // JSON mode: every JSON object on stdout (diagnostics included), people's lines on stderr.
    let json = match &cli.command {
        Command::Plan(a) => a.messages.message_format,
        Command::Build(a) | Command::Approve(a) => a.messages.message_format,
        Command::Serve(a) => a.build.messages.message_format,
        Command::Check(a) => a.messages.message_format,
        Command::Pin(a) => a.messages.message_format,
        _ => MessageFormat::Human,
    } == MessageFormat::Json;
    if json {
        let streams = crate::json_streams::Streams::new(out, err);
        let (mut out, mut err) = (
            crate::json_streams::Out(&streams),
            crate::json_streams::Err(&streams),
        );
        let status = run_command(cli, env, &mut out, &mut err);
        let _ = err.flush();
        return status;
    }
    run_command(cli, env, out, err)
}

fn run_command(cli: Cli, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match cli.command {
        Command::Init(args) => init::run(&args, env, out, err),
        Command::Adopt(args) => adopt::run(&args, env, out, err),
        Command::Plan(args) => plan::run(&args, env, out, err),
        Command::Build(args) => build::run(&args, env, out, err),
        Command::Approve(mut args) => {
            args.approve = Some(crate::cli::Approve::Saved);
            build::run(&args, env, out, err)
        }
        Command::Serve(args) => serve::run(&args, env, out, err),
        Command::Worker(args) => worker::run(&args, env, out, err),
        Command::Check(args) => check::run(&args, env, out, err),
        Command::Pin(args) => pin::run(&args, env, out, err),
        Command::Cost(args) => cost::run(&args, env, out, err),
        Command::Status(args) => status::run(&args, env, out, err),
        Command::Show(args) => show::run(&args, env, out, err),
        Command::Trace(args) => trace::run(&args, env, out, err),
        Command::Drift(args) => drift::run(&args, env, out, err),
        Command::Eval(args) => eval::run(&args, env, out, err),
        Command::Report(args) => report::run(&args, env, out, err),
        Command::Explain(args) => explain::run(&args, out, err),
        Command::Mcp(args) => mcp::run(&args, env, out, err),
        Command::Bench(args) => bench::run(&args, env, out, err),
        Command::Sandbox(args) => sandbox::run(&args, env, out, err),
        Command::SandboxHelper { args } => specc_sandbox::helper::main(&args),
    }
}
