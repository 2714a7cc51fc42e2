//! API keys: read from the environment variable the configuration names, never printed.
//! design: llm.secrets

/// A secret string. `Debug` and `Display` print `[redacted]`; only [`Secret::expose`] gives
/// the value, and only the HTTP layer calls it, to set a header.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// Reads `var` from the environment.
    pub fn from_env(var: &str) -> Option<Secret> {
        std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .map(Secret)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn a_secret_never_prints() {
        let s = Secret::new("sk-sentinel-123".to_owned());
        assert_eq!(format!("{s}"), "[redacted]");
        assert!(!format!("{s:?}").contains("sentinel"));
        assert_eq!(s.expose(), "sk-sentinel-123");
    }
}
