//! A planner's acceptance entries are shell commands, checked when the plan is made rather
//! than when a worker's `done` runs them: each must parse as `sh` would parse it (quotes,
//! `$( )`, back quotes, brackets and the compound words closed; a sentence of English is
//! not a command), and its first word must be a shell builtin, a path, or a command the
//! sandbox can find. A problem goes back to the planner as a repair (E0317), never as a
//! failed check at run time. The scan is lexical and pure, like the rest of this crate:
//! the commands the sandbox can find are given by the caller.
//! design: passes.plan-acceptance

use std::collections::BTreeSet;

use specc_ir::plan::PlannerAnswer;
use specc_ir::{Diagnostic, codes};

use super::words::{cut, task_name};

/// The commands an acceptance entry may start with besides the shell's own words: those
/// the sandbox finds on its `PATH`. An empty set checks the syntax only (a caller that
/// cannot know them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commands {
    names: BTreeSet<String>,
}

impl Commands {
    pub fn new(names: impl IntoIterator<Item = String>) -> Commands {
        Commands {
            names: names.into_iter().collect(),
        }
    }

    /// Whether `word` may start a command: a shell builtin or keyword, a path, an
    /// expansion, or a command found.
    fn knows(&self, word: &str) -> bool {
        self.names.is_empty()
            || SHELL_WORDS.contains(&word)
            || word.contains('/')
            || word.starts_with('$')
            || self.names.contains(word)
    }
}

