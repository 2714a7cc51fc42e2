//! The tree's shape: depth and width limits, and no cycles among siblings' dependencies.

use std::collections::HashMap;

use specc_ir::plan::{ChildKind, PlannerAnswer};
use specc_ir::{Diagnostic, codes};

/// `depth` is the depth of the task that gave `answer` (the root is 0); its children are at
/// `depth + 1`. No task may be deeper than `max_depth`, so a `plan` child at `max_depth` is
/// refused here, at its parent, which can make it a work leaf: the child could not.
pub fn check_limits(
    node: &str,
    depth: usize,
    answer: &PlannerAnswer,
    max_depth: usize,
    max_width: usize,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let name = super::words::task_name(node);
    if depth + 1 > max_depth && !answer.children.is_empty() {
        out.push(
            Diagnostic::new(
                codes::PLAN_TOO_DEEP,
                format!("{name} at depth {depth} has children past the depth limit {max_depth}"),
            )
            .with_help("carry this task out as one piece, or raise [limits] depth in specc.toml"),
        );
    } else if depth + 1 == max_depth {
        for c in answer.children.iter().filter(|c| c.kind == ChildKind::Plan) {
            out.push(
                Diagnostic::new(
                    codes::PLAN_TOO_DEEP,
                    format!(
                        "`{}` under {name} is a plan child at depth {max_depth}, the depth limit: what it plans would be deeper",
                        c.key
                    ),
                )
                .with_help("make it a work leaf, or raise [limits] depth in specc.toml"),
            );
        }
    }
    if answer.children.len() > max_width {
        out.push(
            Diagnostic::new(
                codes::PLAN_TOO_WIDE,
                format!(
                    "{name} has {} children; the width limit is {max_width}",
                    answer.children.len()
                ),
            )
            .with_help(
                "group the children under fewer planned nodes, or raise [limits] width in specc.toml",
            ),
        );
    }
    out
}

/// Child keys name tasks (`parent/key`): each must be non-empty, hold no `/`, and be unique
/// among its siblings.
pub fn check_keys(node: &str, answer: &PlannerAnswer) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for c in &answer.children {
        let problem = if c.key.trim().is_empty() {
            Some("is empty")
        } else if c.key.contains('/') {
            Some("contains `/`")
        } else if !seen.insert(c.key.as_str()) {
            Some("is used by another sibling")
        } else {
            None
        };
        if let Some(problem) = problem {
            out.push(
                Diagnostic::new(
                    codes::INVALID_CHILD_KEY,
                    format!(
                        "the key `{}` of a child under {} {problem}",
                        c.key,
                        super::words::task_name(node)
                    ),
                )
                .with_help(
                    "give each child a short key of its own, without `/`: it names the task",
                ),
            );
        }
    }
    out
}

/// Unknown dependency keys and dependency cycles among the children of `answer`.
pub fn check_cycles(node: &str, answer: &PlannerAnswer) -> Vec<Diagnostic> {
    let index: HashMap<&str, usize> = answer
        .children
        .iter()
        .enumerate()
        .map(|(i, c)| (c.key.as_str(), i))
        .collect();
    let mut out = Vec::new();
    for c in &answer.children {
        for d in &c.depends_on {
            if !index.contains_key(d.as_str()) {
                out.push(
                    Diagnostic::new(
                        codes::UNKNOWN_DEPENDENCY,
                        format!(
                            "`{}` under {} depends on `{d}`, which is no sibling",
                            c.key,
                            super::words::task_name(node)
                        ),
                    )
                    .with_help("dependencies name siblings by their key"),
                );
            }
        }
    }
    // Depth-first search with colours; a grey node reached again closes a cycle.
    let n = answer.children.len();
    let mut colour = vec![0u8; n];
    for start in 0..n {
        if colour[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        colour[start] = 1;
        while let Some((k, next)) = stack.last_mut() {
            let deps = &answer.children[*k].depends_on;
            if *next >= deps.len() {
                colour[*k] = 2;
                stack.pop();
                continue;
            }
            let dep = &deps[*next];
            *next += 1;
            let Some(&j) = index.get(dep.as_str()) else {
                continue;
            };
            match colour[j] {
                0 => {
                    colour[j] = 1;
                    stack.push((j, 0));
                }
                1 => {
                    let from = stack.iter().position(|(x, _)| *x == j).unwrap_or(0);
                    let cycle: Vec<&str> = stack[from..]
                        .iter()
                        .map(|(x, _)| answer.children[*x].key.as_str())
                        .collect();
                    out.push(
                        Diagnostic::new(codes::DEPENDENCY_CYCLE, format!("under {}: {} → {}", super::words::task_name(node), cycle.join(" → "), answer.children[j].key))
                            .with_help("one of these dependencies is wrong: siblings run in an order, not in a circle"),
                    );
                    return out;
                }
                _ => {}
            }
        }
    }
    out
}
