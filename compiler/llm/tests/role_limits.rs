//! A role's own `concurrency` bounds its calls in flight below its provider's limit, and
//! leaves other roles on the same provider alone; a halted client refuses calls once they
//! would go out.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use specc_llm::{
    BoxFuture, Client, LlmConfig, LlmError, Provider, Request, Response, Role, Scripted, Usage,
};

/// Answers after a short wait, counting the calls in flight and the most seen at once, per
/// model (each role has its own model here).
#[derive(Default)]
struct Slow {
    now: [AtomicUsize; 2],
    most: [AtomicUsize; 2],
}

impl Provider for Slow {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let i = usize::from(request.model == "w");
        Box::pin(async move {
            let n = self.now[i].fetch_add(1, Ordering::SeqCst) + 1;
            self.most[i].fetch_max(n, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            self.now[i].fetch_sub(1, Ordering::SeqCst);
            Ok(Scripted::text("ok", Usage::default()))
        })
    }
}

#[tokio::test]
async fn a_role_limit_bounds_its_calls_and_no_other_roles() {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.planner]\nprovider = \"p\"\nmodel = \"pl\"\n\
         [roles.worker]\nprovider = \"p\"\nmodel = \"w\"\nconcurrency = 2\n",
    )
    .expect("config");
    assert_eq!(
        config.role(Role::Worker).and_then(|r| r.concurrency),
        Some(2)
    );
    let slow = Arc::new(Slow::default());
    let client = Client::from_config(config, &|_| None, None).with_provider("p", slow.clone(), 16);
    let request = || Request::new(String::new(), vec![specc_llm::Message::user("hi")], 16);
    let mut calls = Vec::new();
    for _ in 0..6 {
        calls.push(client.call(Role::Worker, "w", request()));
        calls.push(client.call(Role::Planner, "p", request()));
    }
    for r in futures_util::future::join_all(calls).await {
        r.expect("answered");
    }
    assert_eq!(
        slow.most[1].load(Ordering::SeqCst),
        2,
        "the worker role's limit"
    );
    assert_eq!(
        slow.most[0].load(Ordering::SeqCst),
        6,
        "the planner has no limit of its own: only the provider's 16"
    );
}

/// A halted client lets the calls already out finish and refuses every later one, queued
/// ones included (design: runtime.graceful-stop).
#[tokio::test]
async fn a_halted_client_finishes_the_calls_out_and_refuses_the_rest() {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.worker]\nprovider = \"p\"\nmodel = \"w\"\n",
    )
    .expect("config");
    let slow = Arc::new(Slow::default());
    // One call at a time: the second waits behind the first.
    let client = Client::from_config(config, &|_| None, None).with_provider("p", slow.clone(), 1);
    let request = || Request::new(String::new(), vec![specc_llm::Message::user("hi")], 16);
    let halt = client.halt_switch();
    let out = client.call(Role::Worker, "w", request());
    let queued = client.call(Role::Worker, "w", request());
    let halt_soon = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        halt.halt("stopped by a test");
    };
    let (out, queued, ()) = tokio::join!(out, queued, halt_soon);
    assert!(out.is_ok(), "the call out finished: {out:?}");
    assert!(
        matches!(&queued, Err(LlmError::Halted(why)) if why == "stopped by a test"),
        "{queued:?}"
    );
    assert!(queued.as_ref().is_err_and(LlmError::is_stop));
    let later = client.call(Role::Worker, "w", request()).await;
    assert!(matches!(later, Err(LlmError::Halted(_))), "{later:?}");
    assert_eq!(client.halted().as_deref(), Some("stopped by a test"));
}
