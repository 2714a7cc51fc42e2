//! Planners that decide one question differently: the repairs first, then one coordinator
//! call per disagreement, the merged text in every copy, the planners that disagreed asked
//! again with it settled, and exactly the subtrees that read an old text re-planned. A
//! second run is all cache hits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use specc_ir::FileId;
use specc_llm::{
    BoxFuture, Client, LlmConfig, LlmError, Provider, Request, Response, Scripted, ToolCall, Usage,
};
use specc_plan::PlanError;
use specc_plan::{Cache, Limits, PlannedTree, plan_tree};
use specc_plan::{coordinator, planner};

const SPEC: &str = "# Store\n\n## A {#a}\n\nA.\n\n### Inner {#a/inner}\n\n- [R-1] It MUST do a.\n\n\
## B {#b}\n\nB.\n\n### Inner {#b/inner}\n\n- [R-2] It MUST do b.\n\n\
## C {#c}\n\nC.\n\n### Inner {#c/inner}\n\n- [R-3] It MUST do c.\n";

/// Answers from a script keyed by intent node id (`id@settled` when the request carries
/// settled decisions; `coordinator` for merges), each list served in order, its last answer
/// repeated. Logs what it was asked.
struct ByNode {
    script: HashMap<String, Vec<Value>>,
    asked: Mutex<Vec<String>>,
    /// The user message of every request, by script key.
    users: Mutex<Vec<(String, Value)>>,
    seen: Mutex<HashMap<String, usize>>,
}

impl ByNode {
    fn new(script: &[(&str, Vec<Value>)]) -> Arc<ByNode> {
        Arc::new(ByNode {
            script: script
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            asked: Mutex::new(Vec::new()),
            users: Mutex::new(Vec::new()),
            seen: Mutex::new(HashMap::new()),
        })
    }

    /// The user message of the last request under `key`.
    fn last_user(&self, key: &str) -> Value {
        let users = self.users.lock().expect("lock");
        users
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, u)| u.clone())
            .unwrap_or_default()
    }

    fn take_asked(&self) -> Vec<String> {
        std::mem::take(&mut *self.asked.lock().expect("lock"))
    }
}

impl Provider for ByNode {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: Value = serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        let (key, tool) = if request.tools[0].name == coordinator::TOOL {
            ("coordinator".to_owned(), coordinator::TOOL)
        } else {
            let id = user["node"]["id"].as_str().unwrap_or_default().to_owned();
            let settled = user["settled_decisions"]
                .as_array()
                .is_some_and(|s| !s.is_empty());
            let key = if settled && self.script.contains_key(&format!("{id}@settled")) {
                format!("{id}@settled")
            } else {
                id
            };
            (key, planner::TOOL)
        };
        self.asked.lock().expect("lock").push(key.clone());
        self.users
            .lock()
            .expect("lock")
            .push((key.clone(), user.clone()));
        let n = {
            let mut seen = self.seen.lock().expect("lock");
            let n = seen.entry(key.clone()).or_default();
            *n += 1;
            *n
        };
        let answer = self
            .script
            .get(&key)
            .and_then(|list| list.get(n - 1).or(list.last()))
            .cloned()
            .unwrap_or_else(|| json!({"decisions": [], "children": []}));
        let mut r = Scripted::text("", Usage::default());
        r.tool_calls = vec![ToolCall {
            id: "c".into(),
            name: tool.into(),
            arguments: answer,
        }];
        Box::pin(async move { Ok(r) })
    }
}

fn client(provider: Arc<ByNode>) -> Client {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m\"\n",
    )
    .expect("config");
    Client::from_config(config, &|_| None, None).with_provider("p", provider, 1)
}

fn plan(c: &str) -> Value {
    json!({"key": c.replace('/', "-"), "kind": "plan", "title": c, "covers_nodes": [c],
           "instructions": "plan it"})
}

fn work(r: &str) -> Value {
    json!({"key": r, "kind": "work", "title": r, "covers_requirements": [r],
           "instructions": "do it", "write_scope": [format!("src/{r}.rs")]})
}

fn decision(id: &str, text: &str) -> Value {
    json!({"id": id, "decision": text, "rationale": "r"})
}

fn answer(decisions: Vec<Value>, children: Vec<Value>) -> Value {
    json!({"decisions": decisions, "children": children})
}

async fn run(client: &Client, cache: &mut Cache) -> Result<PlannedTree, PlanError> {
    let tree = specc_passes::parse_spec(FileId(0), SPEC).tree;
    plan_tree(
        client,
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        cache,
    )
    .await
}

