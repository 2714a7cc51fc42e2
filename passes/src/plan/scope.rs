//! Siblings that may run at the same time must not write the same paths. Overlap is decided
//! on the literal part of each path or glob (up to its first wildcard): `src/store/*` and
//! `src/store/pages.rs` may overlap; `src/store/*` and `src/net/*` cannot. When two siblings
//! may overlap and neither depends on the other, the later one is made to depend on the
//! earlier (serialised), and a warning says so.

use specc_ir::plan::PlannerAnswer;
use specc_ir::{Diagnostic, codes};

/// Whether two write scopes (paths or globs) may name a common path.
pub fn scopes_may_overlap(a: &str, b: &str) -> bool {
    let literal = |s: &str| {
        let end = s.find(['*', '?', '[', '{']).unwrap_or(s.len());
        s[..end].to_owned()
    };
    let (la, lb) = (literal(a), literal(b));
    let exact = |s: &str, l: &str| s.len() == l.len();
    match (exact(a, &la), exact(b, &lb)) {
        // Two plain paths: the same path, or one is a directory holding the other.
        (true, true) => {
            la == lb || lb.starts_with(&format!("{la}/")) || la.starts_with(&format!("{lb}/"))
        }
        _ => la.starts_with(&lb) || lb.starts_with(&la),
    }
}

/// Serialises siblings of `answer` whose write scopes may overlap and that do not already
/// depend on one another (directly or through others); returns a warning for each.
pub fn serialise_overlapping_writes(answer: &mut PlannerAnswer) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let n = answer.children.len();
    for j in 0..n {
        for i in 0..j {
            let (a, b) = (&answer.children[i], &answer.children[j]);
            let overlap = a.write_scope.iter().find_map(|x| {
                b.write_scope
                    .iter()
                    .find(|y| scopes_may_overlap(x, y))
                    .map(|y| (x.clone(), y.clone()))
            });
            let Some((x, y)) = overlap else { continue };
            if depends(answer, j, i) || depends(answer, i, j) {
                continue;
            }
            let (first, second) = (a.key.clone(), b.key.clone());
            answer.children[j].depends_on.push(first.clone());
            out.push(
                Diagnostic::new(
                    codes::WRITE_SCOPE_OVERLAP,
                    format!("`{first}` and `{second}` may both write `{x}` / `{y}`; `{second}` now waits for `{first}`"),
                )
                .with_help("give siblings disjoint write scopes so they can run at the same time"),
            );
        }
    }
    out
}

/// Whether child `from` depends on child `to`, directly or through other siblings.
fn depends(answer: &PlannerAnswer, from: usize, to: usize) -> bool {
    let target = &answer.children[to].key;
    let mut stack = vec![from];
    let mut seen = vec![false; answer.children.len()];
    while let Some(k) = stack.pop() {
        if std::mem::replace(&mut seen[k], true) {
            continue;
        }
        for dep in &answer.children[k].depends_on {
            if dep == target {
                return true;
            }
            if let Some(next) = answer.children.iter().position(|c| &c.key == dep) {
                stack.push(next);
            }
        }
    }
    false
}
