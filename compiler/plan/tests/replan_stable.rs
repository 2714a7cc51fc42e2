//! Stable re-planning: a request holds only what its answer depends on, so renaming a
//! heading or adding a section re-plans only what the edit reaches; a task re-planned after
//! an edit amends its earlier answer, and what it marks unchanged keeps its earlier text, so
//! a planner that paraphrases does not re-plan the subtrees below; and a cached answer that
//! now clashes with a new owner is asked again.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use specc_ir::FileId;
use specc_llm::{
    BoxFuture, Client, LlmConfig, LlmError, Provider, Request, Response, Scripted, ToolCall, Usage,
};
use specc_plan::OutlinePlanner;
use specc_plan::planner;
use specc_plan::{Cache, Limits, PlannedTree, plan_tree};

/// A planner that answers with `answer(node id, whether in amend mode, every message's
/// text)` and
/// logs the node ids it was asked about (`id@amend` in amend mode).
struct Logged<F> {
    answer: F,
    asked: Mutex<Vec<String>>,
    /// The user message of every request.
    users: Mutex<Vec<Value>>,
}

impl<F: Fn(&str, bool, &str) -> Value + Send + Sync> Provider for Logged<F> {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: Value = serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        let id = user["node"]["id"].as_str().unwrap_or_default().to_owned();
        let amend = !user["amend"].is_null();
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(if amend {
                format!("{id}@amend")
            } else {
                id.clone()
            });
        }
        let conversation: String = request.messages.iter().map(|m| m.text.as_str()).collect();
        if let Ok(mut users) = self.users.lock() {
            users.push(user);
        }
        let mut r = Scripted::text("", Usage::default());
        r.tool_calls = vec![ToolCall {
            id: "c".into(),
            name: planner::TOOL.into(),
            arguments: (self.answer)(&id, amend, &conversation),
        }];
        Box::pin(async move { Ok(r) })
    }
}

impl<F> Logged<F> {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.asked.lock().expect("lock"))
    }
}

fn client(provider: Arc<dyn Provider>) -> Client {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m\"\n",
    )
    .expect("config");
    Client::from_config(config, &|_| None, None).with_provider("p", provider, 1)
}

/// The outline planner, logging the node ids it was asked about like [`Logged`].
struct Outline {
    inner: OutlinePlanner,
    asked: Mutex<Vec<String>>,
}

impl Provider for Outline {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: Value = serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        let id = user["node"]["id"].as_str().unwrap_or_default().to_owned();
        let amend = !user["amend"].is_null();
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(if amend { format!("{id}@amend") } else { id });
        }
        self.inner.complete(request)
    }
}

impl Outline {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.asked.lock().expect("lock"))
    }
}

async fn plan(client: &Client, spec: &str, cache: &mut Cache) -> PlannedTree {
    let tree = specc_passes::parse_spec(FileId(0), spec).tree;
    plan_tree(
        client,
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        cache,
    )
    .await
    .expect("planned")
}

fn twenty_sections() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/specs/valid/twenty-sections.md"
    );
    std::fs::read_to_string(path).expect("fixture")
}

#[tokio::test]
async fn a_heading_rename_replans_that_section_and_the_root_only() {
    let provider = Arc::new(Outline {
        inner: OutlinePlanner::new("p"),
        asked: Mutex::new(Vec::new()),
    });
    let client = client(provider.clone());
    let mut cache = Cache::new();
    let text = twenty_sections();
    let first = plan(&client, &text, &mut cache).await;
    assert_eq!(first.calls, 21, "{:?}", provider.take());
    provider.take();

    let renamed = text.replace("## Redirects\n", "## Redirecting visitors\n");
    assert_ne!(renamed, text);
    let second = plan(&client, &renamed, &mut cache).await;
    let asked = provider.take();
    // The root's outline lists its children's ids, and the renamed section's id
    // changed: the root amends its answer, the renamed section is new.
    assert_eq!(asked, ["@amend", "redirecting-visitors"], "{asked:?}");
    assert_eq!(second.calls, 2);
    assert_eq!(second.answers.len(), first.answers.len());

    // A new section: the root and the new section only.
    let added = format!("{renamed}\n## Webhooks\n\n- A webhook MUST be retried three times.\n");
    let third = plan(&client, &added, &mut cache).await;
    let asked = provider.take();
    assert_eq!(asked, ["@amend", "webhooks"], "{asked:?}");
    assert_eq!(third.answers.len(), first.answers.len() + 1);

    // Unchanged: nothing.
    let again = plan(&client, &added, &mut cache).await;
    assert_eq!(again.calls, 0, "{:?}", provider.take());
}

