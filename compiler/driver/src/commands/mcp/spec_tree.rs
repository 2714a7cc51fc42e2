//! The spec's outline and one node's text, read from its Intent IR as `specc plan --emit
//! intent --format json` prints it.
//! design: driver.mcp

use serde_json::{Value, json};

use super::answer::{self, Answer, Ran};

/// Every node of the spec: id, title, level, requirement ids, and its children's ids.
pub(super) fn outline(ran: &Ran) -> Answer {
    let Some(root) = root(ran) else {
        return answer::of("specc_outline", ran);
    };
    let mut nodes = Vec::new();
    walk(&root, &mut |n| {
        nodes.push(json!({
            "id": n["id"], "title": n["title"], "level": n["level"],
            "requirements": n["requirements"].as_array().map_or(Vec::new(), |rs| {
                rs.iter().map(|r| r["id"].clone()).collect()
            }),
            "children": n["children"].as_array().map_or(Vec::new(), |cs| {
                cs.iter().map(|c| c["id"].clone()).collect()
            }),
        }));
    });
    let text = nodes
        .iter()
        .map(|n| {
            let depth = n["level"].as_u64().unwrap_or(1).saturating_sub(1) as usize;
            let id = n["id"].as_str().unwrap_or("(root)");
            format!(
                "{}{} {id}",
                "  ".repeat(depth),
                n["title"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    Answer::ok(json!({"nodes": nodes}), text)
}

/// The node `id`: its text as written, requirements, decisions and checks.
pub(super) fn node(ran: &Ran, id: &str) -> Answer {
    let Some(root) = root(ran) else {
        return answer::of("specc_node", ran);
    };
    let mut found = None;
    walk(&root, &mut |n| {
        if found.is_none() && n["id"] == id {
            found = Some(n.clone());
        }
    });
    match found {
        Some(n) => {
            let text = n["text"].as_str().unwrap_or_default().to_owned();
            let node = json!({"id": n["id"], "title": n["title"], "level": n["level"],
                              "text": n["text"], "requirements": n["requirements"],
                              "decisions": n["decisions"], "checks": n["checks"]});
            Answer::ok(node, text)
        }
        None => Answer::failed(
            specc_ir::codes::MCP_NO_NODE,
            &format!("the spec has no node `{id}`"),
            "specc_outline lists the nodes' ids",
        ),
    }
}

fn root(ran: &Ran) -> Option<Value> {
    let v: Value = serde_json::from_str(ran.out.trim()).ok()?;
    Some(v.get("tree")?.get("root")?.clone())
}

fn walk(n: &Value, f: &mut dyn FnMut(&Value)) {
    f(n);
    for c in n["children"].as_array().into_iter().flatten() {
        walk(c, f);
    }
}
