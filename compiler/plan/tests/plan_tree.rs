//! Planning a 20-section spec with the deterministic outline planner, then re-planning after
//! one section's edit: the model is called only for that section's subtree, counted on the
//! provider.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use specc_ir::FileId;
use specc_llm::{BoxFuture, Client, LlmConfig, LlmError, Provider, Request, Response};
use specc_plan::OutlinePlanner;
use specc_plan::{Cache, Limits, plan_tree};

/// The outline planner, counting which nodes it was asked about.
struct Counting {
    inner: OutlinePlanner,
    asked: Mutex<Vec<String>>,
    /// Each request's `task.line_budget`, and whether its instructions explain it.
    budgets: Mutex<Vec<(u64, bool)>>,
}

impl Provider for Counting {
    fn name(&self) -> &str {
        "p"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: serde_json::Value =
            serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        if let Ok(mut asked) = self.asked.lock() {
            asked.push(user["node"]["id"].as_str().unwrap_or_default().to_owned());
        }
        if let Ok(mut budgets) = self.budgets.lock() {
            let budget = user["task"]["line_budget"].as_u64().unwrap_or_default();
            let explained = request.messages[0]
                .text
                .contains("No file may pass task.line_budget lines");
            budgets.push((budget, explained));
        }
        self.inner.complete(request)
    }
}

/// The path of a valid spec of `fixtures/specs/valid/`.
fn fixture(name: &str) -> String {
    format!(
        "{}/../../fixtures/specs/valid/{name}.md",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// A valid spec of `fixtures/specs/valid/`, parsed.
fn fixture_tree(name: &str) -> specc_ir::IntentTree {
    let text = std::fs::read_to_string(fixture(name)).expect("fixture");
    specc_passes::parse_spec(FileId(0), &text).tree
}

/// The outline planner behind a fresh count.
fn counting() -> Arc<Counting> {
    Arc::new(Counting {
        inner: OutlinePlanner::new("p"),
        asked: Mutex::new(Vec::new()),
        budgets: Mutex::new(Vec::new()),
    })
}

fn client(provider: Arc<Counting>) -> Client {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m\"\n",
    )
    .expect("config");
    Client::from_config(config, &|_| None, None).with_provider("p", provider, 1)
}

#[tokio::test]
async fn an_edit_replans_only_its_sections_subtree() {
    let text = std::fs::read_to_string(fixture("twenty-sections")).expect("fixture");
    let tree = specc_passes::parse_spec(FileId(0), &text).tree;
    let provider = counting();
    let client = client(provider.clone());
    let mut cache = Cache::new();

    let first = plan_tree(
        &client,
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    let planned_nodes = tree.nodes().count();
    assert_eq!(
        first.calls, planned_nodes,
        "one call per intent node on a cold plan"
    );
    let leaves: usize = first
        .answers
        .values()
        .map(|a| {
            a.children
                .iter()
                .filter(|c| c.kind == specc_ir::plan::ChildKind::Work)
                .count()
        })
        .sum();
    assert!(leaves >= 20, "{leaves} work leaves");
    let covered: HashSet<String> = first
        .answers
        .values()
        .flat_map(|a| a.children.iter())
        .flat_map(|c| c.covers_requirements.iter().cloned())
        .collect();
    assert!(
        specc_passes::plan::uncovered(&tree, &covered).is_empty(),
        "every binding requirement has a leaf"
    );
    provider.asked.lock().expect("lock").clear();

    // Unchanged spec: nothing is asked again.
    let again = plan_tree(
        &client,
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    assert_eq!(again.calls, 0);

    // Edit one requirement's text: the section is planned again, and so is the root, whose
    // request holds its subtree's text (design: spec.node-text).
    let edited = text.replace(
        "within 10 ms at p99",
        "within 10 ms at p99, they are cached",
    );
    assert_ne!(edited, text);
    let tree2 = specc_passes::parse_spec(FileId(0), &edited).tree;
    let third = plan_tree(
        &client,
        &tree2,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    let asked = provider.asked.lock().expect("lock").clone();
    let section = tree2
        .nodes()
        .find(|n| n.prose.contains("they are cached"))
        .expect("edited node")
        .id
        .as_str()
        .to_owned();
    assert!(!asked.is_empty());
    assert!(
        asked
            .iter()
            .all(|id| id.is_empty() || id == &section || id.starts_with(&format!("{section}/"))),
        "only the root and {section}'s subtree: {asked:?}"
    );
    assert_eq!(third.calls, asked.len());
}

#[tokio::test]
async fn another_model_or_other_limits_do_not_reuse_cached_answers() {
    let tree = fixture_tree("job-queue");
    let provider = counting();
    let mut cache = Cache::new();
    let nodes = tree.nodes().count();
    let first = plan_tree(
        &client(provider.clone()),
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    assert_eq!(first.calls, nodes);
    // The same provider under another model name: its answers are not the first model's.
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m2\"\n",
    )
    .expect("config");
    let other =
        Client::from_config(config, &|_| None, None).with_provider("p", provider.clone(), 1);
    let second = plan_tree(
        &other,
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    assert_eq!(second.calls, nodes, "another model plans afresh");
    // Other limits are part of what a planner is told: asked again.
    let wider = Limits {
        max_width: 30,
        ..Limits::default()
    };
    let third = plan_tree(
        &client(provider.clone()),
        &tree,
        wider,
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    assert_eq!(third.calls, nodes);
    // And back to the first model and limits: all cached.
    let fourth = plan_tree(
        &client(provider),
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    assert_eq!(fourth.calls, 0);
}

#[tokio::test]
async fn planning_stops_at_the_planner_call_limit_and_keeps_what_it_paid_for() {
    let tree = fixture_tree("twenty-sections");
    let provider = counting();
    let mut cache = Cache::new();
    let tight = Limits {
        planner_calls: 8,
        ..Limits::default()
    };
    let stopped = plan_tree(
        &client(provider.clone()),
        &tree,
        tight,
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await;
    assert!(
        matches!(stopped, Err(specc_plan::PlanError::CallLimit(8))),
        "{stopped:?}"
    );
    // A call and its repairs must fit: it stopped with room for fewer than three more.
    let asked = provider.asked.lock().expect("lock").len();
    assert!((6..=8).contains(&asked), "{asked} calls");
    // With room, planning goes on from the cache: the calls already made are not made again.
    let nodes = tree.nodes().count();
    let done = plan_tree(
        &client(provider),
        &tree,
        Limits::default(),
        "",
        &specc_passes::plan::Commands::default(),
        &mut cache,
    )
    .await
    .expect("planned");
    assert_eq!(done.calls, nodes - asked);
}

/// Every planner is told the line budget the VCS keeps, before any code is written
/// (design: runtime.landing-refusals), at whatever figure the limits hold.
#[tokio::test]
async fn every_planner_request_carries_the_line_budget_and_says_what_it_means() {
    let tree = fixture_tree("job-queue");
    let provider = counting();
    let tight = Limits {
        line_budget: 250,
        ..Limits::default()
    };
    let planned = plan_tree(
        &client(provider.clone()),
        &tree,
        tight,
        "",
        &specc_passes::plan::Commands::default(),
        &mut Cache::new(),
    )
    .await
    .expect("planned");
    let budgets = provider.budgets.lock().expect("lock").clone();
    assert_eq!(budgets.len(), planned.calls);
    assert!(!budgets.is_empty());
    assert!(budgets.iter().all(|b| *b == (250, true)), "{budgets:?}");
}