const SPEC: &str = "# Store\n\n## A {#a}\n\nA keeps things.\n\n\
### X {#a/x}\n\n- [R-1] It MUST do x.\n\n### Y {#a/y}\n\n- [R-2] It MUST do y.\n";

fn child(key: &str, node: &str, instructions: &str) -> Value {
    json!({"key": key, "kind": "plan", "title": key, "covers_nodes": [node],
           "instructions": instructions})
}

fn leaf(r: &str) -> Value {
    json!({"key": r.to_lowercase(), "kind": "work", "title": r, "covers_requirements": [r],
           "instructions": "do it", "write_scope": [format!("src/{r}.rs")]})
}

/// `a`'s planner: a fresh answer, or in amend mode the same children paraphrased (marked
/// unchanged when `marks` is set).
fn a_answer(amend: bool, marks: bool) -> Value {
    let words = |plain: &str, reworded: &str| if amend { reworded } else { plain }.to_owned();
    let mut x = child("x", "a/x", &words("Plan x.", "Plan the x part."));
    let mut y = child("y", "a/y", &words("Plan y.", "Work out y."));
    let mut d = json!({"id": "a.store", "decision": words("Keep things in SQLite.", "Things are kept in SQLite."),
                       "rationale": "r"});
    if amend && marks {
        for v in [&mut x, &mut y, &mut d] {
            v["unchanged"] = json!(true);
        }
    }
    json!({"decisions": [d], "children": [x, y]})
}

fn scripted(marks: bool) -> Arc<Logged<impl Fn(&str, bool, &str) -> Value + Send + Sync>> {
    Arc::new(Logged {
        answer: move |id: &str, amend: bool, _: &str| match id {
            "" => json!({"decisions": [], "children": [child("a", "a", "Plan a.")]}),
            "a" => a_answer(amend, marks),
            "a/x" => json!({"decisions": [], "children": [leaf("R-1")]}),
            _ => json!({"decisions": [], "children": [leaf("R-2")]}),
        },
        asked: Mutex::new(Vec::new()),
        users: Mutex::new(Vec::new()),
    })
}

#[tokio::test]
async fn a_paraphrasing_planner_keeps_the_subtrees_it_marks_unchanged() {
    let provider = scripted(true);
    let client = client(provider.clone());
    let mut cache = Cache::new();
    let first = plan(&client, SPEC, &mut cache).await;
    assert_eq!(provider.take(), ["", "a", "a/x", "a/y"]);

    let edited = SPEC.replace("A keeps things.", "A keeps things, durably.");
    let second = plan(&client, &edited, &mut cache).await;
    // The root's request holds the start of a's prose (its children's summaries), so the
    // root amends its answer, to the same. `a` amends its answer; it paraphrased x, y and
    // its decision but marked them unchanged, so their earlier texts stand and x's and y's
    // requests are cache hits.
    assert_eq!(provider.take(), ["@amend", "a@amend"]);
    assert_eq!(second.answers["a"], first.answers["a"]);
    assert_eq!(second.answers["a"].children[0].instructions, "Plan x.");
}

#[tokio::test]
async fn without_the_marks_a_paraphrase_replans_the_children() {
    let provider = scripted(false);
    let client = client(provider.clone());
    let mut cache = Cache::new();
    plan(&client, SPEC, &mut cache).await;
    provider.take();
    let edited = SPEC.replace("A keeps things.", "A keeps things, durably.");
    let second = plan(&client, &edited, &mut cache).await;
    // The reworded assignments and decision are new inputs below `a`: both children are
    // asked again, in amend mode, with what changed.
    assert_eq!(
        provider.take(),
        ["@amend", "a@amend", "a/x@amend", "a/y@amend"]
    );
    assert_eq!(
        second.answers["a"].children[0].instructions,
        "Plan the x part."
    );
}

