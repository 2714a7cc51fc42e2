//! The Intent IR: what the spec asks for, as a tree of goal nodes.
//!
//! The front end (`specc-passes`) builds it from Markdown; the planner reads it. Every node
//! carries the span it came from and a fingerprint over its normalised content and its
//! children's fingerprints, so an edit changes exactly the fingerprints on its path to the root.
//! design: spec.node-ids
//! design: spec.requirements
//! design: spec.fingerprints

use serde::{Deserialize, Serialize};

use crate::{Fingerprint, Span};

/// A node's id: the slug path of its headings (`storage/page-cache`) or an explicit `{#id}`.
/// The root's id is the empty string.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub String);

impl NodeId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            f.write_str("(root)")
        } else {
            f.write_str(&self.0)
        }
    }
}

/// A requirement's id: an explicit tag (`R-12`) or `<node-id>#<n>` counted within its node.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequirementId(pub String);

impl RequirementId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RequirementId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The whole parsed spec.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentTree {
    /// `+++` TOML front matter, when present and valid.
    pub front_matter: Option<FrontMatter>,
    pub root: IntentNode,
}

impl IntentTree {
    /// Every node, parents before children, in document order. Iterative: no recursion.
    pub fn nodes(&self) -> impl Iterator<Item = &IntentNode> {
        let mut stack = vec![&self.root];
        std::iter::from_fn(move || {
            let node = stack.pop()?;
            stack.extend(node.children.iter().rev());
            Some(node)
        })
    }

    /// The node with id `id`, by a walk of the tree (O(nodes)); the salsa query
    /// `node_index` serves repeated look-ups.
    pub fn node(&self, id: &str) -> Option<&IntentNode> {
        self.nodes().find(|n| n.id.as_str() == id)
    }

    pub fn requirements(&self) -> impl Iterator<Item = &Requirement> {
        self.nodes().flat_map(|n| n.requirements.iter())
    }
}

/// Build options from the spec's front matter, kept as JSON values so every TOML value
/// survives the round trip; the driver interprets the keys it knows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrontMatter {
    pub span: Span,
    pub table: serde_json::Map<String, serde_json::Value>,
}

/// One goal: a heading and what stands under it up to the next heading of the same or
/// a higher level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntentNode {
    pub id: NodeId,
    pub title: String,
    /// Heading level 1-6; 0 for the root (whose title, if any, is the spec's first heading
    /// when that heading is an H1).
    pub level: u8,
    /// The node's prose, whitespace-normalised, paragraphs separated by a blank line.
    pub prose: String,
    /// The node's own Markdown source as written, from its heading to its first child's
    /// heading (or its end): paragraphs, lists, tables and fenced blocks, what the models
    /// read (design: spec.node-text). Its span is `text_span`.
    #[serde(default)]
    pub text: String,
    /// Where `text` is in the spec.
    #[serde(default)]
    pub text_span: Span,
    pub requirements: Vec<Requirement>,
    pub examples: Vec<Example>,
    pub checks: Vec<AcceptanceCheck>,
    pub decisions: Vec<SpecDecision>,
    pub non_goals: Vec<NonGoal>,
    pub children: Vec<IntentNode>,
    /// From the heading to the end of the section, children included.
    pub span: Span,
    pub fingerprint: Fingerprint,
}

impl IntentNode {
    /// A copy of this node with no children and no source text (its normalised content,
    /// which the fingerprint covers, is all a reader of one node's content compares): cheap
    /// next to cloning the subtree.
    pub fn clone_without_children(&self) -> IntentNode {
        IntentNode {
            id: self.id.clone(),
            title: self.title.clone(),
            level: self.level,
            prose: self.prose.clone(),
            text: String::new(),
            text_span: self.text_span,
            requirements: self.requirements.clone(),
            examples: self.examples.clone(),
            checks: self.checks.clone(),
            decisions: self.decisions.clone(),
            non_goals: self.non_goals.clone(),
            children: Vec::new(),
            span: self.span,
            fingerprint: self.fingerprint,
        }
    }
}

/// RFC 2119 levels, in capitals in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Level {
    Must,
    MustNot,
    Shall,
    ShallNot,
    Should,
    ShouldNot,
    May,
}

impl Level {
    pub const ALL: [Level; 7] = [
        Level::Must,
        Level::MustNot,
        Level::Shall,
        Level::ShallNot,
        Level::Should,
        Level::ShouldNot,
        Level::May,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Shall => "SHALL",
            Level::ShallNot => "SHALL NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
        }
    }

    /// MUST, MUST NOT, SHALL and SHALL NOT bind: a plan must cover them.
    pub fn is_binding(self) -> bool {
        matches!(
            self,
            Level::Must | Level::MustNot | Level::Shall | Level::ShallNot
        )
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a requirement was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequirementForm {
    /// A sentence or list item with an RFC 2119 keyword.
    Rfc2119,
    /// `THE SYSTEM SHALL …` with no trigger.
    EarsUbiquitous,
    /// `WHEN <trigger> … THE SYSTEM SHALL …`
    EarsEvent,
    /// `WHILE <state> … THE SYSTEM SHALL …`
    EarsState,
    /// `IF <condition> THEN … THE SYSTEM SHALL …`
    EarsUnwanted,
    /// `WHERE <feature> … THE SYSTEM SHALL …`
    EarsOptional,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    pub id: RequirementId,
    /// True when the id came from an explicit `[R-12]` tag.
    pub tagged: bool,
    pub level: Level,
    pub form: RequirementForm,
    /// The sentence or list item, whitespace-normalised, tag included.
    pub text: String,
    pub span: Span,
}

/// A fenced block that is not an acceptance check.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Example {
    /// The info string's first word, if any.
    pub lang: Option<String>,
    pub code: String,
    pub span: Span,
}

/// A fenced block whose info string holds the word `test`; `runner` says how it runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcceptanceCheck {
    pub runner: String,
    pub code: String,
    pub span: Span,
}

/// A `> Decision:` blockquote: fixed by the spec's author, binding on planners.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpecDecision {
    /// The explicit `{#area.name}` id, when given; it names the question the decision answers.
    pub id: Option<String>,
    /// The text after `Decision:`, whitespace-normalised, id attribute removed.
    pub text: String,
    pub rationale: Option<String>,
    pub span: Span,
}

/// An item of a Non-goals / Out of scope section.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NonGoal {
    pub text: String,
    pub span: Span,
}
