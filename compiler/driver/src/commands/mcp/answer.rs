//! What a tool answers: a command's JSON as the structured result, with a short text for
//! the model beside it; a command that failed as an error result carrying its diagnostic's
//! code and help.
//! design: driver.mcp

use serde_json::{Value, json};

/// A command's exit status and what it printed.
pub(super) struct Ran {
    pub(super) exit: i32,
    pub(super) out: String,
    pub(super) err: String,
}

/// A tool's answer: its structured content, a short text, and whether it is an error.
pub(super) struct Answer {
    pub(super) structured: Value,
    pub(super) text: String,
    pub(super) error: bool,
}

impl Answer {
    pub(super) fn ok(structured: Value, text: impl Into<String>) -> Answer {
        Answer {
            structured: object(structured),
            text: text.into(),
            error: false,
        }
    }

    /// An error result naming a diagnostic code, its message and help.
    pub(super) fn failed(code: &str, message: &str, help: &str) -> Answer {
        Answer {
            structured: json!({"code": code, "message": message, "help": help}),
            text: format!("{code}: {message} (help: {help})"),
            error: true,
        }
    }
}

/// A structured result is an object: anything else goes under `result`.
fn object(v: Value) -> Value {
    match v {
        Value::Object(_) => v,
        other => json!({"result": other}),
    }
}

/// What a command's run answers: its JSON (or text) when it printed some, else its
/// diagnostic as an error. A command that prints JSON lines (`--message-format json`: one
/// diagnostic a line) answers them as `diagnostics`, with the JSON it printed on standard
/// error (its summary) as `summary`; diagnostics printed as JSON lines on standard error
/// beside a JSON answer are added as `diagnostics` too.
pub(super) fn of(tool: &str, ran: &Ran) -> Answer {
    let out = ran.out.trim();
    let said = |mut v: Value, n: usize| {
        let text = format!(
            "{tool}: exit {}{}; the structured result is what `--format json` prints",
            ran.exit,
            match n {
                0 => String::new(),
                n => format!(", {n} diagnostic(s)"),
            }
        );
        if let Value::Object(o) = &mut v {
            o.insert("exit".to_owned(), json!(ran.exit));
        }
        Answer::ok(v, text)
    };
    if let Ok(v) = serde_json::from_str::<Value>(out) {
        let extra = json_lines(&ran.err).unwrap_or_default();
        let diagnostics: Vec<Value> = extra.into_iter().filter(is_diagnostic).collect();
        let n = diagnostics.len();
        let v = match (v, n) {
            (Value::Object(mut o), 1..) => {
                o.entry("diagnostics").or_insert(json!(diagnostics));
                Value::Object(o)
            }
            (v, _) => v,
        };
        return said(v, n);
    }
    if let Some(lines) = json_lines(out) {
        let n = lines.iter().filter(|v| is_diagnostic(v)).count();
        let summary = json_lines(&ran.err).and_then(|mut l| l.pop());
        return said(json!({"diagnostics": lines, "summary": summary}), n);
    }
    if ran.exit == 0 {
        return Answer::ok(json!({"exit": 0}), ran.out.clone());
    }
    let d = diagnostic(&ran.err);
    Answer {
        structured: json!({"exit": ran.exit, "code": d.code, "message": d.message,
                           "help": d.help, "stderr": ran.err}),
        text: match &d.code {
            Some(code) => format!(
                "{code}: {} (help: {})",
                d.message,
                d.help.as_deref().unwrap_or("-")
            ),
            None => d.message.clone(),
        },
        error: true,
    }
}

/// Every non-empty line of `text` as JSON, if each is.
fn json_lines(text: &str) -> Option<Vec<Value>> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    lines.iter().map(|l| serde_json::from_str(l).ok()).collect()
}

fn is_diagnostic(v: &Value) -> bool {
    v.get("code").is_some() && v.get("severity").is_some()
}

/// A diagnostic as a command prints it: its code (alone on a line, or in a JSON
/// diagnostic), `error: …` and `help: …`.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Printed {
    pub(super) code: Option<String>,
    pub(super) message: String,
    pub(super) help: Option<String>,
}

/// The first diagnostic of error severity in `err`.
pub(super) fn diagnostic(err: &str) -> Printed {
    let mut d = Printed::default();
    for line in err.lines() {
        let t = line.trim();
        if let Ok(v) = serde_json::from_str::<Value>(t) {
            // `--message-format json`: one diagnostic per line.
            if v["severity"] == "error" && d.message.is_empty() {
                d.code = v["code"].as_str().map(str::to_owned);
                d.message = v["message"].as_str().unwrap_or_default().to_owned();
                d.help = v["help"].as_str().map(str::to_owned);
            }
            continue;
        }
        let is_code =
            t.len() == 5 && t.starts_with(['E', 'W']) && t[1..].bytes().all(|b| b.is_ascii_digit());
        if is_code && d.message.is_empty() {
            d.code = Some(t.to_owned());
        } else if let Some(m) = t.strip_prefix("error: ").filter(|_| d.message.is_empty()) {
            d.message = m.to_owned();
        } else if let Some(h) = t.strip_prefix("help: ").filter(|_| d.help.is_none()) {
            d.help = Some(h.to_owned());
        }
    }
    if d.message.is_empty() {
        d.message = err
            .lines()
            .last()
            .unwrap_or("the command failed")
            .trim()
            .to_owned();
    }
    d
}

#[cfg(test)]
mod tests {
    use super::{Printed, diagnostic};

    #[test]
    fn a_printed_diagnostic_gives_its_code_message_and_help() {
        let err = "E0004\n\n  error: no build state at `x/.specc/state.db`\n  help: run it beside the spec, or name the spec\n";
        assert_eq!(
            diagnostic(err),
            Printed {
                code: Some("E0004".into()),
                message: "no build state at `x/.specc/state.db`".into(),
                help: Some("run it beside the spec, or name the spec".into()),
            }
        );
        let json = r#"{"code":"E0406","severity":"error","message":"locked","help":"wait"}"#;
        assert_eq!(diagnostic(json).code.as_deref(), Some("E0406"));
        assert_eq!(diagnostic("error: no such code\n").code, None);
    }
}