#[tokio::test]
async fn the_amend_request_carries_the_earlier_answer_and_what_changed() {
    let provider = scripted(false);
    let client = client(provider.clone());
    let mut cache = Cache::new();
    plan(&client, SPEC, &mut cache).await;
    let edited = SPEC.replace("A keeps things.", "A keeps things, durably.");
    plan(&client, &edited, &mut cache).await;
    assert_eq!(
        provider.take()[..6],
        ["", "a", "a/x", "a/y", "@amend", "a@amend"]
    );
    let users = provider.users.lock().expect("lock").clone();
    // The root's amend request says which section of its subtree changed, and only that one.
    assert_eq!(
        users[4]["amend"]["changed"],
        json!([{"what": "node.sections[a]",
                "before": {"id": "a", "title": "A", "parent": "", "text": "## A {#a}\n\nA keeps things."},
                "after": {"id": "a", "title": "A", "parent": "", "text": "## A {#a}\n\nA keeps things, durably."}}]),
        "{}",
        users[4]
    );
    let user = users[5].clone();
    assert_eq!(user["amend"]["earlier_answer"]["children"][0]["key"], "x");
    assert_eq!(
        user["amend"]["changed"],
        json!([{"what": "node.sections[a]",
                "before": {"id": "a", "title": "A", "text": "## A {#a}\n\nA keeps things."},
                "after": {"id": "a", "title": "A", "text": "## A {#a}\n\nA keeps things, durably."}}])
    );
    // No request carries ids owned elsewhere in the tree.
    assert!(user.get("owned_elsewhere").is_none(), "{user}");
}

#[tokio::test]
async fn a_cached_answer_that_now_clashes_with_a_new_owner_is_asked_again() {
    // `b` decides `shared.format`; later an edit makes `a` (planned first) decide it too,
    // differently. `b`'s request did not change, but its cached answer now clashes with
    // `a`'s ownership, so it is asked again (and yields).
    let spec = "# S\n\n## A {#a}\n\n- [R-1] It MUST a.\n\n## B {#b}\n\n- [R-2] It MUST b.\n";
    let a_decides = Arc::new(Mutex::new(false));
    let flag = a_decides.clone();
    let provider = Arc::new(Logged {
        answer: move |id: &str, _: bool, conversation: &str| match id {
            "" => {
                json!({"decisions": [], "children": [child("a", "a", "Plan a."), child("b", "b", "Plan b.")]})
            }
            "a" => {
                let decisions = if *flag.lock().expect("lock") {
                    json!([{"id": "shared.format", "decision": "CBOR", "rationale": "r"}])
                } else {
                    json!([])
                };
                json!({"decisions": decisions, "children": [leaf("R-1")]})
            }
            _ => {
                // `b` yields once told who owns the id (the repair quotes the owner's text).
                let text = if conversation.contains("CBOR") {
                    "CBOR"
                } else {
                    "JSON"
                };
                json!({"decisions": [{"id": "shared.format", "decision": text, "rationale": "r"}],
                       "children": [leaf("R-2")]})
            }
        },
        asked: Mutex::new(Vec::new()),
        users: Mutex::new(Vec::new()),
    });
    let client = client(provider.clone());
    let mut cache = Cache::new();
    plan(&client, spec, &mut cache).await;
    assert_eq!(provider.take(), ["", "a", "b"]);
    *a_decides.lock().expect("lock") = true;
    // Force `a` to be re-planned: its prose changes.
    let edited = spec.replace("## A {#a}\n\n", "## A {#a}\n\nA is first.\n\n");
    let planned = plan(&client, &edited, &mut cache).await;
    let asked = provider.take();
    // `b` is amended (its earlier answer clashes with the new owner), says JSON again, is
    // told the owner's text by the repair, and yields.
    // (The root amends first: its request holds a's new opening.)
    assert_eq!(
        asked,
        ["@amend", "a@amend", "b@amend", "b@amend"],
        "{asked:?}"
    );
    let texts: Vec<&str> = planned
        .answers
        .values()
        .flat_map(|a| a.decisions.iter())
        .filter(|d| d.id == "shared.format")
        .map(|d| d.decision.as_str())
        .collect();
    assert_eq!(texts, ["CBOR", "CBOR"]);
    assert!(
        planned
            .diagnostics
            .iter()
            .all(|d| d.code != specc_ir::codes::DECISIONS_MERGED)
    );
}
