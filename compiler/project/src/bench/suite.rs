//! A bench suite (`bench.toml`): its cases (each a folder with a spec, its specc.toml and
//! hidden tests in `[eval]`), its configurations (per role: the provider, model and price
//! that replace the case's), how many runs go at once, and each run's budget and time limit.
//! design: project.bench

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `bench.toml` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// Runs at once [default: 1].
    jobs: Option<usize>,
    /// Dollars one run may spend: its `[budget] dollars` [default: the case's].
    budget: Option<f64>,
    /// Seconds one run may take before it is stopped [default: 3600].
    time_limit_seconds: Option<u64>,
    #[serde(rename = "case", default)]
    cases: Vec<CaseFile>,
    #[serde(rename = "configuration", default)]
    configurations: BTreeMap<String, ConfigFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: String,
    /// Relative to bench.toml.
    dir: PathBuf,
    /// The spec in the case's folder [default: spec.md].
    spec: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    /// What it is, for the table and the page.
    #[serde(default)]
    about: String,
    /// Per role: what replaces the case's.
    #[serde(default)]
    roles: BTreeMap<String, RoleFile>,
    /// Providers the configuration's roles name, as specc.toml's `[providers]`.
    #[serde(default)]
    providers: toml::Table,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleFile {
    provider: Option<String>,
    model: Option<String>,
    /// Dollars per million tokens, in and out.
    price: Option<Price>,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cached input's price [default: the input's].
    pub cached_input: Option<f64>,
}

/// A suite, read and checked.
#[derive(Debug)]
pub struct Suite {
    pub dir: PathBuf,
    pub jobs: usize,
    pub budget: Option<f64>,
    pub time_limit: std::time::Duration,
    pub cases: Vec<Case>,
    pub configurations: Vec<Configuration>,
}

#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub spec: String,
}

#[derive(Clone, Debug)]
pub struct Configuration {
    pub name: String,
    pub about: String,
    roles: BTreeMap<String, RoleFile>,
    providers: toml::Table,
}

/// Why a suite could not be read.
#[derive(Debug)]
pub enum SuiteError {
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    Invalid {
        path: PathBuf,
        why: String,
    },
}

impl std::fmt::Display for SuiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuiteError::Unreadable { path, error } => write!(f, "{}: {error}", path.display()),
            SuiteError::Invalid { path, why } => write!(f, "{}: {why}", path.display()),
        }
    }
}

impl std::error::Error for SuiteError {}

impl Suite {
    /// The suite at `path` (a bench.toml), its cases' folders checked.
    pub fn load(path: &Path) -> Result<Suite, SuiteError> {
        let text = std::fs::read_to_string(path).map_err(|error| SuiteError::Unreadable {
            path: path.to_path_buf(),
            error,
        })?;
        let invalid = |why: String| SuiteError::Invalid {
            path: path.to_path_buf(),
            why,
        };
        let file: File = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        if file.cases.is_empty() || file.configurations.is_empty() {
            return Err(invalid(
                "a suite needs at least one [[case]] and one [configuration.NAME]".to_owned(),
            ));
        }
        let mut cases = Vec::new();
        for c in file.cases {
            let spec = c.spec.unwrap_or_else(|| "spec.md".to_owned());
            if spec.contains('/') || spec.starts_with('.') {
                return Err(invalid(format!(
                    "case `{}`: `spec` is a file name in the case's folder, beside its specc.toml",
                    c.name
                )));
            }
            let at = dir.join(&c.dir);
            if !at.join(&spec).is_file() || !at.join("specc.toml").is_file() {
                return Err(invalid(format!(
                    "case `{}`: {} has no {spec} and specc.toml",
                    c.name,
                    at.display()
                )));
            }
            if cases.iter().any(|k: &Case| k.name == c.name) || !safe_name(&c.name) {
                return Err(invalid(format!(
                    "case `{}`: a name is unique and plain (letters, digits, - and _)",
                    c.name
                )));
            }
            cases.push(Case {
                name: c.name,
                dir: at,
                spec,
            });
        }
        let mut configurations = Vec::new();
        for (name, c) in file.configurations {
            if !safe_name(&name) {
                return Err(invalid(format!(
                    "configuration `{name}`: a name is plain (letters, digits, - and _)"
                )));
            }
            configurations.push(Configuration {
                name,
                about: c.about,
                roles: c.roles,
                providers: c.providers,
            });
        }
        // Every run's specc.toml can be made: a name or a price wrong is said before any
        // run starts.
        for c in &cases {
            let toml = std::fs::read_to_string(c.dir.join("specc.toml")).map_err(|error| {
                SuiteError::Unreadable {
                    path: c.dir.join("specc.toml"),
                    error,
                }
            })?;
            for k in &configurations {
                let merged = k
                    .apply(&toml, file.budget)
                    .map_err(|why| invalid(format!("case `{}` × `{}`: {why}", c.name, k.name)))?;
                specc_llm::LlmConfig::parse(&merged)
                    .map_err(|e| invalid(format!("case `{}` × `{}`: {e}", c.name, k.name)))?;
            }
        }
        Ok(Suite {
            dir,
            jobs: file.jobs.unwrap_or(1).max(1),
            budget: file.budget,
            time_limit: std::time::Duration::from_secs(file.time_limit_seconds.unwrap_or(3600)),
            cases,
            configurations,
        })
    }
}

