//! `specc serve SPEC --listen ADDR`: `specc build` whose work leaves run on `specc worker`
//! processes, here or on other machines. This process plans, seeds, schedules (critical
//! path first, never two overlapping write scopes), hosts the VCS integrator and exports,
//! as a build does; each ready leaf is offered as a task lease, and workers claim it, run it
//! against their replica of the repository and submit through this process's HTTP API
//! (`http`), under the claim's fencing token. The bearer token is `SPECC_SERVE_TOKEN`.
//! design: state.deployment

mod budget;
mod holds;
mod http;
mod shared;
mod start;

use std::io::Write;
use std::time::Duration;

use specc_ir::{Diagnostic, codes};

pub(in crate::commands) use self::start::{OFFERED, Serving, drain, start};
use super::build;
use crate::cli::ServeArgs;
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};

pub(crate) fn run(args: &ServeArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let refuse = |err: &mut dyn Write, message: String| {
        let mut reporter = Reporter::new(args.build.messages.message_format, env);
        let d = Diagnostic::new(codes::BUILD_SETUP, message).with_help("see `specc explain E0406`");
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    // Approval is the same as the build's: the plan is previewed and saved, no worker needed.
    if build::stops_for_approval(&args.build) {
        return build::approve_plan(&args.build, env, out, err);
    }
    let token = match std::env::var("SPECC_SERVE_TOKEN") {
        Ok(t) if t.len() >= 16 => t,
        _ => {
            return refuse(
                err,
                "specc serve needs SPECC_SERVE_TOKEN, a secret of 16 characters or more that its workers present".to_owned(),
            );
        }
    };
    // A heartbeat goes out every third of the lease: shorter than 0.1 s would spin, and a
    // day is longer than any attempt needs.
    if !(0.1..=86_400.0).contains(&args.lease_seconds) {
        return refuse(
            err,
            "--lease-seconds must be between 0.1 and 86400".to_owned(),
        );
    }
    let listener = match std::net::TcpListener::bind(&args.listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
    {
        Ok(l) => l,
        Err(e) => return refuse(err, format!("listening on {}: {e}", args.listen)),
    };
    if let Ok(addr) = listener.local_addr() {
        // Port 0 picks a free port: this line says which.
        let _ = writeln!(err, "specc serve: listening on http://{addr}");
    }
    let serving = Serving {
        listener,
        lease: Duration::from_secs_f64(args.lease_seconds),
        token,
    };
    build::run_with(&args.build, Some(serving), env, out, err)
}
