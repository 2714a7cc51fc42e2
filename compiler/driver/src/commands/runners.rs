//! The spec's test blocks and specc.toml's `[runners]`: the front end refuses a runner it
//! does not know (E0105); a runner specc.toml declares is known, so its E0105 is dropped.
//! design: runtime.runners

use std::path::Path;

use specc_ir::{Diagnostic, IntentTree, codes};
use specc_sandbox::Runners;

/// The `[runners]` of specc.toml beside the spec (or `config`), if it has them. A file that
/// cannot be read or parsed gives none: the commands that use the configuration report it.
pub(crate) fn beside(spec: &Path, config: Option<&Path>) -> Runners {
    let dir = specc_project::spec_dir(Some(spec));
    let path = config.map_or_else(|| dir.join("specc.toml"), Path::to_path_buf);
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| specc_sandbox::parse_runners(&text).ok())
        .unwrap_or_default()
}

/// `diagnostics` without the E0105s of test blocks whose runner `runners` declares.
pub(crate) fn known<'d>(
    diagnostics: &'d [Diagnostic],
    tree: &IntentTree,
    runners: &Runners,
) -> Vec<&'d Diagnostic> {
    let declared: Vec<std::ops::Range<u32>> = tree
        .nodes()
        .flat_map(|n| n.checks.iter())
        .filter(|c| runners.contains_key(&c.runner))
        .map(|c| c.span.start..c.span.end.max(c.span.start + 1))
        .collect();
    diagnostics
        .iter()
        .filter(|d| {
            d.code != codes::UNKNOWN_TEST_RUNNER
                || !d
                    .primary
                    .as_ref()
                    .is_some_and(|l| declared.iter().any(|r| r.contains(&l.span.start)))
        })
        .collect()
}
