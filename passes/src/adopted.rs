//! Sections of a spec that describe code which already exists: `specc adopt` lists them in
//! the front matter's `[adopted]` table, each node id with the digest of its own content
//! (not its children's) as adopted. The part of the spec a build plans is the spec without
//! them: an adopted node whose content is unchanged loses its requirements, checks and
//! examples (the code has them) and, once it has no children left, the node itself; an
//! adopted node that was edited since is planned like a new one, on top of the existing
//! code. The root's prose tells the planner what was adopted. Pure.
//! design: driver.adopt

use specc_ir::{Diagnostic, IntentNode, IntentTree, codes};

/// The front matter's table of adopted sections.
pub const TABLE: &str = "adopted";

/// What the adopted part of a spec came to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Adoption {
    /// Adopted sections still as adopted: not built.
    pub kept: Vec<String>,
    /// Adopted sections edited since: planned again.
    pub edited: Vec<String>,
}

/// The digest of `node`'s own content, as the `[adopted]` table records it: 16 hex digits
/// of the content digest the fingerprint is made of (children are not part of it).
pub fn digest(node: &IntentNode) -> String {
    let d = crate::front_end::content_digest_of(node);
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// The part of `tree` a build plans, what the adoption came to and its warnings (W0110 for
/// an edited adopted section, W0111 for an adopted id the spec no longer has). `None` when
/// the spec adopts nothing: plan it whole.
pub fn planned_part(tree: &IntentTree) -> Option<(IntentTree, Adoption, Vec<Diagnostic>)> {
    let table = tree.front_matter.as_ref()?.table.get(TABLE)?.as_object()?;
    let mut adoption = Adoption::default();
    let mut out = tree.clone();
    let mut described = Vec::new();
    keep(&mut out.root, table, &mut adoption, &mut described, true);
    let mut diagnostics = Vec::new();
    for id in &adoption.edited {
        diagnostics.push(Diagnostic::new(
            codes::ADOPTED_EDITED,
            format!("the adopted section `{id}` was edited since it was adopted: it is planned and built on top of the existing code"),
        ).with_help("to keep it as existing code instead, undo the edit or record its new digest with `specc adopt --refresh`"));
    }
    for id in table.keys() {
        if tree.node(id).is_none() {
            diagnostics.push(
                Diagnostic::new(
                    codes::ADOPTED_UNKNOWN,
                    format!("`[adopted]` names `{id}`, which the spec has no section for"),
                )
                .with_help("remove it from the front matter, or restore the section"),
            );
        }
    }
    if !described.is_empty() {
        let mut note = String::from(
            "This project adopted an existing code base, which every task starts from. These sections describe code that exists and is kept as it is (do not plan or rewrite them; build on them):",
        );
        for d in described.iter().take(40) {
            note.push_str("\n- ");
            note.push_str(d);
        }
        if described.len() > 40 {
            note.push_str(&format!("\n- … and {} more", described.len() - 40));
        }
        out.root.prose = if out.root.prose.is_empty() {
            note
        } else {
            format!("{}\n\n{note}", out.root.prose)
        };
    }
    Some((out, adoption, diagnostics))
}

/// Whether `node` stays in the planned part, after its children were filtered.
fn keep(
    node: &mut IntentNode,
    table: &serde_json::Map<String, serde_json::Value>,
    adoption: &mut Adoption,
    described: &mut Vec<String>,
    root: bool,
) -> bool {
    let id = node.id.as_str().to_owned();
    let as_adopted = match table.get(&id).and_then(|v| v.as_str()) {
        Some(d) if d == digest(node) => true,
        Some(_) => {
            adoption.edited.push(id.clone());
            false
        }
        None => false,
    };
    if as_adopted {
        adoption.kept.push(id.clone());
        if !root {
            described.push(format!("`{id}`: {}", node.title));
        }
        node.requirements.clear();
        node.checks.clear();
        node.examples.clear();
    }
    node.children
        .retain_mut(|c| keep(c, table, adoption, described, false));
    root || !as_adopted || !node.children.is_empty()
}

/// The test command of an adopted package kept as it was: what every task that writes in
/// the package must keep passing (design: driver.adopt).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptChecks {
    /// The package's section.
    pub node: String,
    /// The package's directory, relative to the repository (empty: its root).
    pub dir: String,
    pub checks: Vec<specc_ir::AcceptanceCheck>,
}