fn safe_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl Configuration {
    /// The case's specc.toml with this configuration's roles, providers and prices in
    /// place, and the suite's budget. A role the configuration leaves out keeps the case's.
    pub fn apply(&self, case_toml: &str, budget: Option<f64>) -> Result<String, String> {
        let mut t: toml::Table = case_toml.parse().map_err(|e| format!("specc.toml: {e}"))?;
        let table = |t: &mut toml::Table, k: &str| -> Result<toml::Table, String> {
            match t.remove(k) {
                None => Ok(toml::Table::new()),
                Some(toml::Value::Table(x)) => Ok(x),
                Some(_) => Err(format!("specc.toml: `{k}` is not a table")),
            }
        };
        let mut providers = table(&mut t, "providers")?;
        providers.extend(self.providers.clone());
        let mut roles = table(&mut t, "roles")?;
        let mut prices = table(&mut t, "prices")?;
        let mut priced: BTreeMap<String, Price> = BTreeMap::new();
        for (role, r) in &self.roles {
            let mut entry = match roles.remove(role) {
                Some(toml::Value::Table(x)) => x,
                _ => toml::Table::new(),
            };
            if let Some(p) = &r.provider {
                entry.insert("provider".into(), p.clone().into());
            }
            if let Some(m) = &r.model {
                entry.insert("model".into(), m.clone().into());
            }
            let model = entry
                .get("model")
                .and_then(|m| m.as_str())
                .ok_or_else(|| format!("role `{role}` has no model"))?
                .to_owned();
            if let Some(p) = r.price {
                let mut price = toml::Table::new();
                price.insert("input".into(), p.input.into());
                price.insert("output".into(), p.output.into());
                if let Some(c) = p.cached_input {
                    price.insert("cached_input".into(), c.into());
                }
                // Prices are per model: two roles on one model cannot be priced apart.
                if let Some(set) = priced.get(&model).filter(|q| **q != p) {
                    return Err(format!(
                        "model `{model}` is priced twice ({} and {}): one model, one price",
                        set.input, p.input
                    ));
                }
                priced.insert(model.clone(), p);
                prices.insert(model, price.into());
            } else if r.model.is_some() && !prices.contains_key(&model) {
                return Err(format!(
                    "role `{role}`: model `{model}` has no price in the case or the configuration"
                ));
            }
            roles.insert(role.clone(), entry.into());
        }
        // Each run keeps its own state and output: a case's `[state] url` or an `out`
        // elsewhere would make runs share them.
        t.remove("state");
        if let Some(toml::Value::Table(b)) = t.get_mut("build") {
            b.remove("out");
        }
        t.insert("providers".into(), providers.into());
        t.insert("roles".into(), roles.into());
        t.insert("prices".into(), prices.into());
        if let Some(d) = budget {
            let mut b = table(&mut t, "budget")?;
            b.insert("dollars".into(), d.into());
            t.insert("budget".into(), b.into());
        }
        toml::to_string(&t).map_err(|e| e.to_string())
    }
}
