//! The model client a command builds from specc.toml: its providers, with the keys the
//! environment holds (the one place they are read), every role answered instead by the
//! caller's scripted models when it gives some, and every exchange recorded with `record`.
//! design: project.library

use std::path::Path;
use std::sync::Arc;

use specc_llm::{Client, LlmConfig, Provider};

use crate::Models;

/// The configured providers, or `models` for every one of them; recorded at `record`.
pub fn build(llm: &LlmConfig, record: Option<&Path>, models: Option<&Models>) -> Client {
    let key_env = |var: &str| std::env::var(var).ok();
    let mut client = Client::from_config(llm.clone(), &key_env, record);
    if let Some(models) = models {
        let provider = match record {
            Some(path) => Arc::new(client.recorder(models.0.clone(), path)) as Arc<dyn Provider>,
            None => models.0.clone(),
        };
        for name in llm.providers.keys() {
            client = client.with_provider(name, provider.clone(), 8);
        }
    }
    client
}