/// The checks of the adopted sections of `tree` still as adopted (their test commands),
/// each with its package's directory: the parent of the manifest `specc adopt` names in the
/// section's first paragraph (`The Rust package `tiny` (Cargo.toml).`), else the common
/// directory of its modules' sections. Empty when the spec adopts nothing.
pub fn kept_checks(tree: &IntentTree) -> Vec<KeptChecks> {
    let Some(table) = tree
        .front_matter
        .as_ref()
        .and_then(|f| f.table.get(TABLE))
        .and_then(|t| t.as_object())
    else {
        return Vec::new();
    };
    tree.nodes()
        .filter(|n| !n.checks.is_empty())
        .filter(|n| table.get(n.id.as_str()).and_then(|v| v.as_str()) == Some(digest(n).as_str()))
        .map(|n| KeptChecks {
            node: n.id.as_str().to_owned(),
            dir: package_dir(n),
            checks: n.checks.clone(),
        })
        .collect()
}

/// An adopted package section's directory (see [`kept_checks`]).
fn package_dir(n: &IntentNode) -> String {
    let first = n
        .text
        .lines()
        .find(|l| l.contains("package `") || l.contains("code `"));
    let manifest = first.and_then(|l| {
        let inner = l.rsplit_once('(')?.1.split_once(')')?.0.trim();
        (!inner.contains(' ')).then_some(inner)
    });
    if let Some(m) = manifest {
        return m
            .rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_owned());
    }
    let paths: Vec<&str> = n
        .children
        .iter()
        .map(|c| c.title.trim_matches('`'))
        .collect();
    let Some(first) = paths.first() else {
        return String::new();
    };
    let mut dir: Vec<&str> = first.split('/').collect();
    dir.pop();
    for p in &paths[1..] {
        let parts: Vec<&str> = p.split('/').collect();
        let same = dir.iter().zip(&parts).take_while(|(a, b)| a == b).count();
        dir.truncate(same.min(parts.len().saturating_sub(1)));
    }
    dir.join("/")
}

/// Whether the planned part asks for anything: a requirement or a check somewhere. A spec
/// whose every section is adopted and unchanged has nothing to build, and no planner is
/// asked.
pub fn has_work(tree: &IntentTree) -> bool {
    tree.nodes()
        .any(|n| !n.requirements.is_empty() || !n.checks.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{digest, has_work, planned_part};
    use specc_ir::FileId;

    #[test]
    fn unchanged_adopted_sections_leave_only_new_work_and_an_edit_is_planned() {
        let body =
            "# P\n\n## A {#a}\n\n- [A-1] A MUST stay.\n\n## B {#b}\n\n- [B-1] B MUST stay.\n";
        let tree = crate::parse_spec(FileId(0), body).tree;
        let table: String = tree
            .nodes()
            .map(|n| format!("\"{}\" = \"{}\"\n", n.id.as_str(), digest(n)))
            .collect();
        let spec = |body: &str| format!("+++\n[adopted]\n{table}+++\n{body}");
        let all = crate::parse_spec(FileId(0), &spec(body)).tree;
        let (part, adoption, diagnostics) = planned_part(&all).expect("adopts");
        assert!(
            !has_work(&part) && part.root.children.is_empty(),
            "{part:?}"
        );
        assert_eq!(adoption.kept, ["", "a", "b"]);
        assert!(diagnostics.is_empty());
        assert!(part.root.prose.contains("`a`: A") && part.root.prose.contains("`b`: B"));
        let edited = body.replace("B MUST stay.", "B MUST stay, and grow.")
            + "\n## C {#c}\n\n- [C-1] C MUST come.\n";
        let tree = crate::parse_spec(FileId(0), &spec(&edited)).tree;
        let (part, adoption, diagnostics) = planned_part(&tree).expect("adopts");
        let ids: Vec<&str> = part.root.children.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["b", "c"]);
        assert_eq!(adoption.edited, ["b"]);
        assert_eq!(diagnostics.len(), 1);
        assert!(has_work(&part));
    }
}
