//! Two planners decide one question differently, and the second keeps its text through both
//! repairs: one coordinator call merges them, the merged text replaces both, and exactly the
//! subtrees that read one of the old texts are re-planned. A second run is all cache hits.

use std::sync::{Arc, Mutex};

use specc_ir::FileId;
use specc_llm::{
    BoxFuture, Client, LlmConfig, LlmError, Provider, Request, Response, Scripted, ToolCall, Usage,
};
use specc_runtime::plan_tree::{Cache, Limits, plan_tree};
use specc_runtime::{coordinator, planner};

const SPEC: &str = "# Store\n\n## A {#a}\n\nA.\n\n### Inner {#a/inner}\n\n- [R-1] It MUST do a.\n\n\
## B {#b}\n\nB.\n\n### Inner {#b/inner}\n\n- [R-2] It MUST do b.\n\n\
## C {#c}\n\nC.\n\n### Inner {#c/inner}\n\n- [R-3] It MUST do c.\n";

/// Plans by node id; `b` insists on its own `store.format`. Logs what it was asked.
struct Planner {
    asked: Mutex<Vec<String>>,
}

fn call(tool: &str, arguments: serde_json::Value) -> Response {
    let mut r = Scripted::text("", Usage::default());
    r.tool_calls = vec![ToolCall {
        id: "c".into(),
        name: tool.into(),
        arguments,
    }];
    r
}

impl Provider for Planner {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: serde_json::Value =
            serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        if request.tools[0].name == coordinator::TOOL {
            self.asked.lock().expect("lock").push("coordinator".into());
            assert_eq!(user["first"]["decision"], "JSON lines");
            assert_eq!(user["second"]["decision"], "CBOR");
            let r = call(
                coordinator::TOOL,
                serde_json::json!({"decision": "JSON lines, CBOR for blobs", "rationale": "both"}),
            );
            return Box::pin(async move { Ok(r) });
        }
        let id = user["node"]["id"].as_str().unwrap_or_default().to_owned();
        self.asked.lock().expect("lock").push(id.clone());
        let plan = |c: &str| {
            serde_json::json!({"key": c.replace('/', "-"), "kind": "plan", "title": c,
                               "covers_nodes": [c], "instructions": "plan it"})
        };
        let work = |r: &str| {
            serde_json::json!({"key": r, "kind": "work", "title": r, "covers_requirements": [r],
                               "instructions": "do it", "write_scope": [format!("src/{r}.rs")]})
        };
        let decision = |id: &str, text: &str| serde_json::json!({"id": id, "decision": text, "rationale": "r"});
        let answer = match id.as_str() {
            "" => {
                serde_json::json!({"decisions": [], "children": [plan("a"), plan("b"), plan("c")]})
            }
            "a" => serde_json::json!({"decisions": [decision("store.format", "JSON lines")],
                                       "children": [plan("a/inner")]}),
            "b" => serde_json::json!({"decisions": [decision("store.format", "CBOR")],
                                       "children": [plan("b/inner")]}),
            "c" => serde_json::json!({"decisions": [], "children": [plan("c/inner")]}),
            inner => {
                let r = match inner {
                    "a/inner" => "R-1",
                    "b/inner" => "R-2",
                    _ => "R-3",
                };
                serde_json::json!({"decisions": [], "children": [work(r)]})
            }
        };
        let r = call(planner::TOOL, answer);
        Box::pin(async move { Ok(r) })
    }
}

#[tokio::test]
async fn a_conflict_is_merged_once_and_only_the_readers_are_replanned() {
    let tree = specc_passes::parse_spec(FileId(0), SPEC).tree;
    let provider = Arc::new(Planner {
        asked: Mutex::new(Vec::new()),
    });
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m\"\n",
    )
    .expect("config");
    let client =
        Client::from_config(config, &|_| None, None).with_provider("p", provider.clone(), 1);
    let mut cache = Cache::new();
    let planned = plan_tree(&client, &tree, Limits::default(), "", &mut cache)
        .await
        .expect("planned");
    let asked = provider.asked.lock().expect("lock").clone();
    assert_eq!(
        asked,
        [
            "",
            "a",
            "a/inner",
            "b",
            "b",
            "b", // `b` is asked to yield twice, and does not
            "coordinator",
            "a/inner",
            "b/inner", // both readers of an old text, re-planned with the merge
            "c",
            "c/inner", // `c` was never reached before the merge: planned once
        ],
    );
    assert_eq!(planned.calls, asked.len());
    let merged: Vec<_> = planned
        .answers
        .values()
        .flat_map(|a| a.decisions.iter())
        .filter(|d| d.id == "store.format")
        .collect();
    assert_eq!(merged.len(), 2, "the owner's and the repetition in `b`");
    assert!(
        merged
            .iter()
            .all(|d| d.decision == "JSON lines, CBOR for blobs")
    );
    let warnings: Vec<_> = planned.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(warnings, ["W0310"]);
    assert!(
        planned.diagnostics[0]
            .message
            .contains("`a` and `b` decided `store.format`")
    );

    // Again, with the cache: no call, the same merge, the same plan.
    provider.asked.lock().expect("lock").clear();
    let again = plan_tree(&client, &tree, Limits::default(), "", &mut cache)
        .await
        .expect("planned");
    assert_eq!(again.calls, 0, "{:?}", provider.asked.lock().expect("lock"));
    assert_eq!(again.answers, planned.answers);
    assert_eq!(again.diagnostics.len(), 1);
}
