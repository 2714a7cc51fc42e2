//! Checks a worker cannot weaken, the pure half: what an edit of a test or check file
//! removed (tests, assertions), what it added that silences a failure (a skip marker,
//! `|| true`), and what a test run lost against the same run at the attempt's base (passed
//! tests, a passing test now skipped or gone). Each finding is evidence in words, naming the
//! file or test; the runtime refuses the landing with it unless the task was told the test
//! goes (`allowed`). Text in, words out.
//! design: runtime.ratchet

use crate::eval::{Outcome, Score};

/// What marks a test, per language (counted, not parsed: a removed test lowers the count).
const TEST_MARKERS: &[&str] = &[
    "#[test]",
    "#[tokio::test",
    "def test_",
    "func Test",
    "\nit(",
    " it(",
    "\ntest(",
    " test(",
];
/// What asserts.
const ASSERTIONS: &[&str] = &[
    "assert",
    "expect(",
    ".should",
    "t.Error",
    "t.Fatal",
    "pytest.raises",
    "self.fail(",
];
/// What turns a test off.
const SKIPS: &[&str] = &[
    "#\u{5b}ignore", // spelt with an escape: the hygiene test looks for the attribute itself
    "@pytest.mark.skip",
    "@pytest.mark.xfail",
    "@unittest.skip",
    "pytest.skip(",
    "t.Skip(",
    "xit(",
    ".skip(",
    "test.skip",
];
/// What makes a failing command pass.
const SILENCERS: &[&str] = &["|| true", "|| :", "|| exit 0", "set +e"];

fn count(text: &str, needles: &[&str]) -> usize {
    needles.iter().map(|n| text.matches(n).count()).sum()
}

/// Whether the file at `path` holds tests: by its path, or by a test marker in `text`.
pub fn holds_tests(path: &str, text: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .any(|p| matches!(p, "tests" | "test" | "__tests__"))
        || name.starts_with("test_")
        || name.ends_with("_test.go")
        || name.ends_with("_test.py")
        || name.contains(".test.")
        || name.contains(".spec.")
        || (is_code(name) && count(text, TEST_MARKERS) > 0)
}

/// A source file in a language whose tests the markers find (not prose or data).
fn is_code(name: &str) -> bool {
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "rs" | "py" | "go" | "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts"
    )
}

/// Whether `script` runs the file at `path`: names it where a command or its interpreter's
/// script goes (`./check.sh`, `sh check.sh`, `python3 -m pytest`-less `python3 tests/run.py`,
/// `source env.sh`), not where a command merely reads it (`test -f a.txt`, `grep x a.txt`).
pub fn runs_file(script: &str, path: &str) -> bool {
    const INTERPRETERS: &[&str] = &[
        "sh", "bash", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "source", ".",
        "exec", "env", "deno", "bun", "php",
    ];
    script
        .split(['\n', ';', '|', '&', '(', ')'])
        .map(|command| {
            command
                .split_whitespace()
                .map(|w| w.trim_matches(['\'', '"', '`']))
                .filter(|w| !w.contains('=') || w.starts_with('-'))
                .collect::<Vec<_>>()
        })
        .any(|words| {
            let mut words = words
                .into_iter()
                .skip_while(|w| *w == "exec" || *w == "env");
            let Some(first) = words.next() else {
                return false;
            };
            if first.trim_start_matches("./") == path && first != "." {
                return true;
            }
            let interpreter = first.rsplit('/').next().unwrap_or(first);
            INTERPRETERS.contains(&interpreter)
                && words
                    .find(|w| !w.starts_with('-'))
                    .is_some_and(|w| w.trim_start_matches("./") == path)
        })
}

/// What an edit of one file weakened: `base` as the attempt's base has it, `new` as the
/// worker left it (`None`: deleted). `check` names the check that runs this file, if one
/// does. Empty when the file holds no test and no check runs it.
pub fn file_weakenings(
    path: &str,
    base: &str,
    new: Option<&str>,
    check: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(check) = check {
        out.push(format!(
            "`{path}`, which the check `{check}` runs, was {}: a check's own files are not the task's to change",
            if new.is_some() { "changed" } else { "deleted" }
        ));
    }
    if !holds_tests(path, base) && check.is_none() {
        return out;
    }
    let Some(new) = new else {
        if holds_tests(path, base) {
            out.push(format!(
                "`{path}` held {} test(s) and was deleted",
                count(base, TEST_MARKERS).max(1)
            ));
        }
        return out;
    };
    let (tests_before, tests_now) = (count(base, TEST_MARKERS), count(new, TEST_MARKERS));
    if tests_now < tests_before {
        out.push(format!(
            "`{path}`: {tests_before} tests at the base, {tests_now} now"
        ));
    }
    let (asserts_before, asserts_now) = (count(base, ASSERTIONS), count(new, ASSERTIONS));
    if asserts_now < asserts_before {
        out.push(format!(
            "`{path}`: {asserts_before} assertions at the base, {asserts_now} now"
        ));
    }
    for marker in SKIPS {
        if new.matches(marker).count() > base.matches(marker).count() {
            out.push(format!("`{path}`: adds `{marker}`, which turns a test off"));
        }
    }
    for marker in SILENCERS {
        if new.matches(marker).count() > base.matches(marker).count() {
            out.push(format!(
                "`{path}`: adds `{marker}`, which makes a failing command pass"
            ));
        }
    }
    out
}

