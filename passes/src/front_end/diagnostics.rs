//! The diagnostics the spec front end reports, each built in one cold function.

use specc_ir::{Diagnostic, Span, codes};

#[cold]
pub(super) fn duplicate_node(id: &str, here: Span, first: Span, renamed: &str) -> Diagnostic {
    Diagnostic::new(codes::DUPLICATE_NODE_ID, format!("duplicate section id `{id}`"))
        .with_primary(here, format!("this section's id is `{id}` again"))
        .with_secondary(first, "first used here")
        .with_help(format!(
            "rename one heading or give it an explicit id, e.g. `{{#{id}-v2}}`; this one is called `{renamed}` for now"
        ))
}

#[cold]
pub(super) fn duplicate_tag(tag: &str, here: Span, first: Span, renamed: &str) -> Diagnostic {
    Diagnostic::new(
        codes::DUPLICATE_REQUIREMENT_TAG,
        format!("duplicate requirement tag `[{tag}]`"),
    )
    .with_primary(here, "tag used again here")
    .with_secondary(first, "first used here")
    .with_help(format!(
        "give each requirement its own tag; this one is `{renamed}` for now"
    ))
}

#[cold]
pub(super) fn invalid_id(id: &str, heading: Span) -> Diagnostic {
    Diagnostic::new(codes::INVALID_NODE_ID, format!("`{{#{id}}}` is not a valid section id"))
        .with_primary(heading, "this heading's explicit id")
        .with_help("an id is letters, digits and `- _ . /`, with no empty `/` segment; the heading's slug is used instead")
}

#[cold]
pub(super) fn empty_heading(heading: Span, fallback: &str) -> Diagnostic {
    Diagnostic::new(
        codes::EMPTY_HEADING,
        "heading has no text to make an id from",
    )
    .with_primary(heading, format!("called `{fallback}` for now"))
    .with_help("give the heading a title, or an explicit id such as `{#storage}`")
}

#[cold]
pub(super) fn empty_decision(span: Span) -> Diagnostic {
    Diagnostic::new(codes::EMPTY_DECISION, "`Decision:` with nothing decided")
        .with_primary(span, "this blockquote")
        .with_help("write the decision after `Decision:`, e.g. `> Decision: pages are 4096 bytes. {#storage.page-size}`")
}

#[cold]
pub(super) fn tag_without_keyword(tag: &str, span: Span) -> Diagnostic {
    Diagnostic::new(codes::TAG_WITHOUT_KEYWORD, format!("`[{tag}]` tags text with no requirement keyword"))
        .with_primary(span, "this tag")
        .with_help("a requirement needs an RFC 2119 keyword in capitals: MUST, MUST NOT, REQUIRED, SHALL, SHALL NOT, SHOULD, SHOULD NOT, RECOMMENDED, NOT RECOMMENDED, MAY or OPTIONAL")
}