/// POSIX sh's special builtins, regular builtins and reserved words (what `sh -c` runs
/// without a `PATH` lookup).
const SHELL_WORDS: &[&str] = &[
    ".", ":", "!", "[", "{", "(", "alias", "bg", "break", "case", "cd", "command", "continue",
    "echo", "eval", "exec", "exit", "export", "false", "fg", "for", "getopts", "hash", "if",
    "jobs", "kill", "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times",
    "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// Diagnostics for `answer`'s acceptance entries under `node` that are not commands.
pub fn check_acceptance(
    node: &str,
    answer: &PlannerAnswer,
    commands: &Commands,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for c in &answer.children {
        for entry in &c.acceptance {
            let Some(problem) = problem(entry, commands) else {
                continue;
            };
            out.push(
                Diagnostic::new(
                    codes::ACCEPTANCE_NOT_A_COMMAND,
                    format!(
                        "the acceptance entry `{}` of `{}` under {} {problem}",
                        cut(entry.trim(), 120),
                        c.key,
                        task_name(node)
                    ),
                )
                .with_help(
                    "an acceptance entry is a shell command run by `bash -e -o pipefail -c` from the repository's root after the worker's `done`; exit status 0 passes (`cargo test --lib`, `python -m pytest -q tests/`, `test -f README.md`). Say what to check in the instructions, and give the command that checks it here",
                ),
            );
        }
    }
    out
}

/// What is wrong with `script` as a command, if anything.
pub fn problem(script: &str, commands: &Commands) -> Option<String> {
    if script.trim().is_empty() {
        return Some("is empty".to_owned());
    }
    if let Some(why) = syntax_problem(script) {
        return Some(why);
    }
    let first = first_word(script)?;
    if matches!(first.as_str(), "true" | "false" | ":") && !alone(script, &first) {
        return Some(format!(
            "starts with `{first}`, which ignores the words after it: the entry always {}",
            if first == "false" { "fails" } else { "passes" }
        ));
    }
    if !commands.knows(&first) {
        return Some(format!(
            "starts with `{first}`, which is neither a shell builtin nor a command the sandbox finds"
        ));
    }
    None
}

/// Whether `word`, the first command word of `script`, stands alone: the end of the script
/// or an operator follows it (`true && …` is a command, `true when it works` is prose).
fn alone(script: &str, word: &str) -> bool {
    let Some(at) = script.find(word) else {
        return true;
    };
    let rest = script[at + word.len()..].trim_start();
    rest.is_empty() || rest.starts_with([';', '|', '&', ')', '}', '\n'])
}

/// The first command word of `script`: past leading variable assignments (`A=1 cmd`,
/// `out=$(cmd 2>&1)`), `!`, and a leading `(` or `{`; a command of assignments only
/// (`st=$?;`) hands on to the next one. Words are split as the shell splits them: a quote,
/// `$( )`, `${ }` or back quote holds its spaces.
fn first_word(script: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let (mut single, mut double, mut back) = (false, false, false);
    let mut depth = 0usize;
    let mut chars = script.chars().peekable();
    let mut comment = false;
    // Ends the word being read; `Some` when it is the command word.
    let end = |word: &mut String, words: &mut Vec<String>| -> Option<String> {
        if word.is_empty() {
            return None;
        }
        let w = std::mem::take(word);
        let bare = w.trim_start_matches(['(', '{']);
        let assignment = bare.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if bare.is_empty() || bare == "!" || assignment {
            words.push(w);
            return None;
        }
        Some(bare.trim_end_matches([';', ')', '}']).to_owned())
    };
    while let Some(c) = chars.next() {
        if comment {
            comment = c != '\n';
            continue;
        }
        let quoted = single || double || back || depth > 0;
        match c {
            '\'' if !double && !back && depth == 0 => single = !single,
            '"' if !single => double = !double,
            '`' if !single => back = !back,
            '$' if !single && matches!(chars.peek(), Some('(') | Some('{')) => {
                word.push(c);
                if let Some(open) = chars.next() {
                    word.push(open);
                }
                depth += 1;
                continue;
            }
            ')' | '}' if depth > 0 && !single => depth -= 1,
            '\\' if !single => {
                word.push(c);
                if let Some(next) = chars.next() {
                    word.push(next);
                }
                continue;
            }
            '#' if !quoted && word.is_empty() => {
                comment = true;
                continue;
            }
            c if !quoted && (c.is_whitespace() || matches!(c, ';' | '|' | '&')) => {
                if let Some(first) = end(&mut word, &mut words) {
                    return Some(first);
                }
                continue;
            }
            _ => {}
        }
        word.push(c);
    }
    end(&mut word, &mut words)
}

/// What `sh -n` would refuse in `script`, as far as a lexical scan can tell: an unclosed
/// quote, `$(`, `${` or back quote, brackets that do not pair, compound words (`if`/`fi`,
/// `case`/`esac`, `do`/`done`) that do not close, a here-document without its end, or an
/// operator with nothing after it.
fn syntax_problem(script: &str) -> Option<String> {
    let mut s = Scan::default();
    let mut lines = script.lines();
    while let Some(line) = lines.next() {
        if let Err(SyntaxProblem(why)) = s.line(line) {
            return Some(why);
        }
        // A here-document's body is not shell: skip to its delimiter.
        while let Some(delimiter) = s.heredocs.pop() {
            if !lines.by_ref().any(|l| l.trim() == delimiter) {
                return Some(format!(
                    "opens a here-document (<<{delimiter}) that never ends"
                ));
            }
        }
    }
    s.finish()
}

/// Why a line of a script would not parse, in words that follow "the entry …".
struct SyntaxProblem(String);

/// The state of a scan: open quotes and brackets, compound words, pending here-documents.
#[derive(Default)]
struct Scan {
    /// Open `(`, `{`, `[`, `$(` (as `)`), `${` (as `}`) and back quotes, innermost last:
    /// the character that closes each.
    open: Vec<char>,
    /// Open compound words: the word that closes each (`fi`, `esac`, `done`).
    compound: Vec<&'static str>,
    /// Here-documents begun on the current line, by delimiter.
    heredocs: Vec<String>,
    /// An unclosed quote, carried across lines.
    quote: Option<char>,
    /// The last token of the last line was an operator that needs more (`|`, `&&`, `||`).
    dangling: bool,
    /// Why a word refused the script.
    failed: Option<String>,
}

impl Scan {
    /// Takes in one line; a refusal ends the scan.
    fn line(&mut self, line: &str) -> Result<(), SyntaxProblem> {
        let chars: Vec<char> = line.chars().collect();
        let mut word = String::new();
        let mut i = 0;
        let mut at_command = !self.dangling;
        self.dangling = false;
        while i < chars.len() {
            let c = chars[i];
            if let Some(q) = self.quote {
                if c == '\\' && q == '"' {
                    i += 2;
                    continue;
                }
                if c == q {
                    self.quote = None;
                }
                i += 1;
                continue;
            }
            match c {
                '\\' => i += 1,
                '\'' | '"' => self.quote = Some(c),
                '#' if word.is_empty() => break,
                '`' => {
                    if self.open.last() == Some(&'`') {
                        self.open.pop();
                    } else {
                        self.open.push('`');
                    }
                }
                '$' if matches!(chars.get(i + 1), Some('(') | Some('{')) => {
                    self.open.push(if chars[i + 1] == '(' { ')' } else { '}' });
                    i += 1;
                }
                '(' => self.open.push(')'),
                '[' if word.is_empty() => self.open.push(']'),
                ')' | ']' | '}' => {
                    if self.open.last() == Some(&c) {
                        self.open.pop();
                    } else if c == ')' && self.compound.last() != Some(&"esac") {
                        // (In a `case`, `pattern)` closes nothing.)
                        return Err(SyntaxProblem("closes a `)` it never opened".to_owned()));
                    }
                }
                '<' if chars.get(i + 1) == Some(&'<') => {
                    let rest: String = chars[i + 2..].iter().collect();
                    let delimiter: String = rest
                        .trim_start_matches('-')
                        .trim_start()
                        .trim_matches(['\'', '"'])
                        .split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == ';')
                        .next()
                        .unwrap_or_default()
                        .to_owned();
                    if delimiter.is_empty() {
                        return Err(SyntaxProblem(
                            "has `<<` with no here-document delimiter".to_owned(),
                        ));
                    }
                    self.heredocs.push(delimiter);
                    i += 2;
                    continue;
                }
                _ => {}
            }
            if c.is_whitespace() || matches!(c, ';' | '&' | '|') {
                self.word(&word, &mut at_command);
                word.clear();
                if matches!(c, ';' | '&' | '|') {
                    at_command = true;
                }
            } else {
                word.push(c);
            }
            i += 1;
        }
        self.word(&word, &mut at_command);
        let end = line.trim_end();
        self.dangling = end.ends_with('|') || end.ends_with("&&") || end.ends_with('\\');
        match self.failed.take() {
            Some(why) => Err(SyntaxProblem(why)),
            None => Ok(()),
        }
    }

    /// Takes in a word: compound words open and close where a command may start.
    fn word(&mut self, word: &str, at_command: &mut bool) {
        if word.is_empty() {
            return;
        }
        let opens = match word {
            "if" => Some("fi"),
            "case" => Some("esac"),
            "for" | "while" | "until" => Some("done"),
            _ => None,
        };
        if *at_command && let Some(close) = opens {
            self.compound.push(close);
        } else if matches!(word, "fi" | "esac" | "done") && *at_command {
            if self.compound.last() == Some(&word) {
                self.compound.pop();
            } else {
                self.failed
                    .get_or_insert(format!("has `{word}` with no compound command to close"));
            }
        }
        // After a keyword that introduces a command, the next word is at a command again.
        *at_command = matches!(
            word,
            "then" | "else" | "elif" | "do" | "if" | "while" | "until" | "!" | "{" | "("
        );
    }

    /// The whole script's verdict.
    fn finish(self) -> Option<String> {
        if let Some(why) = self.failed {
            return Some(why);
        }
        if let Some(q) = self.quote {
            return Some(format!("has a `{q}` quote that is never closed"));
        }
        if let Some(c) = self.open.last() {
            return Some(match c {
                '`' => "has a back quote that is never closed".to_owned(),
                c => format!("opens what `{c}` should close, and never closes it"),
            });
        }
        if let Some(word) = self.compound.last() {
            return Some(format!("opens a compound command that no `{word}` closes"));
        }
        if self.dangling {
            return Some("ends with an operator and nothing after it".to_owned());
        }
        None
    }
}
