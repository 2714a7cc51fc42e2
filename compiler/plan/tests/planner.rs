//! The planner protocol against a scripted provider: a valid answer is taken as is; an
//! invalid one is repaired with the errors quoted, at most twice.

use std::sync::Arc;

use specc_ir::FileId;
use specc_llm::{Client, LlmConfig, Response, Scripted, ToolCall, Usage};
use specc_plan::PlanError;
use specc_plan::planner::{Context, TOOL, ask, request};

fn tool_answer(args: serde_json::Value) -> Result<Response, specc_llm::LlmError> {
    let mut r = Scripted::text(
        "",
        Usage {
            input: 100,
            cached_input: 0,
            output: 50,
        },
    );
    r.tool_calls = vec![ToolCall {
        id: "call-1".into(),
        name: TOOL.into(),
        arguments: args,
    }];
    Ok(r)
}

fn valid() -> serde_json::Value {
    serde_json::json!({
        "decisions": [{"id": "storage.pages", "decision": "4 KiB pages", "rationale": "OS page"}],
        "children": [
            {"key": "pages", "kind": "work", "title": "Pages", "instructions": "Write pages.rs", "covers_requirements": ["R-1"], "write_scope": ["src/pages.rs"]},
            {"key": "log", "kind": "work", "title": "Log", "instructions": "Write wal.rs", "depends_on": ["pages"], "write_scope": ["src/wal.rs"]}
        ]
    })
}

fn cyclic() -> serde_json::Value {
    serde_json::json!({"decisions": [], "children": [
        {"key": "a", "kind": "work", "title": "A", "instructions": "x", "depends_on": ["b"]},
        {"key": "b", "kind": "work", "title": "B", "instructions": "y", "depends_on": ["a"]}
    ]})
}

fn setup(script: Vec<Result<Response, specc_llm::LlmError>>) -> (Client, Arc<Scripted>) {
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"planner-model\"\n",
    )
    .expect("config");
    let scripted = Arc::new(Scripted::new("p", script));
    let client =
        Client::from_config(config, &|_| None, None).with_provider("p", scripted.clone(), 1);
    (client, scripted)
}

fn tree() -> specc_ir::IntentTree {
    specc_passes::parse_spec(
        FileId(0),
        "# Store\n\n## Storage\n\n- [R-1] The store MUST persist pages.\n",
    )
    .tree
}

fn node() -> specc_ir::IntentNode {
    tree().root.children[0].clone()
}

fn checks(a: &specc_ir::plan::PlannerAnswer) -> Vec<specc_ir::Diagnostic> {
    specc_passes::plan::check_cycles("storage", a)
}

#[tokio::test]
async fn a_valid_answer_takes_one_call_and_the_request_forces_the_tool() {
    let (client, scripted) = setup(vec![tool_answer(valid())]);
    let req = request(&tree(), &node(), &Context::default(), 4096);
    let asked = ask(&client, "storage", req, &checks, None)
        .await
        .expect("valid");
    assert_eq!((asked.calls, asked.answer.children.len()), (1, 2));
    assert!(asked.unresolved.is_empty());
    let sent = &scripted.requests()[0];
    assert_eq!(sent.tool_choice, specc_llm::ToolChoice::Named(TOOL.into()));
    assert_eq!(sent.model, "planner-model");
    assert!(
        sent.messages[1].text.contains("R-1"),
        "the node's requirements are in the request"
    );
}

#[tokio::test]
async fn invalid_answers_are_repaired_with_the_errors_quoted() {
    let (client, scripted) = setup(vec![
        tool_answer(serde_json::json!({"children": [{"key": "a"}]})),
        tool_answer(cyclic()),
        tool_answer(valid()),
    ]);
    let req = request(&tree(), &node(), &Context::default(), 4096);
    let asked = ask(&client, "storage", req, &checks, None)
        .await
        .expect("repaired");
    assert_eq!(asked.calls, 3);
    let seen = scripted.requests();
    let last = |i: usize| {
        seen[i]
            .messages
            .last()
            .map(|m| m.text.clone())
            .unwrap_or_default()
    };
    assert!(last(1).contains("does not match the schema"), "{}", last(1));
    assert!(
        last(2).contains("E0307"),
        "the cycle is quoted: {}",
        last(2)
    );
}

