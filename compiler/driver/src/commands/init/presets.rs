//! The providers `specc init` knows: OpenAI, Anthropic, and any OpenAI-compatible server
//! (llama.cpp, vLLM, Ollama), each with a model for every role and the prices of the models
//! it names (a local server's cost nothing).
//! design: driver.init

/// One role's model.
struct RoleModel {
    role: &'static str,
    why: &'static str,
    model: &'static str,
    max_tokens: u32,
}

/// What `specc.toml` says for one provider.
pub(in crate::commands) struct Preset {
    /// `[providers.NAME]`.
    name: &'static str,
    kind: &'static str,
    base_url: String,
    /// The variable holding the key, if the provider needs one.
    pub(in crate::commands) key_env: Option<&'static str>,
    roles: Vec<RoleModel>,
    /// `(model, input, cached input, output)` in dollars per million tokens.
    prices: Vec<(&'static str, f64, f64, f64)>,
    /// Extra lines for the provider table (timeouts for a local server).
    extra: &'static str,
    note: &'static str,
}

const PLANNER: &str =
    "The planner makes every design decision and splits the work: the strongest model.";
const WORKER: &str =
    "Workers carry out the leaves, following the planner's instructions: fast and cheap.";
const REVIEWER: &str = "Reviewers read each landed diff ([review] below).";
const MERGER: &str = "The merge agent reconciles two tasks that changed the same lines.";
const ESCALATION: &str = "The stronger model a failing task gets last.";

fn roles(planner: &'static str, worker: &'static str, escalation: &'static str) -> Vec<RoleModel> {
    let role = |role, why, model, max_tokens| RoleModel {
        role,
        why,
        model,
        max_tokens,
    };
    vec![
        role("planner", PLANNER, planner, 8192),
        role("worker", WORKER, worker, 4096),
        role("reviewer", REVIEWER, worker, 2048),
        role("merger", MERGER, worker, 4096),
        role("escalation", ESCALATION, escalation, 8192),
    ]
}

/// A `--provider` that names no preset.
#[derive(Debug)]
pub(in crate::commands) struct UnknownProvider(String);

impl std::fmt::Display for UnknownProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is not a provider specc init knows", self.0)
    }
}

/// The preset `--provider` names (`[kind]` or `[kind, url]`).
pub(in crate::commands) fn preset(provider: &[String]) -> Result<Preset, UnknownProvider> {
    let kind = provider.first().map_or("openai", String::as_str);
    let url = provider.get(1).cloned();
    match kind {
        "openai" => Ok(Preset {
            name: "openai",
            kind: "openai-compatible",
            base_url: url.unwrap_or_else(|| "https://api.openai.com/v1".to_owned()),
            key_env: Some("OPENAI_API_KEY"),
            roles: roles("gpt-5", "gpt-5-mini", "gpt-5"),
            prices: vec![
                ("gpt-5", 1.25, 0.125, 10.0),
                ("gpt-5-mini", 0.25, 0.025, 2.0),
            ],
            extra: "",
            note: "# Prices as published when this file was written: check your provider's.",
        }),
        "anthropic" => Ok(Preset {
            name: "anthropic",
            kind: "anthropic",
            base_url: url.unwrap_or_else(|| "https://api.anthropic.com".to_owned()),
            key_env: Some("ANTHROPIC_API_KEY"),
            roles: roles("claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"),
            prices: vec![
                ("claude-sonnet-4-5", 3.0, 0.3, 15.0),
                ("claude-haiku-4-5", 1.0, 0.1, 5.0),
                ("claude-opus-4-1", 15.0, 1.5, 75.0),
            ],
            extra: "",
            note: "# Prices as published when this file was written: check your provider's.",
        }),
        "openai-compatible" => Ok(Preset {
            name: "local",
            kind: "openai-compatible",
            base_url: url.unwrap_or_else(|| "http://127.0.0.1:8080/v1".to_owned()),
            key_env: None,
            roles: roles("local-model", "local-model", "local-model"),
            prices: Vec::new(),
            extra: "# A local model is slow to answer: give it time.\ntimeouts = { response_secs = 600, idle_secs = 600, total_secs = 1800 }\n# api_key_env = \"LOCAL_API_KEY\"   # if your server wants a key\n",
            note: "# A model with no [prices] costs nothing: a local server's, here. Name the model your\n# server serves (llama.cpp answers any name; vLLM and Ollama want theirs).",
        }),
        other => Err(UnknownProvider(other.to_owned())),
    }
}

impl Preset {
    /// The provider, roles and prices of `specc.toml`.
    pub(super) fn toml(&self) -> String {
        let mut t = format!(
            "\n[providers.{}]\nkind = \"{}\"\nbase_url = \"{}\"\n",
            self.name, self.kind, self.base_url
        );
        if let Some(var) = self.key_env {
            t.push_str(&format!("api_key_env = \"{var}\"\n"));
        }
        t.push_str(self.extra);
        for r in &self.roles {
            t.push_str(&format!(
                "\n# {}\n[roles.{}]\nprovider = \"{}\"\nmodel = \"{}\"\nmax_tokens = {}\n",
                r.why, r.role, self.name, r.model, r.max_tokens
            ));
        }
        t.push('\n');
        t.push_str(self.note);
        t.push('\n');
        for (model, input, cached, output) in &self.prices {
            t.push_str(&format!(
                "\n[prices.{model}]\ninput = {input:?}\ncached_input = {cached:?}\noutput = {output:?}\n"
            ));
        }
        t
    }
}
