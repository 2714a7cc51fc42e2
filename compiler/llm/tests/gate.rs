//! A client with a budget gate (a worker's serve, design: state.leases) holds each call's
//! worst case through it before the call goes out, records the call's row through it with
//! the hold settled, and makes no call the gate refuses.

use std::sync::{Arc, Mutex};

use specc_llm::{
    BoxFuture, BudgetGate, CallRow, Client, Ledger, LlmConfig, LlmError, Role, Scripted, Usage,
};

#[derive(Default)]
struct Gate {
    /// `hold TASK DOLLARS`, `record TASK HOLD`, `release HOLD`, in order.
    log: Mutex<Vec<String>>,
    refuse: bool,
}

impl BudgetGate for Gate {
    fn hold<'a>(&'a self, task: &'a str, dollars: f64) -> BoxFuture<'a, Result<u64, LlmError>> {
        self.log
            .lock()
            .expect("log")
            .push(format!("hold {task} {dollars:.4}"));
        let answer = if self.refuse {
            Err(LlmError::Budget {
                cap: 1.0,
                committed: 1.0,
                needed: dollars,
            })
        } else {
            Ok(7)
        };
        Box::pin(async move { answer })
    }

    fn record<'a>(&'a self, row: &'a CallRow, hold: Option<u64>) -> BoxFuture<'a, ()> {
        self.log
            .lock()
            .expect("log")
            .push(format!("record {} {hold:?}", row.task));
        Box::pin(async {})
    }

    fn release(&self, hold: u64) {
        self.log
            .lock()
            .expect("log")
            .push(format!("release {hold}"));
    }
}

fn client(gate: Arc<Gate>, script: Arc<Scripted>, dir: &std::path::Path) -> Client {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.worker]\nprovider = \"p\"\nmodel = \"w\"\nmax_tokens = 1000\n\
         [prices.w]\ninput = 0.0\noutput = 10.0\n",
    )
    .expect("config");
    let ledger = Arc::new(Ledger::open(&dir.join("state.db")).expect("ledger"));
    Client::from_config(config, &|_| None, None)
        .with_provider("p", script, 4)
        .with_ledger(ledger, "run")
        .with_gate(gate)
}

fn request() -> specc_llm::Request {
    specc_llm::Request::new(String::new(), vec![specc_llm::Message::user("hi")], 1000)
}

#[tokio::test]
async fn a_call_is_held_then_recorded_with_its_hold_settled() {
    let dir = tempfile::tempdir().expect("dir");
    let gate = Arc::new(Gate::default());
    let usage = Usage {
        input: 10,
        cached_input: 0,
        output: 200,
    };
    let script = Arc::new(Scripted::new("p", vec![Ok(Scripted::text("ok", usage))]));
    let c = client(gate.clone(), script.clone(), dir.path());
    c.call(Role::Worker, "t1", request())
        .await
        .expect("answered");
    // The worst case: 1000 output tokens at $10 a million.
    assert_eq!(
        *gate.log.lock().expect("log"),
        ["hold t1 0.0100", "record t1 Some(7)"]
    );
    assert_eq!(script.requests().len(), 1);
}

#[tokio::test]
async fn a_refused_hold_makes_no_call() {
    let dir = tempfile::tempdir().expect("dir");
    let gate = Arc::new(Gate {
        refuse: true,
        ..Gate::default()
    });
    let script = Arc::new(Scripted::new("p", vec![]));
    let c = client(gate.clone(), script.clone(), dir.path());
    let e = c
        .call(Role::Worker, "t1", request())
        .await
        .expect_err("refused");
    assert!(matches!(e, LlmError::Budget { .. }), "{e}");
    assert!(script.requests().is_empty(), "no request went out");
    assert_eq!(*gate.log.lock().expect("log"), ["hold t1 0.0100"]);
}

#[tokio::test]
async fn a_dropped_call_gives_its_hold_back() {
    let dir = tempfile::tempdir().expect("dir");
    let gate = Arc::new(Gate::default());
    // A provider that never answers: the caller gives up.
    struct Never;
    impl specc_llm::Provider for Never {
        fn name(&self) -> &str {
            "p"
        }
        fn complete<'a>(
            &'a self,
            _: &'a specc_llm::Request,
        ) -> BoxFuture<'a, Result<specc_llm::Response, LlmError>> {
            Box::pin(std::future::pending())
        }
    }
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.worker]\nprovider = \"p\"\nmodel = \"w\"\n",
    )
    .expect("config");
    let ledger = Arc::new(Ledger::open(&dir.path().join("state.db")).expect("ledger"));
    let c = Client::from_config(config, &|_| None, None)
        .with_provider("p", Arc::new(Never), 4)
        .with_ledger(ledger, "run")
        .with_gate(gate.clone());
    let call = c.call(Role::Worker, "t1", request());
    let gave_up = tokio::time::timeout(std::time::Duration::from_millis(100), call).await;
    assert!(gave_up.is_err());
    assert_eq!(
        *gate.log.lock().expect("log"),
        ["hold t1 0.0000", "release 7"]
    );
}