fn texts_of(planned: &PlannedTree, id: &str) -> Vec<String> {
    planned
        .answers
        .values()
        .flat_map(|a| a.decisions.iter())
        .filter(|d| d.id == id)
        .map(|d| d.decision.clone())
        .collect()
}

/// The common part of the script: the root plans a, b, c; each inner node one leaf.
fn base() -> Vec<(&'static str, Vec<Value>)> {
    vec![
        (
            "",
            vec![answer(vec![], vec![plan("a"), plan("b"), plan("c")])],
        ),
        ("a", vec![answer(vec![], vec![plan("a/inner")])]),
        ("b", vec![answer(vec![], vec![plan("b/inner")])]),
        ("a/inner", vec![answer(vec![], vec![work("R-1")])]),
        ("b/inner", vec![answer(vec![], vec![work("R-2")])]),
        ("c", vec![answer(vec![], vec![plan("c/inner")])]),
        ("c/inner", vec![answer(vec![], vec![work("R-3")])]),
    ]
}

#[tokio::test]
async fn a_conflict_is_merged_once_and_only_the_readers_are_replanned() {
    let mut script = base();
    script.extend([
        (
            "a",
            vec![answer(
                vec![decision("store.format", "JSON lines")],
                vec![plan("a/inner")],
            )],
        ),
        (
            "b",
            vec![answer(
                vec![decision("store.format", "CBOR")],
                vec![plan("b/inner")],
            )],
        ),
        // Given the settlement, `b` follows it and decides nothing.
        ("b@settled", vec![answer(vec![], vec![plan("b/inner")])]),
        (
            "coordinator",
            vec![json!({"decision": "JSON lines, CBOR for blobs", "rationale": "both"})],
        ),
    ]);
    let provider = ByNode::new(&script);
    let client = client(provider.clone());
    let mut cache = Cache::new();
    let planned = run(&client, &mut cache).await.expect("planned");
    let asked = provider.take_asked();
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
            // Both parties are asked again with the settlement (`a` repeats its old text,
            // which is replaced); the readers of an old text below them are re-planned.
            "a",
            "a/inner",
            "b@settled",
            "b/inner",
            "c",
            "c/inner", // never reached before the merge: planned once
        ],
    );
    assert_eq!(planned.calls, asked.len());
    assert_eq!(
        texts_of(&planned, "store.format"),
        ["JSON lines, CBOR for blobs"; 2],
        "the owner's copy, and the one `b` is given back though its planner left it out"
    );
    // `b`'s subtree reads the merged decision; `b` was given it as settled.
    let inner = provider.last_user("b/inner");
    assert!(
        inner["ancestor_decisions"]
            .to_string()
            .contains("CBOR for blobs"),
        "{inner}"
    );
    let b = provider.last_user("b@settled");
    assert_eq!(b["settled_decisions"][0]["id"], "store.format");
    assert!(
        b.get("owned_elsewhere").is_none(),
        "no request lists the ids owned elsewhere: {b}"
    );
    let codes: Vec<_> = planned.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["W0310"]);
    let message = &planned.diagnostics[0].message;
    assert!(
        message.contains("`a` and `b` decided `store.format` differently"),
        "{message}"
    );

    // Again, with the cache: no call, the same merge, the same plan.
    let again = run(&client, &mut cache).await.expect("planned");
    assert_eq!(again.calls, 0, "{:?}", provider.take_asked());
    assert_eq!(again.answers, planned.answers);
    assert_eq!(again.diagnostics.len(), 1);
}

#[tokio::test]
async fn an_owner_above_a_twice_deciding_answer_and_a_later_third_text() {
    let mut script = base();
    script.retain(|(k, _)| !k.is_empty());
    script.extend([
        // The root owns the question; `a` below it decides it differently, twice over.
        (
            "",
            vec![answer(
                vec![decision("net.port", "7000")],
                vec![plan("a"), plan("b"), plan("c")],
            )],
        ),
        (
            "a",
            vec![answer(
                vec![decision("net.port", "7001"), decision("net.port", "7002")],
                vec![plan("a/inner")],
            )],
        ),
        ("a@settled", vec![answer(vec![], vec![plan("a/inner")])]),
        // After the merge, `b` (not a party) brings a text nobody merged: a new conflict.
        (
            "b",
            vec![answer(
                vec![decision("net.port", "8080")],
                vec![plan("b/inner")],
            )],
        ),
        ("b@settled", vec![answer(vec![], vec![plan("b/inner")])]),
        (
            "coordinator",
            vec![
                json!({"decision": "7000, 7001 for admin", "rationale": "first"}),
                json!({"decision": "7000, 7001 for admin, 8080 for metrics", "rationale": "second"}),
            ],
        ),
    ]);
    let provider = ByNode::new(&script);
    let client = client(provider.clone());
    let mut cache = Cache::new();
    let planned = run(&client, &mut cache).await.expect("planned");
    let asked = provider.take_asked();
    assert_eq!(
        asked.iter().filter(|a| *a == "coordinator").count(),
        2,
        "one call per disagreement: {asked:?}"
    );
    // One coordinator call saw all three texts of the first disagreement.
    let w = &planned.diagnostics;
    assert_eq!(w.len(), 2, "{w:?} {asked:?}");
    assert!(
        w[0].message.contains("\"7000\" / \"7001\" / \"7002\""),
        "{}",
        w[0].message
    );
    assert!(w[1].message.contains("\"8080\""), "{}", w[1].message);
    assert!(
        w[1].message.contains("an earlier merge and `b`"),
        "{}",
        w[1].message
    );
    assert_eq!(
        texts_of(&planned, "net.port"),
        ["7000, 7001 for admin, 8080 for metrics"; 3],
        "every copy (the root's, and the parties' `a` and `b`) carries the last merge"
    );
    let again = run(&client, &mut cache).await.expect("planned");
    assert_eq!(again.calls, 0, "{:?}", provider.take_asked());
    assert_eq!(again.answers, planned.answers);
}