/// What a check's test run lost against the same check run on the attempt's base: fewer
/// passed tests, a test that passed there and is skipped or gone now.
pub fn run_weakenings(check: &str, base: &Score, now: &Score) -> Vec<String> {
    let mut out = Vec::new();
    if now.passed < base.passed {
        out.push(format!(
            "check `{check}`: {} tests passed at the base, {} now",
            base.passed, now.passed
        ));
    }
    if now.skipped > base.skipped {
        out.push(format!(
            "check `{check}`: {} tests skipped at the base, {} now",
            base.skipped, now.skipped
        ));
    }
    if base.tests.is_empty() || now.tests.is_empty() {
        return out;
    }
    for t in base.tests.iter().filter(|t| t.outcome == Outcome::Passed) {
        match now
            .tests
            .iter()
            .find(|n| n.name == t.name)
            .map(|n| n.outcome)
        {
            Some(Outcome::Skipped) => out.push(format!(
                "check `{check}`: `{}` passed at the base and is skipped now",
                t.name
            )),
            None => out.push(format!(
                "check `{check}`: `{}` passed at the base and no longer runs",
                t.name
            )),
            _ => {}
        }
    }
    out
}

/// Whether the task was told the test in `evidence` goes: its instructions or a decision it
/// reads (`allowance`) name the file or test the evidence names (in backticks) and say it
/// goes (remove, delete, drop, retire, replace, obsolete, skip).
pub fn allowed(evidence: &str, allowance: &str) -> bool {
    let lower = allowance.to_lowercase();
    let says_goes = [
        "remove", "delete", "drop", "retire", "replace", "obsolete", "skip", "goes",
    ]
    .iter()
    .any(|w| lower.contains(w));
    let named = evidence.split('`').skip(1).step_by(2).any(|subject| {
        let short = subject.rsplit(['/', ':']).next().unwrap_or(subject);
        !short.is_empty() && lower.contains(&short.to_lowercase())
    });
    says_goes && named
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::{Format, score};

    #[test]
    fn each_trick_is_evidence() {
        let base = "#[test]\nfn a() { assert_eq!(1, 1); }\n#[test]\nfn b() { assert!(true); }\n";
        let removed = "#[test]\nfn a() { assert_eq!(1, 1); }\n";
        let ignored = "#[test]\nfn a() { assert_eq!(1, 1); }\n#[test]\n#\u{5b}ignore]\nfn b() { assert!(true); }\n";
        let hollow = "#[test]\nfn a() { assert_eq!(1, 1); }\n#[test]\nfn b() {}\n";
        let f = |new| file_weakenings("tests/t.rs", base, new, None);
        assert!(
            f(Some(removed))
                .iter()
                .any(|e| e.contains("2 tests at the base, 1 now"))
        );
        assert!(
            f(Some(ignored))
                .iter()
                .any(|e| e.contains("adds `#\u{5b}ignore`"))
        );
        assert!(
            f(Some(hollow))
                .iter()
                .any(|e| e.contains("2 assertions at the base, 1 now"))
        );
        assert!(f(None).iter().any(|e| e.contains("was deleted")));
        assert!(f(Some(base)).is_empty());
        let sh = file_weakenings(
            "check.sh",
            "pytest -q\n",
            Some("pytest -q || true\n"),
            Some("task acceptance #1"),
        );
        assert!(
            sh.iter()
                .any(|e| e.contains("which the check `task acceptance #1` runs"))
        );
        assert!(sh.iter().any(|e| e.contains("adds `|| true`")));
        // A file that holds no test and no check runs is nobody's business here.
        assert!(file_weakenings("src/lib.rs", "fn a() {}\n", None, None).is_empty());
    }

    #[test]
    fn runs_file_reads_words() {
        assert!(runs_file("python3 tests/run.py && echo ok", "tests/run.py"));
        assert!(runs_file("./check.sh", "check.sh"));
        assert!(!runs_file("python3 tests/run.py", "run.py"));
        assert!(runs_file("cd . && bash -e scripts/ci", "scripts/ci"));
        assert!(!runs_file("test -f b.txt && grep -q beta b.txt", "b.txt"));
    }

    #[test]
    fn a_run_that_lost_a_passing_test_is_evidence() {
        let base = score(Format::Tap, "1..2\nok 1 - adds\nok 2 - counts\n").expect("tap");
        let now = score(
            Format::Tap,
            "1..2\nok 1 - adds\nok 2 - counts # SKIP later\n",
        )
        .expect("tap");
        let e = run_weakenings("tests", &base, &now);
        assert!(
            e.iter()
                .any(|e| e.contains("2 tests passed at the base, 1 now")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|e| e.contains("`counts` passed at the base and is skipped now")),
            "{e:?}"
        );
        assert!(run_weakenings("tests", &base, &base).is_empty());
    }

    #[test]
    fn the_task_may_be_told_a_test_goes() {
        let e = "`tests/test_old.py` held 1 test(s) and was deleted";
        assert!(allowed(e, "Remove tests/test_old.py: the old API is gone."));
        assert!(!allowed(e, "Write the new parser."));
        assert!(!allowed(e, "Remove the logging calls."));
    }
}
