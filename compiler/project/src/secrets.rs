//! Secret redaction wired to every model client and journal the commands make (design:
//! secrets.redaction): specc-passes finds and replaces, specc-llm screens every request
//! through [`Secrets`], and a journal screens every row with [`screen`].

use std::borrow::Cow;
use std::sync::Arc;

use specc_passes::secrets::Redactor;

/// The redactor as the model client's screen.
pub struct Secrets(pub Arc<Redactor>);

impl specc_llm::Redact for Secrets {
    fn redact(&self, text: &str) -> Option<String> {
        match self.0.redact(text) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        }
    }
}

/// A redactor letting `allow` through (specc.toml's `[secrets] allow`, checked when it was
/// read; an expression that does not parse is left out).
pub fn redactor(allow: &[String]) -> Arc<Redactor> {
    let usable: Vec<String> = allow
        .iter()
        .filter(|a| Redactor::new(std::slice::from_ref(a)).is_ok())
        .cloned()
        .collect();
    Arc::new(Redactor::new(&usable).unwrap_or_else(|_| Redactor::none()))
}

/// `[secrets] allow` of a specc.toml's text (empty when it has none).
pub fn allow_list(text: &str) -> Vec<String> {
    let Ok(v) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    v.get("secrets")
        .and_then(|s| s.get("allow"))
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The redactor as a journal's screen. The work an attempt hands the next (`carried`: the
/// files of the checkout, as a resumed attempt writes them back) and a follow-up's checks
/// (`checks`, the commands it runs once resumed) are kept as they are: they are the
/// repository's content and commands, like the VCS's store, and a placeholder there would
/// be written into the code or run on resume.
pub fn screen(r: &Arc<Redactor>) -> specc_state::Screen {
    let r = r.clone();
    Arc::new(move |v: &mut serde_json::Value| screen_value(&r, v))
}

fn screen_value(r: &Redactor, v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                // `carried`: files; `checks`: the commands a resumed follow-up runs.
                if k != "carried" && k != "checks" {
                    screen_value(r, x);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| screen_value(r, x)),
        serde_json::Value::String(s) => {
            if let Cow::Owned(red) = r.redact(s) {
                *s = red;
            }
        }
        _ => {}
    }
}

/// The environment variables holding API keys that the specc.toml in `dir` names (none when
/// there is no readable one): a command run as a worker's would be runs without them.
pub fn key_vars(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("specc.toml"))
        .ok()
        .and_then(|t| specc_llm::LlmConfig::parse(&t).ok())
        .map(|c| {
            c.providers
                .values()
                .filter_map(|p| p.api_key_env.clone())
                .collect()
        })
        .unwrap_or_default()
}