#[tokio::test]
async fn a_plan_child_that_covers_its_own_node_stops_at_the_depth_limit() {
    // Every planner hands its whole node to one plan child: the same node, ever deeper.
    let script = vec![(
        "",
        vec![
            json!({"decisions": [], "children": [{"key": "again", "kind": "plan",
            "title": "again", "covers_nodes": [""], "instructions": "plan it all"}]}),
        ],
    )];
    let provider = ByNode::new(&script);
    let client = client(provider.clone());
    let tree = specc_passes::parse_spec(FileId(0), SPEC).tree;
    let limits = Limits {
        max_depth: 3,
        ..Limits::default()
    };
    match plan_tree(
        &client,
        &tree,
        limits,
        "",
        &specc_passes::plan::Commands::default(),
        &mut Cache::new(),
    )
    .await
    {
        Err(PlanError::Invalid { task, problems }) => {
            assert_eq!(
                task, "again/again",
                "the task at depth 2 may not plan at depth 3"
            );
            assert_eq!(problems[0].code, "E0305");
        }
        other => panic!("{other:?}"),
    }
    // Depth 0 and 1 once each, then depth 2 with its two repairs.
    assert_eq!(provider.take_asked().len(), 5);
}

#[tokio::test]
async fn planners_that_never_agree_stop_after_the_merge_limit() {
    let mut script = base();
    // Every answer brings a text nobody has seen.
    let texts = |node: &str, tag: &str| -> Vec<Value> {
        (0..400)
            .map(|i| {
                answer(
                    vec![decision("store.format", &format!("{tag} {i}"))],
                    vec![plan(&format!("{node}/inner"))],
                )
            })
            .collect()
    };
    script.extend([
        ("a", texts("a", "a")),
        ("a@settled", texts("a", "a again")),
        ("b", texts("b", "b")),
        ("b@settled", texts("b", "b again")),
        (
            "coordinator",
            (0..100)
                .map(|i| json!({"decision": format!("merge {i}"), "rationale": "r"}))
                .collect(),
        ),
    ]);
    let provider = ByNode::new(&script);
    let client = client(provider.clone());
    match run(&client, &mut Cache::new()).await {
        Err(PlanError::Unsettled(ids)) => assert_eq!(ids, ["store.format"]),
        other => panic!("{other:?}"),
    }
    let asked = provider.take_asked();
    assert_eq!(asked.iter().filter(|a| *a == "coordinator").count(), 32);
}

#[tokio::test]
async fn a_cached_answer_the_checks_refuse_is_asked_again() {
    let provider = ByNode::new(&base());
    let client = client(provider.clone());
    let mut cache = Cache::new();
    run(&client, &mut cache).await.expect("planned");
    provider.take_asked();
    // Spoil the root's cached answer, as an older specc's or a hand edit might: a cycle.
    let root_key = cache
        .answers
        .iter()
        .find(|(_, a)| a.children.len() == 3)
        .map(|(k, _)| k.clone())
        .expect("the root's answer");
    let spoilt = cache.answers.get_mut(&root_key).expect("cached");
    spoilt.children[0].depends_on = vec!["b".into()];
    spoilt.children[1].depends_on = vec!["a".into()];
    let again = run(&client, &mut cache).await.expect("planned");
    assert_eq!(provider.take_asked(), [""], "only the root is asked again");
    assert_eq!(again.calls, 1);
    assert!(cache.answers[&root_key].children[0].depends_on.is_empty());
}
