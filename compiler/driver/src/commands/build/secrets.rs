//! The build's secret redaction wired to the model client and the journal (design:
//! secrets.redaction): specc-passes finds and replaces, specc-llm screens every request
//! through [`Secrets`], and the journal screens every row with [`screen`].

use std::borrow::Cow;
use std::sync::Arc;

use specc_passes::secrets::Redactor;

/// The redactor as the model client's screen.
pub(in crate::commands) struct Secrets(pub(in crate::commands) Arc<Redactor>);

impl specc_llm::Redact for Secrets {
    fn redact(&self, text: &str) -> Option<String> {
        match self.0.redact(text) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        }
    }
}

/// The redactor as the journal's screen.
pub(in crate::commands) fn screen(r: &Arc<Redactor>) -> specc_state::Screen {
    let r = r.clone();
    Arc::new(move |v: &mut serde_json::Value| {
        r.redact_json(v);
    })
}

/// The summary line of what was redacted: `redacted: 3 secrets (aws-access-key 1, …)`, or
/// `None` when nothing was.
pub(in crate::commands) fn summary(
    counts: &std::collections::BTreeMap<String, usize>,
) -> Option<String> {
    let total: usize = counts.values().sum();
    if total == 0 {
        return None;
    }
    let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    Some(format!(
        "redacted: {total} secret{} kept from the models and the journal ({})",
        if total == 1 { "" } else { "s" },
        kinds.join(", ")
    ))
}
