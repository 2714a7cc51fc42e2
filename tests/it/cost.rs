//! `specc cost` on a state database filled by a recorded run: the replay provider answers
//! every call from `fixtures/llm/recorded-run/recording.jsonl`, offline, and the ledger rows
//! it leaves are summarised by role and by model.

use std::sync::Arc;

use specc_llm::Client;
use specc_llm::Ledger;
use specc_tests::recorded_run::{CALLS, config, request};

use crate::support::specc;

#[tokio::test]
async fn specc_cost_summarises_a_recorded_run_by_role_and_model() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("state.db");
    let ledger = Arc::new(Ledger::open(&db).expect("ledger"));
    let client =
        Client::from_config(config(), &|_| None, None).with_ledger(ledger.clone(), "recorded");
    for c in CALLS {
        let r = client
            .call(c.role, c.task, request(c.role, c.prompt))
            .await
            .expect("replayed");
        assert_eq!(r.text, c.answer);
    }
    drop(client);
    drop(ledger);

    let state = db.display().to_string();
    let text = specc(&["cost", "--state", &state]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    insta::assert_snapshot!("cost-text", text.stdout);
    let json = specc(&["cost", "--state", &state, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(v["total"]["calls"], 6);
    let planner = v["by_role"]
        .as_array()
        .expect("roles")
        .iter()
        .find(|l| l["name"] == "planner")
        .expect("planner")
        .clone();
    // 9,000 + 4,000 input at $15/M, 6,000 cached at $1.5/M, 2,700 output at $75/M.
    let dollars = (13_000.0 * 15.0 + 6_000.0 * 1.5 + 2_700.0 * 75.0) / 1e6;
    assert!(
        (planner["dollars"].as_f64().unwrap_or(0.0) - dollars).abs() < 1e-9,
        "{planner}"
    );
    insta::assert_snapshot!("cost-json", json.stdout);
}

#[test]
fn specc_cost_without_a_database_is_a_usage_error() {
    let out = specc(&["cost", "--state", "/nonexistent/state.db"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no state database"), "{}", out.stderr);
}
