//! A build's trace over OTLP/HTTP (design: runtime.traces): the specc binary builds a copy
//! of the example with `OTEL_EXPORTER_OTLP_ENDPOINT` naming a receiver on 127.0.0.1 in this
//! test, which decodes what it is sent: one `build` span, one `task` span per task, an
//! `attempt` span per attempt, a `model call` span per call in the ledger and `tool call`
//! spans, each under its parent, in one trace, with their attributes.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// An OTLP/HTTP receiver on loopback: every request's JSON body, as received.
fn receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let got = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let got = got.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut stream = stream;
                // One connection may carry several requests.
                loop {
                    let mut length = None;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let l = line.trim_end();
                        if l.is_empty() {
                            break;
                        }
                        if let Some((k, v)) = l.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse::<usize>().ok();
                        }
                    }
                    let mut body = vec![0; length.unwrap_or(0)];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    if let Ok(v) = serde_json::from_slice(&body) {
                        got.lock().expect("bodies").push(v);
                    }
                    let ok = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n{}";
                    if stream.write_all(ok.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, bodies)
}

fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

#[test]
fn the_examples_build_exports_a_trace_of_its_tasks_attempts_and_calls() {
    let tmp = tempfile::tempdir().expect("tmp");
    let project = crate::support::example_copy(tmp.path());
    let (url, bodies) = receiver();
    let out = std::process::Command::new(specc_tests::specc_binary())
        .args(["build", "spec.md"])
        .current_dir(&project)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .output()
        .expect("specc build");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let bodies = bodies.lock().expect("bodies").clone();
    let spans: Vec<Value> = bodies
        .iter()
        .flat_map(|b| b["resourceSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|rs| rs["scopeSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|ss| ss["spans"].as_array().cloned().unwrap_or_default())
        .collect();
    let named = |n: &str| spans.iter().filter(|s| s["name"] == n).collect::<Vec<_>>();
    let by_id: BTreeMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["spanId"].as_str().expect("spanId"), s))
        .collect();
    let parent = |s: &Value| {
        s["parentSpanId"]
            .as_str()
            .and_then(|p| by_id.get(p))
            .map(|p| p["name"].as_str().unwrap_or_default().to_owned())
    };

    // One trace, rooted at the build.
    let builds = named("build");
    assert_eq!(builds.len(), 1, "{spans:?}");
    let trace = builds[0]["traceId"].as_str().expect("traceId");
    assert_eq!(trace.len(), 32);
    assert!(spans.iter().all(|s| s["traceId"] == trace));
    assert!(attr(builds[0], "specc.run").is_some());

    // One span per task, under the build, each naming its task and how it ended.
    let tasks = named("task");
    let ids: Vec<&str> = tasks
        .iter()
        .filter_map(|t| attr(t, "specc.task")?["stringValue"].as_str())
        .collect();
    assert_eq!(ids.len(), 7, "{ids:?}");
    for t in &tasks {
        assert_eq!(parent(t).as_deref(), Some("build"));
        assert_eq!(
            attr(t, "specc.outcome").expect("outcome")["stringValue"],
            "landed"
        );
    }
    let attempts = named("attempt");
    assert!(attempts.len() >= 7);
    for a in &attempts {
        assert_eq!(parent(a).as_deref(), Some("task"));
        assert!(attr(a, "specc.role").is_some() && attr(a, "specc.outcome").is_some());
    }

    // One span per model call the ledger recorded, with role, model, tokens and dollars.
    let ledger =
        specc_llm::Ledger::open_existing(&project.join(".specc/state.db")).expect("ledger");
    let rows = ledger.rows().expect("rows");
    let calls = named("model call");
    assert_eq!(calls.len(), rows.len(), "one span per recorded call");
    let mut dollars = 0.0;
    for c in &calls {
        for key in [
            "specc.role",
            "specc.model",
            "specc.outcome",
            "specc.input_tokens",
            "specc.output_tokens",
        ] {
            assert!(attr(c, key).is_some(), "{key} in {c}");
        }
        dollars += attr(c, "specc.dollars")
            .and_then(|d| d["doubleValue"].as_f64())
            .unwrap_or(0.0);
        assert!(
            parent(c).is_some(),
            "a model call is under the build, a task or an attempt"
        );
    }
    let spent: f64 = rows.iter().map(|r| r.dollars).sum();
    assert!(
        (dollars - spent).abs() < 1e-9,
        "the spans' dollars are the ledger's: {dollars} vs {spent}"
    );
    let worker_calls = calls.iter().filter(|c| {
        attr(c, "specc.role").and_then(|r| r["stringValue"].as_str()) == Some("worker")
    });
    assert!(worker_calls.clone().count() > 0);
    assert!(
        worker_calls
            .clone()
            .all(|c| parent(c).as_deref() == Some("attempt"))
    );

    // The workers' tool calls, under their attempts.
    let tools = named("tool call");
    assert!(!tools.is_empty());
    for t in &tools {
        assert_eq!(parent(t).as_deref(), Some("attempt"));
        assert!(attr(t, "specc.tool").is_some());
    }
}
