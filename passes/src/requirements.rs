//! `req: <id>` references against the spec: a reference names a requirement by the id the
//! spec gives it (its tag, `R-3`, or its full id, `storage/pages#2`). One that names no
//! requirement of the spec (misspelt, or removed from the spec since) is E0215, with the
//! nearest id as a did-you-mean.
//! design: passes.requirement-references

use specc_ir::{Diagnostic, IntentTree, codes};

use crate::references::Reference;

/// How a requirement reference resolves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReqResolution {
    /// The spec has it.
    Known,
    /// The spec has no such requirement; the closest id, when one is close.
    Unknown { closest: Option<String> },
}

/// Every requirement id of `tree`, in document order.
pub fn requirement_ids(tree: &IntentTree) -> Vec<String> {
    tree.nodes()
        .flat_map(|n| n.requirements.iter().map(|r| r.id.as_str().to_owned()))
        .collect()
}

/// How a reference to `id` resolves against `ids` (sorted).
pub fn resolve(id: &str, ids: &[String]) -> ReqResolution {
    if ids.binary_search_by(|k| k.as_str().cmp(id)).is_ok() {
        return ReqResolution::Known;
    }
    ReqResolution::Unknown {
        closest: crate::spelling::closest(id, ids.iter().map(String::as_str)).map(str::to_owned),
    }
}

/// E0215 for a reference to a requirement the spec does not have.
#[cold]
pub fn unknown(r: &Reference, closest: Option<&str>) -> Diagnostic {
    let d = Diagnostic::new(
        codes::UNKNOWN_REQUIREMENT,
        format!("the spec has no requirement `{}`", r.id),
    )
    .with_primary(r.span, "this reference");
    match closest {
        Some(near) => d.with_help(format!("did you mean `{near}`?")),
        None => d.with_help(
            "reference a requirement by the id the spec gives it (`specc plan SPEC --format json` lists them), or remove the reference if the requirement left the spec",
        ),
    }
}
