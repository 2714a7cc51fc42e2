//! The landing's line budget, kept at `done`: a file the work would leave over the budget
//! goes back to the worker as `done`'s result while it can still split it, instead of
//! being refused by the VCS after its conversation ended.
//! design: runtime.landing-refusals

use serde::Serialize;

use crate::checkouts::{Diff, Scope, module_dir};
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
    /// The write scope's patterns when they admit no new file beside this one: the worker
    /// cannot split it there, and is told so (the bridge's cachetools build, stop 50).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_room: Vec<String>,
}

impl OverBudget {
    /// What the worker is told to do about it.
    pub(crate) fn failure(&self) -> String {
        let OverBudget {
            path,
            lines,
            budget,
            no_room,
            ..
        } = self;
        let over = format!(
            "line budget: `{path}` would have {lines} lines, over the budget of {budget}; the \
             VCS refuses it."
        );
        if no_room.is_empty() {
            return format!(
                "{over} Split it into files of at most {budget} lines within your write scope \
                 (a file that must stay whole: call `flag_big_file` with its path)"
            );
        }
        let scope: Vec<String> = no_room.iter().map(|p| format!("`{p}`")).collect();
        format!(
            "{over} Your write scope ({}) admits no other file to split it into: make it fit in \
             {budget} lines, or call `give_up` saying the scope needs room for more files (the \
             task is then re-planned and its scope can be widened); a file that must stay whole: \
             call `flag_big_file` with its path",
            scope.join(", ")
        )
    }
}

/// Whether `scope` admits another file to split `path` into: another file of its kind (its
/// extension) that it names, or a new name beside it (`name_part2.ext`, `part2_name.ext`,
/// `name2.ext`, the extension taken from the last dot and from the first, so `*_test.go` and
/// `*.test.ts` match), or one in the directory a split task would use (`dir/stem/part2.ext`,
/// design: runtime.megafile).
fn has_room(scope: &Scope, path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').map_or(("", path), |(d, n)| (d, n));
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    // Another file of the same kind the scope names, in any directory: code can move there.
    let kind = |p: &str| {
        p.rsplit('/')
            .next()
            .and_then(|n| n.rsplit_once('.'))
            .map(|(_, e)| e.to_owned())
    };
    let named = scope.patterns().iter().any(|p| {
        p != path
            && !p.contains(['*', '?', '[', '{'])
            && !path.starts_with(&format!("{p}/"))
            && kind(p) == kind(path)
    });
    let mut candidates = Vec::new();
    for (stem, ext) in [name.rsplit_once('.'), name.split_once('.')]
        .into_iter()
        .flatten()
        .filter(|(stem, _)| !stem.is_empty())
        .map(|(stem, ext)| (stem, format!(".{ext}")))
        .chain((!name.contains('.') || name.starts_with('.')).then(|| (name, String::new())))
    {
        candidates.push(format!("{prefix}{stem}_part2{ext}"));
        candidates.push(format!("{prefix}part2_{stem}{ext}"));
        candidates.push(format!("{prefix}{stem}2{ext}"));
        if !ext.is_empty() {
            candidates.push(format!("{}/part2{ext}", module_dir(path)));
        }
    }
    named || candidates.iter().any(|c| scope.allows(c))
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
            // A file the base holds goes to a split task of its own if the worker cannot
            // split it (design: runtime.megafile): the usual advice stands.
            let no_room = if before > 0 || has_room(&tools.scope, &c.path) {
                Vec::new()
            } else {
                tools.scope.patterns().to_vec()
            };
            over.push(OverBudget {
                path: c.path.clone(),
                lines,
                budget,
                existing: before > 0,
                no_room,
            });
        }
    }
    over
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(patterns: &[&str]) -> Scope {
        Scope::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn a_scope_of_one_file_has_no_room_to_split_it_and_a_directory_does() {
        assert!(!has_room(&scope(&["src/cache.py"]), "src/cache.py"));
        assert!(!has_room(
            &scope(&["README.md", "src/cache.py"]),
            "src/cache.py"
        ));
        assert!(has_room(&scope(&["src/**"]), "src/cache.py"));
        assert!(has_room(&scope(&["src/*.py"]), "src/cache.py"));
        assert!(has_room(&scope(&["src"]), "src/cache.py"));
        assert!(has_room(
            &scope(&["src/cache.py", "src/cache/**"]),
            "src/cache.py"
        ));
        assert!(!has_room(&scope(&["Makefile"]), "Makefile"));
        assert!(has_room(&scope(&["*"]), "Makefile"));
        // Test-file patterns: the name's first dot or its suffix.
        assert!(has_room(&scope(&["pkg/*_test.go"]), "pkg/cache_test.go"));
        assert!(has_room(
            &scope(&["src/**/*.test.ts"]),
            "src/a/cache.test.ts"
        ));
        assert!(has_room(&scope(&["*.spec.js"]), "cache.spec.js"));
        // Another file the scope names is room; a directory literal is room.
        assert!(has_room(
            &scope(&["src/cache.py", "src/cache_util.py"]),
            "src/cache.py"
        ));
        assert!(has_room(
            &scope(&["src/a.test.py", "src/a/**"]),
            "src/a.test.py"
        ));
        assert!(!has_room(&scope(&[".env"]), ".env"));
    }

    #[test]
    fn a_worker_without_room_is_told_to_give_up_for_a_wider_scope_not_to_split() {
        let over = |no_room: Vec<String>| OverBudget {
            path: "src/cache.py".into(),
            lines: 700,
            budget: 600,
            existing: false,
            no_room,
        };
        let roomy = over(Vec::new()).failure();
        assert!(
            roomy.contains("Split it into files of at most 600 lines"),
            "{roomy}"
        );
        let tight = over(vec!["src/cache.py".into()]).failure();
        assert!(
            tight.contains("(`src/cache.py`) admits no other file"),
            "{tight}"
        );
        assert!(tight.contains("`give_up`"), "{tight}");
        assert!(!tight.contains("Split it into files"), "{tight}");
    }
}
