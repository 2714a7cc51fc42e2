//! The salsa side of the passes: the `Db` trait, the inputs, and the tracked queries.
//!
//! The driver owns the one concrete database; this module only declares what it must
//! provide. Queries are pure functions of their inputs.
//!
//! Incrementality is layered so that an edit reaches only what it changes:
//! * [`parse_spec`] re-runs on any edit of the spec text (the front end is one linear pass),
//!   and [`node_index`] (id → place in the tree) with it;
//! * [`node_content`] projects one node out of the parse with spans made relative to the
//!   node's start and children reduced to their fingerprints. It re-runs for every node, but
//!   its value is equal for a node the edit did not reach, so salsa backdates it and
//! * [`node_summary`] — and every later per-node query, such as building a planner
//!   request — re-executes only for the nodes on the edit's path to the root.
//!
//! design: passes.salsa-layering

use std::collections::HashMap;

use specc_ir::{FileId, Fingerprint, IntentNode, Level, NodeId, Span};

use crate::front_end::{self, Parsed};

#[salsa::db]
pub trait Db: salsa::Database {}

/// A spec file: its path (for messages only), its file id and its text, as the driver read it.
#[salsa::input(debug)]
pub struct SpecFile {
    #[returns(ref)]
    pub path: String,
    #[returns(copy)]
    pub file_id: FileId,
    #[returns(ref)]
    pub text: String,
}

/// One node of one spec file, interned so that it can key per-node queries.
#[salsa::interned(debug)]
pub struct NodeKey<'db> {
    #[returns(copy)]
    pub file: SpecFile,
    #[returns(ref)]
    pub id: String,
}

/// The front end over the file's current text.
#[salsa::tracked(returns(ref))]
pub fn parse_spec(db: &dyn Db, file: SpecFile) -> Parsed {
    front_end::parse_spec(file.file_id(db), file.text(db))
}

/// Where each node sits in the tree: its id → the child indices leading to it from the root.
/// Built once per parse, so looking up a node costs its depth, not the tree's size.
#[salsa::tracked(returns(ref))]
pub fn node_index(db: &dyn Db, file: SpecFile) -> HashMap<String, Vec<u32>> {
    let root = &parse_spec(db, file).tree.root;
    let mut index = HashMap::new();
    let mut stack: Vec<(&IntentNode, Vec<u32>)> = vec![(root, Vec::new())];
    while let Some((node, path)) = stack.pop() {
        for (i, child) in node.children.iter().enumerate() {
            let mut child_path = path.clone();
            child_path.push(u32::try_from(i).unwrap_or(u32::MAX));
            stack.push((child, child_path));
        }
        index.insert(node.id.0.clone(), path);
    }
    index
}

/// One node's own content, independent of where in the file it sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeContent {
    /// The node with `children` emptied and every span relative to the node's start.
    pub node: IntentNode,
    /// The children's ids and fingerprints, in order.
    pub children: Vec<(NodeId, Fingerprint)>,
}

/// The content of the node `key`, or `None` when the spec has no such node.
#[salsa::tracked(returns(ref))]
pub fn node_content<'db>(db: &'db dyn Db, key: NodeKey<'db>) -> Option<NodeContent> {
    let file = key.file(db);
    let path = node_index(db, file).get(key.id(db))?;
    let mut node = &parse_spec(db, file).tree.root;
    for &i in path {
        node = node.children.get(i as usize)?;
    }
    Some(relative_content(node))
}

/// What a reader of one node needs at a glance: the figures `specc plan --emit intent` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSummary {
    pub id: NodeId,
    pub title: String,
    /// Requirement counts, indexed like [`Level::ALL`].
    pub by_level: [u32; 7],
    pub checks: u32,
    pub decisions: u32,
    pub non_goals: u32,
    pub fingerprint: Fingerprint,
}

impl NodeSummary {
    pub fn count(&self, level: Level) -> u32 {
        self.by_level[Level::ALL.iter().position(|l| *l == level).unwrap_or(0)]
    }
}

#[salsa::tracked(returns(ref))]
pub fn node_summary<'db>(db: &'db dyn Db, key: NodeKey<'db>) -> Option<NodeSummary> {
    let content = node_content(db, key).as_ref()?;
    let node = &content.node;
    let mut by_level = [0u32; 7];
    for r in &node.requirements {
        if let Some(i) = Level::ALL.iter().position(|l| *l == r.level) {
            by_level[i] += 1;
        }
    }
    let n = |len: usize| u32::try_from(len).unwrap_or(u32::MAX);
    Some(NodeSummary {
        id: node.id.clone(),
        title: node.title.clone(),
        by_level,
        checks: n(node.checks.len()),
        decisions: n(node.decisions.len()),
        non_goals: n(node.non_goals.len()),
        fingerprint: node.fingerprint,
    })
}

fn relative_content(node: &IntentNode) -> NodeContent {
    let base = node.span.start;
    let rel = |s: Span| Span {
        file: s.file,
        start: s.start - base.min(s.start),
        end: s.end - base.min(s.end),
    };
    let mut own = node.clone_without_children();
    own.span = rel(own.span);
    own.text_span = rel(own.text_span);
    own.requirements
        .iter_mut()
        .for_each(|r| r.span = rel(r.span));
    own.examples.iter_mut().for_each(|e| e.span = rel(e.span));
    own.checks.iter_mut().for_each(|c| c.span = rel(c.span));
    own.decisions.iter_mut().for_each(|d| d.span = rel(d.span));
    own.non_goals.iter_mut().for_each(|n| n.span = rel(n.span));
    let children = node
        .children
        .iter()
        .map(|c| (c.id.clone(), c.fingerprint))
        .collect();
    NodeContent {
        node: own,
        children,
    }
}
