//! Carrying out one tool call: its arguments read against the tool's schema, then the
//! tool of its family (`view`, `edit`, `run`, `notes`, `breaking`), or the end of the
//! attempt (`done`, `dispute_check`, `give_up`).
//! design: runtime.tools

use std::time::Duration;

use specc_llm::ToolCall;

use super::outcome::{Control, Dispute, ToolOutcome};
use super::schema::{Finish, parse};
use super::toolbox::Toolbox;
use super::{breaking, edit, notes, run, view};

impl Toolbox {
    /// Carries out one call; a command it runs gets at most `left` of the attempt's wall
    /// clock.
    pub async fn call(&self, call: &ToolCall, seq: u32, left: Duration) -> ToolOutcome {
        if self.needs_base(call)
            && let Err(e) = self.ready().await
        {
            return ToolOutcome::error(format!(
                "the checkout could not be brought to the base commit: {e}"
            ));
        }
        let restored = match self.restore_secrets(call).await {
            Ok(c) => c,
            Err(e) => return e,
        };
        let call = restored.as_ref().unwrap_or(call);
        let outcome = match call.name.as_str() {
            "read" => parse(call).map(|a| view::read(self, a)),
            "list" => parse(call).map(|a| view::list(self, a)),
            "search" => parse(call).map(|a| view::search(self, a)),
            "edit" => parse(call).map(|a| edit::edit(self, a)),
            "write" => parse(call).map(|a| edit::write(self, a)),
            "run" => match parse(call) {
                Ok(a) => Ok(run::run(self, a, seq, left).await),
                Err(e) => Err(e),
            },
            "note" => parse(call).map(|a| notes::note(self, a)),
            "flag_big_file" => parse(call).map(|a| notes::flag(self, a)),
            "break_scope" => parse(call).map(|a| breaking::break_scope(self, a)),
            "pin" => parse(call).map(|a| breaking::pin(self, a)),
            "report_contradiction" => parse(call).map(|a| breaking::contradiction(self, a)),
            "done" => parse::<Finish>(call).map(|a| ToolOutcome {
                text: "finished; the acceptance checks run now".to_owned(),
                failed: false,
                control: Control::Done(a.summary),
                flagged: None,
            }),
            "dispute_check" => parse::<Dispute>(call).map(|d| ToolOutcome {
                text: format!(
                    "disputed `{}`: the attempt ends here, your work is kept, and the planner that wrote the check decides",
                    d.check
                ),
                failed: false,
                control: Control::Dispute(Box::new(d)),
                flagged: None,
            }),
            "give_up" => parse::<Finish>(call).map(|a| ToolOutcome {
                text: "stopped".to_owned(),
                failed: false,
                control: Control::GiveUp(a.summary),
                flagged: None,
            }),
            other => Err(ToolOutcome::error(format!(
                "there is no tool `{other}`; the tools are read, list, search, edit, write, run, note, flag_big_file, break_scope, pin, report_contradiction, read_spec, read_decision, contest_decision, dispute_check, done and give_up"
            ))),
        };
        outcome.unwrap_or_else(|e| e)
    }

    /// A `write` or `edit` whose text holds a placeholder of a secret the model was shown
    /// redacted, with the file's own secrets put back (design: secrets.redaction): `None`
    /// when it holds none, an error when a placeholder is not the file's.
    async fn restore_secrets(&self, call: &ToolCall) -> Result<Option<ToolCall>, ToolOutcome> {
        static REDACTOR: std::sync::LazyLock<specc_passes::secrets::Redactor> =
            std::sync::LazyLock::new(specc_passes::secrets::Redactor::none);
        if !matches!(call.name.as_str(), "write" | "edit")
            || !call.arguments.to_string().contains("[redacted:")
        {
            return Ok(None);
        }
        if let Err(e) = self.ready().await {
            return Err(ToolOutcome::error(format!(
                "the checkout could not be brought to the base commit: {e}"
            )));
        }
        let path = call
            .arguments
            .get("path")
            .and_then(serde_json::Value::as_str);
        let source = path
            .and_then(crate::checkouts::normalise)
            .and_then(|rel| std::fs::read_to_string(self.root.join(rel)).ok())
            .unwrap_or_default();
        let mut restored = call.clone();
        for key in ["content", "old", "new"] {
            let Some(text) = call.arguments.get(key).and_then(serde_json::Value::as_str) else {
                continue;
            };
            match REDACTOR.restore(text, &source) {
                Ok(t) => restored.arguments[key] = serde_json::Value::String(t),
                Err(p) => {
                    return Err(ToolOutcome::error(format!(
                        "`{key}` holds {p}, a placeholder for a secret you were not shown, and `{}` holds no secret it stands for: write the lines around it with `edit` instead, and leave the secret's line as it is",
                        path.unwrap_or("the file")
                    )));
                }
            }
        }
        Ok(Some(restored))
    }

    /// Whether `call` needs the checkout's directory to hold the base (design:
    /// runtime.lazy-checkouts): every tool does but a whole-file `write` of a path whose
    /// directory already holds the base's file (and parents), and the calls that end the
    /// attempt.
    fn needs_base(&self, call: &ToolCall) -> bool {
        match call.name.as_str() {
            "done" | "give_up" | "dispute_check" => false,
            "write" => call
                .arguments
                .get("path")
                .and_then(serde_json::Value::as_str)
                .and_then(crate::checkouts::normalise)
                .is_none_or(|rel| self.tracked.owes_on_path(&rel)),
            _ => true,
        }
    }
}
