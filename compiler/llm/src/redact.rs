//! The hook through which every request is screened for secrets before it leaves the
//! machine (design: secrets.redaction): the client applies it to each message's text and
//! each tool call's arguments before a call is fingerprinted, recorded or sent. specc-llm
//! knows no patterns; the driver installs specc-passes' redactor.

use crate::types::Request;

/// Replaces secrets in text.
pub trait Redact: Send + Sync {
    /// `text` with its secrets replaced; `None` when it holds none.
    fn redact(&self, text: &str) -> Option<String>;

    /// Every string of `value`, in place.
    fn redact_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let Some(r) = self.redact(s) {
                    *s = r;
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| self.redact_json(v)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|v| self.redact_json(v)),
            _ => {}
        }
    }
}

/// `request` with every message's text and every tool call's arguments screened.
pub(crate) fn screen(r: &dyn Redact, request: &mut Request) {
    for m in &mut request.messages {
        if let Some(t) = r.redact(&m.text) {
            m.text = t;
        }
        for c in &mut m.tool_calls {
            r.redact_json(&mut c.arguments);
        }
    }
}
