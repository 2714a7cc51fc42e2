//! The landing's line budget, kept at `done`: a file the work would leave over the budget
//! goes back to the worker as `done`'s result while it can still split it, instead of
//! being refused by the VCS after its conversation ended.
//! design: runtime.landing-refusals

use serde::Serialize;

use crate::checkouts::Diff;
use crate::tools::Toolbox;

/// A file the work would grow past the line budget.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct OverBudget {
    pub path: String,
    pub lines: usize,
    pub budget: usize,
    /// The base holds the file already (under the budget): if the worker cannot split it,
    /// the VCS's refusal schedules a split task for it (design: runtime.megafile).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub existing: bool,
}

impl OverBudget {
    /// What the worker is told to do about it.
    pub(crate) fn failure(&self) -> String {
        let OverBudget {
            path,
            lines,
            budget,
            ..
        } = self;
        format!(
            "line budget: `{path}` would have {lines} lines, over the budget of {budget}; the \
             VCS refuses it. Split it into files of at most {budget} lines within your write \
             scope (a file that must stay whole: call `flag_big_file` with its path)"
        )
    }
}

/// The files of `diff` the VCS would refuse for their size: grown past the budget, not
/// flagged by this attempt (`flagged`) or before it (those become a split task: design:
/// runtime.megafile).
pub(super) async fn over_budget(
    tools: &Toolbox,
    diff: &Diff,
    flagged: &[String],
) -> Vec<OverBudget> {
    let repo = &tools.base.repo;
    let budget = repo.line_budget();
    let held = repo.flagged_now();
    let mut over = Vec::new();
    for c in &diff.changes {
        let Some(new) = &c.new else { continue };
        let lines = specc_vcs::line_count(new);
        if lines <= budget || flagged.contains(&c.path) || held.contains(&c.path) {
            continue;
        }
        let before = match c.expected {
            None => 0,
            Some(_) => repo
                .read(tools.base.commit, &c.path)
                .await
                .map_or(0, |b| specc_vcs::line_count(&b)),
        };
        if lines > before {
            over.push(OverBudget {
                path: c.path.clone(),
                lines,
                budget,
                existing: before > 0,
            });
        }
    }
    over
}
