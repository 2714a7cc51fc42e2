//! Checks a worker cannot weaken, the pure half: what an edit of a test or check file
//! removed (tests, assertions), what it added that silences a failure (a skip marker,
//! `|| true`), and what a test run lost against the same run at the attempt's base (passed
//! tests, a passing test now skipped or gone). Each finding is evidence in words, naming the
//! file or test; the runtime refuses the landing with it unless the task was told the test
//! goes (`allowed`). Text in, words out.
//! design: runtime.ratchet

use crate::eval::{Outcome, Score};

/// What marks a test: `(file extension, marker)`. A marker of `""` extension applies to
/// every file. JavaScript's `it(` and `test(` count only at the start of a line.
const TEST_MARKERS: &[(&str, &str)] = &[
    ("rs", "#[test]"),
    ("rs", "#[tokio::test"),
    ("py", "def test_"),
    ("go", "func Test"),
];
/// What asserts, counted only in test files (a file under `tests/`, `test_*`, …).
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
    "it.skip(",
    "test.skip(",
    "describe.skip(",
];
/// What makes a failing command pass.
const SILENCERS: &[&str] = &["|| true", "|| :", "|| exit 0", "set +e"];

/// Occurrences of `needle` in `text` that start a word (the character before is not a
/// letter, digit or `_`): `xit(` is not in `exit(`, `assert` is not in `debug_assert`.
fn count(text: &str, needle: &str) -> usize {
    text.match_indices(needle)
        .filter(|(at, _)| {
            !text[..*at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .count()
}

fn count_all(text: &str, needles: &[&str]) -> usize {
    needles.iter().map(|n| count(text, n)).sum()
}

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, e)| e)
}

/// The tests `text` holds, by the markers of its language.
fn tests_in(path: &str, text: &str) -> usize {
    let ext = extension(path);
    let marked: usize = TEST_MARKERS
        .iter()
        .filter(|(e, _)| *e == ext)
        .map(|(_, m)| count(text, m))
        .sum();
    let js = matches!(
        ext,
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts"
    );
    let lines = if js {
        text.lines()
            .map(str::trim_start)
            .filter(|l| l.starts_with("it(") || l.starts_with("test("))
            .count()
    } else {
        0
    };
    marked + lines
}

/// Whether `path` is a test file by its name alone.
fn test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .any(|p| matches!(p, "tests" | "test" | "__tests__"))
        || name.starts_with("test_")
        || name.ends_with("_test.go")
        || name.ends_with("_test.py")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// Whether the file at `path` holds tests: by its path, or by a test marker in `text`.
pub fn holds_tests(path: &str, text: &str) -> bool {
    test_path(path) || tests_in(path, text) > 0
}

/// Test configuration: a file that decides which tests run (a change to one is checked by
/// running the checks on the base).
pub fn configures_tests(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(
        name,
        "conftest.py"
            | "pytest.ini"
            | "tox.ini"
            | "setup.cfg"
            | "pyproject.toml"
            | "Cargo.toml"
            | "package.json"
            | "Makefile"
            | "justfile"
            | "Justfile"
            | "noxfile.py"
    ) || name.starts_with("jest.config")
        || name.starts_with("vitest.config")
        || path.ends_with(".cargo/config.toml")
}

/// What one file's edit says about the checks: evidence a test run could refute (tests
/// removed: the run on the base is the ground truth when both runs are scored, and the
/// task may be told they go) and evidence no run refutes (assertions removed from a test
/// file, a test turned off, a command silenced).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub removals: Vec<String>,
    pub firm: Vec<String>,
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
/// worker left it (`None`: deleted). `run_by_check` says a check runs this file.
pub fn file_weakenings(path: &str, base: &str, new: Option<&str>, run_by_check: bool) -> Found {
    let mut found = Found::default();
    let tests = holds_tests(path, base);
    if !tests && !run_by_check {
        return found;
    }
    let Some(new) = new else {
        if tests {
            found.removals.push(format!(
                "`{path}` held {} test(s) and was deleted",
                tests_in(path, base).max(1)
            ));
        }
        return found;
    };
    let (before, now) = (tests_in(path, base), tests_in(path, new));
    if now < before {
        found
            .removals
            .push(format!("`{path}`: {before} tests at the base, {now} now"));
    }
    // Tests by name, not by count: one swapped for another is a removal too.
    let kept = test_names(path, new);
    for name in test_names(path, base) {
        if !kept.contains(&name) {
            found
                .removals
                .push(format!("`{path}`: the test `{name}` of the base is gone"));
        }
    }
    // An assertion that checks nothing, added where the base checked something.
    let (before, now) = (hollow(base), hollow(new));
    if now.len() > before.len() {
        let added: Vec<&String> = now.iter().filter(|h| !before.contains(h)).collect();
        let shown = added
            .first()
            .map_or_else(String::new, |h| format!(" (`{h}`)"));
        found.firm.push(format!(
            "`{path}`: adds an assertion that checks nothing{shown}"
        ));
    }
    if test_path(path) {
        let (before, now) = (count_all(base, ASSERTIONS), count_all(new, ASSERTIONS));
        if now < before {
            found.firm.push(format!(
                "`{path}`: {before} assertions at the base, {now} now"
            ));
        }
    }
    for marker in SKIPS {
        if count(new, marker) > count(base, marker) {
            found
                .firm
                .push(format!("`{path}`: adds `{marker}`, which turns a test off"));
        }
    }
    for marker in SILENCERS {
        if new.matches(marker).count() > base.matches(marker).count() {
            found.firm.push(format!(
                "`{path}`: adds `{marker}`, which makes a failing command pass"
            ));
        }
    }
    found
}