#[tokio::test]
async fn after_two_repairs_the_errors_are_reported() {
    let (client, scripted) = setup(vec![
        tool_answer(cyclic()),
        tool_answer(cyclic()),
        tool_answer(cyclic()),
        tool_answer(valid()),
    ]);
    let req = request(&tree(), &node(), &Context::default(), 4096);
    match ask(&client, "storage", req, &checks, None).await {
        Err(PlanError::Invalid { task, problems }) => {
            assert_eq!(task, "storage");
            assert_eq!(problems[0].code, "E0307", "{problems:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        scripted.requests().len(),
        3,
        "one call and two repairs, no more"
    );
}

#[tokio::test]
async fn an_owned_id_that_survives_the_repairs_is_accepted_for_the_coordinator() {
    let owned = serde_json::json!({
        "decisions": [{"id": "net.port", "decision": "7001", "rationale": "r"}],
        "children": [{"key": "a", "kind": "work", "title": "A", "instructions": "x"}]
    });
    let (client, scripted) = setup(vec![
        tool_answer(owned.clone()),
        tool_answer(owned.clone()),
        tool_answer(owned),
    ]);
    let owners: std::collections::BTreeMap<String, specc_passes::plan::Owned> = [(
        "net.port".to_owned(),
        specc_passes::plan::Owned {
            owner: "net".to_owned(),
            decision: specc_ir::plan::PlannedDecision {
                id: "net.port".into(),
                decision: "7000".into(),
                rationale: "r".into(),
            },
        },
    )]
    .into();
    let req = request(&tree(), &node(), &Context::default(), 4096);
    let asked = ask(
        &client,
        "storage",
        req,
        &|a| specc_passes::plan::check_ownership("storage", a, &owners),
        None,
    )
    .await
    .expect("accepted with the conflict");
    assert_eq!(asked.calls, 3, "the planner was asked to yield twice first");
    assert_eq!(asked.unresolved.len(), 1);
    assert_eq!(asked.unresolved[0].code, "E0301");
    let seen = scripted.requests();
    assert!(
        seen[1]
            .messages
            .last()
            .is_some_and(|m| m.text.contains("E0301")),
        "the repair quotes the ownership error"
    );
}

fn malformed() -> Result<Response, specc_llm::LlmError> {
    Err(specc_llm::LlmError::MalformedToolCall {
        name: TOOL.into(),
        arguments: "{\"children\": [{\"key\": \"pa".into(),
        reason: "EOF while parsing a string".into(),
    })
}

#[tokio::test]
async fn a_tool_call_whose_arguments_are_not_json_is_repaired_not_fatal() {
    let (client, scripted) = setup(vec![malformed(), tool_answer(valid())]);
    let req = request(&tree(), &node(), &Context::default(), 4096);
    let asked = ask(&client, "storage", req, &checks, None)
        .await
        .expect("repaired");
    assert_eq!(asked.calls, 2);
    let repair = scripted.requests()[1]
        .messages
        .last()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(
        repair.contains("are not JSON (EOF while parsing a string)")
            && repair.contains("{\"children\": [{\"key\": \"pa"),
        "the parse error and the broken arguments are quoted: {repair}"
    );
}

#[tokio::test]
async fn malformed_calls_share_the_repair_budget() {
    let (client, scripted) = setup(vec![
        malformed(),
        malformed(),
        malformed(),
        tool_answer(valid()),
    ]);
    let req = request(&tree(), &node(), &Context::default(), 4096);
    match ask(&client, "storage", req, &checks, None).await {
        Err(PlanError::Model(specc_llm::LlmError::MalformedToolCall { .. })) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(scripted.requests().len(), 3, "one call and two repairs");
}
