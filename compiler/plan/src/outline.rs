//! A deterministic planner that needs no model: it splits every intent node along the spec's
//! own outline (a `plan` child per child section, a `work` leaf per requirement) and decides
//! one `<node>.approach` per node. It answers the same request the same way, so it makes
//! recordings for replay fixtures, and it is what tests plan with.

use specc_llm::{BoxFuture, LlmError, Provider, Request, Response, ToolCall, Usage};

use crate::coordinator;
use crate::planner::TOOL;

pub struct OutlinePlanner {
    name: String,
}

impl OutlinePlanner {
    pub fn new(name: impl Into<String>) -> OutlinePlanner {
        OutlinePlanner { name: name.into() }
    }
}

fn slug(id: &str) -> String {
    if id.is_empty() {
        "root".to_owned()
    } else {
        id.replace('/', "-")
    }
}

/// A short sibling key: the last part of an intent id (`net/framing` → `framing`), or for a
/// positional requirement id (`net/framing#2`) `req-2`.
fn key(id: &str) -> String {
    match id.rsplit_once('#') {
        Some((_, n)) => format!("req-{n}"),
        None => id.rsplit('/').next().unwrap_or(id).to_owned(),
    }
}

impl Provider for OutlinePlanner {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: serde_json::Value = request
            .messages
            .get(1)
            .and_then(|m| serde_json::from_str(&m.text).ok())
            .unwrap_or_default();
        if request
            .tools
            .first()
            .is_some_and(|t| t.name == coordinator::TOOL)
        {
            return Box::pin(async move { Ok(merge(&user)) });
        }
        let node = &user["node"];
        let id = node["id"].as_str().unwrap_or_default();
        let title = node["title"].as_str().unwrap_or_default();
        // The node's child sections: those shown, or outlined, whose parent it is.
        let sections = node["sections"].as_array().into_iter().flatten();
        let outlined = node["outline"].as_array().into_iter().flatten();
        let mut children: Vec<serde_json::Value> = sections
            .chain(outlined)
            .filter(|c| c["parent"].as_str() == Some(id))
            .filter_map(|c| c["id"].as_str())
            .map(|c| {
                serde_json::json!({"key": key(c), "kind": "plan", "title": c, "covers_nodes": [c],
                    "instructions": format!("Plan `{c}`."), "read_scope": [format!("design-docs/{}.md", slug(c))]})
            })
            .collect();
        // The node's own requirements: those of its subsections are their planners'.
        let own = node["requirements"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["section"].as_str() == Some(id));
        for r in own {
            let rid = r["id"].as_str().unwrap_or_default();
            let text = r["text"].as_str().unwrap_or_default();
            children.push(serde_json::json!({
                "key": key(rid), "kind": "work", "title": text.chars().take(60).collect::<String>(),
                "covers_nodes": [id], "covers_requirements": [rid],
                "instructions": format!("Implement exactly this requirement, with a test: {text}"),
                "write_scope": [format!("src/{}/{}.rs", slug(id), slug(rid))],
                "acceptance": [format!("cargo test {}", slug(rid).to_lowercase())]
            }));
        }
        let answer = serde_json::json!({
            "decisions": [{"id": format!("{}.approach", slug(id)),
                "decision": format!("`{title}` is built as one module per requirement under src/{}/.", slug(id)),
                "rationale": "the spec's outline is the plan's outline"}],
            "children": children
        });
        let prompt: usize = request.messages.iter().map(|m| m.text.len()).sum();
        let usage = Usage {
            input: prompt as u64 / 4,
            cached_input: 0,
            output: answer.to_string().len() as u64 / 4,
        };
        let mut r = Response::text("outline", "", usage);
        r.tool_calls = vec![ToolCall {
            id: format!("plan-{}", slug(id)),
            name: TOOL.into(),
            arguments: answer,
        }];
        Box::pin(async move { Ok(r) })
    }
}

/// The outline planner's merge: the first owner's decision stands, and says so.
fn merge(user: &serde_json::Value) -> Response {
    let first = user["decisions"][0]["decision"]
        .as_str()
        .unwrap_or_default();
    let arguments = serde_json::json!({
        "decision": first,
        "rationale": "the first owner's decision stands; the others follow it",
    });
    let mut r = Response::text("outline", "", Usage::default());
    r.tool_calls = vec![ToolCall {
        id: "merge".to_owned(),
        name: coordinator::TOOL.into(),
        arguments,
    }];
    r
}