/// The names of the tests `text` defines, by its language: `def test_x` (Python),
/// `#[test] fn x` (Rust), `func TestX` (Go), `it("x"` / `test("x"` (JavaScript).
pub fn test_names(path: &str, text: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let ext = extension(path);
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
    for (i, l) in lines.iter().enumerate() {
        let name = match ext {
            "py" => l
                .strip_prefix("def test")
                .or_else(|| l.strip_prefix("async def test"))
                .map(|rest| format!("test{}", ident(rest))),
            "go" => l
                .strip_prefix("func Test")
                .map(|rest| format!("Test{}", ident(rest))),
            "rs" if l.starts_with("fn ") || l.starts_with("async fn ") => {
                let marked = lines[..i]
                    .iter()
                    .rev()
                    .take_while(|p| p.starts_with("#["))
                    .any(|p| p.starts_with("#[test]") || p.starts_with("#[tokio::test"));
                marked.then(|| ident(l.trim_start_matches("async ").trim_start_matches("fn ")))
            }
            "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts" => ["it(", "test("]
                .iter()
                .find_map(|p| l.strip_prefix(p))
                .and_then(|rest| {
                    let q = rest.chars().next().filter(|c| "'\"`".contains(*c))?;
                    Some(rest[1..].split(q).next()?.to_owned())
                }),
            _ => None,
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            out.push(n);
        }
    }
    out
}

/// Assertions that check nothing, as written: `assert True`, `assert 1`,
/// `self.assertTrue(True)`, `assert!(true)`, `assert_eq!(1, 1)`, `expect(true).toBe(true)`.
fn hollow(text: &str) -> Vec<String> {
    const TAUTOLOGIES: &[&str] = &[
        "assert True",
        "assert 1",
        "assert not False",
        "assertTrue(True)",
        "assertTrue(1)",
        "assertFalse(False)",
        "assertEqual(1, 1)",
        "assertEqual(True, True)",
        "assert!(true)",
        "assert_eq!(1, 1)",
        "assert_eq!(true, true)",
        "expect(true).toBe(true)",
        "expect(true).toBeTruthy()",
        "expect(1).toBe(1)",
        "assert.ok(true)",
        "assert(true)",
    ];
    text.lines()
        .map(str::trim)
        .filter_map(|l| {
            let l = l.trim_start_matches("self.").trim_end_matches([';', ',']);
            TAUTOLOGIES
                .iter()
                .find(|t| {
                    // `assert True` ends a statement; `assert True_x` is something else.
                    let word = t.ends_with(|c: char| c.is_alphanumeric());
                    l.starts_with(**t)
                        && !(word
                            && l[t.len()..]
                                .chars()
                                .next()
                                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.'))
                })
                .map(|_| l.to_owned())
        })
        .collect()
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

/// Whether the task was told the test in `evidence` (a removal) goes: a sentence of its
/// instructions or of a decision it reads (`allowance`) names the file or test the evidence
/// names (in backticks; its last path part, as a whole word) and says it goes (remove,
/// delete, drop, retire, obsolete, in any form). Only removals are ever allowed.
pub fn allowed(evidence: &str, allowance: &str) -> bool {
    let subjects: Vec<String> = evidence
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|s| s.rsplit(['/', ':']).next())
        .filter(|s| !s.is_empty())
        .map(str::to_lowercase)
        .collect();
    // Sentences end at `. `, `;` or a line break (a `.` inside a file name does not end one).
    let text = allowance.replace(". ", "\n").to_lowercase();
    text.split([';', '\n']).map(str::to_owned).any(|sentence| {
        let words: Vec<&str> = sentence
            .split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c)))
            .filter(|w| !w.is_empty())
            .collect();
        let goes = words.iter().any(|w| {
            ["remov", "delet", "drop", "retir", "obsolet"]
                .iter()
                .any(|v| w.starts_with(v))
        });
        goes && subjects.iter().any(|s| {
            words
                .iter()
                .any(|w| w == s || w.rsplit('/').next() == Some(s.as_str()))
        })
    })
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
        let f = |new| file_weakenings("tests/t.rs", base, new, false);
        assert!(
            f(Some(removed))
                .removals
                .iter()
                .any(|e| e.contains("2 tests at the base, 1 now"))
        );
        assert!(
            f(Some(ignored))
                .firm
                .iter()
                .any(|e| e.contains("adds `#\u{5b}ignore`"))
        );
        assert!(
            f(Some(hollow))
                .firm
                .iter()
                .any(|e| e.contains("2 assertions at the base, 1 now"))
        );
        assert!(f(None).removals.iter().any(|e| e.contains("was deleted")));
        assert_eq!(f(Some(base)), Found::default());
        let sh = file_weakenings("check.sh", "pytest -q\n", Some("pytest -q || true\n"), true);
        assert!(sh.firm.iter().any(|e| e.contains("adds `|| true`")));
        // A file that holds no test and no check runs is nobody's business here.
        assert_eq!(
            file_weakenings("src/lib.rs", "fn a() {}\n", None, false),
            Found::default()
        );
    }

    #[test]
    fn ordinary_code_is_not_a_trick() {
        // `exit(`, an iterator's `.skip(`, `debug_assert!` and `.expect(` outside a test file.
        let base = "fn main() { let v: Vec<_> = it.skip(1).collect(); debug_assert!(true); x.expect(\"y\"); std::process::exit(0) }\n#[test]\nfn t() {}\n";
        let new = "fn main() { let v: Vec<_> = it.skip(2).skip(1).collect(); x?; std::process::exit(1); exit(2) }\n#[test]\nfn t() {}\n";
        assert_eq!(
            file_weakenings("src/main.rs", base, Some(new), false),
            Found::default()
        );
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
        assert!(allowed(
            e,
            "The old API goes. test_old.py is deleted with it."
        ));
        assert!(!allowed(e, "Write the new parser."));
        assert!(!allowed(
            e,
            "Remove the logging calls. Add tests to tests/test_old.py."
        ));
        assert!(!allowed(
            e,
            "Add tests to tests/test_old_api.py; drop blank lines"
        ));
    }

    /// The probe of issue 40: a test's assertion hollowed and another test swapped for a
    /// new one keep the counts of tests and assertions, and are evidence all the same.
    #[test]
    fn a_hollowed_assertion_and_a_swapped_test_are_evidence() {
        let base = "import calc\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n    def test_add_neg(self):\n        self.assertEqual(calc.add(-2, -3), -5)\n";
        let new = "import calc\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertTrue(True)\n    def test_sub(self):\n        self.assertEqual(calc.sub(3, 2), 1)\n";
        let found = file_weakenings("tests/test_calc.py", base, Some(new), false);
        assert_eq!(
            found.removals,
            ["`tests/test_calc.py`: the test `test_add_neg` of the base is gone"]
        );
        assert_eq!(
            found.firm,
            ["`tests/test_calc.py`: adds an assertion that checks nothing (`assertTrue(True)`)"]
        );
        // Honest edits: a renamed assertion's subject, a test added, tautologies kept.
        let grown =
            format!("{base}    def test_mul(self):\n        self.assertEqual(calc.mul(2, 3), 6)\n");
        assert_eq!(
            file_weakenings("tests/test_calc.py", base, Some(&grown), false),
            Found::default()
        );
    }

    #[test]
    fn test_names_are_read_in_each_language() {
        assert_eq!(
            test_names(
                "t.py",
                "def test_a():\nasync def test_b():\ndef helper():\n"
            ),
            ["test_a", "test_b"]
        );
        assert_eq!(
            test_names(
                "t.rs",
                "#[test]\nfn a() {}\n#[tokio::test]\nasync fn b() {}\nfn c() {}\n"
            ),
            ["a", "b"]
        );
        assert_eq!(
            test_names("t_test.go", "func TestA(t *testing.T) {}\n"),
            ["TestA"]
        );
        assert_eq!(
            test_names(
                "a.test.ts",
                "it('adds', () => {});\ntest(\"subs\", () => {});\n"
            ),
            ["adds", "subs"]
        );
    }
}
