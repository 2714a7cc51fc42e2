//! specc.toml as a whole: every table must be one specc reads, and a misspelt key or table
//! is named with the nearest one it could mean. Each table's own keys are refused by its
//! parser (`deny_unknown_fields`); this adds the tables nobody parses — `[budjet]` would
//! otherwise drop the spending cap without a word — and the did-you-mean.
//! design: driver.config-check

use super::error::{ConfigError, TableError};
use specc_passes::spelling::{did_you_mean, nearest};

/// The tables of specc.toml, with what reads them.
const TABLES: &[&str] = &[
    "providers", // specc_llm::config
    "roles",     // specc_llm::config
    "prices",    // specc_llm::config
    "budget",    // specc_llm::config
    "retry",     // specc_llm::config
    "limits",    // specc_plan::Limits
    "review",    // specc_runtime::ReviewConfig
    "eval",      // specc_runtime::eval::EvalConfig
    "runners",   // specc_sandbox::parse_runners
    "build",     // config/mod.rs
    "sandbox",   // config/mod.rs
    "state",     // config/mod.rs
    "secrets",   // config/mod.rs
    "mcp",       // config/mod.rs, read by `specc mcp`
    "hooks",     // config/mod.rs: crate::hooks::HooksTable
];

/// specc.toml at `path`, read whole, with every table one specc reads.
pub fn read(path: &std::path::Path) -> Result<String, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Unreadable {
        path: path.to_path_buf(),
        error,
    })?;
    known_tables(&text).map_err(|error| ConfigError::Invalid {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(text)
}

/// Refuses a top-level table or key of `text` that specc does not read.
pub fn known_tables(text: &str) -> Result<(), TableError> {
    let table: toml::Table =
        toml::from_str(text).map_err(|e| TableError::Toml(did_you_mean(&e.to_string())))?;
    for (key, value) in &table {
        if TABLES.contains(&key.as_str()) {
            continue;
        }
        return Err(TableError::Unknown {
            key: key.clone(),
            table: value.is_table(),
            near: nearest(key, TABLES),
            tables: TABLES,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_table_is_refused_with_the_one_it_means() {
        let e = known_tables("[budjet]\ndollars = 5\n")
            .expect_err("typo")
            .to_string();
        assert_eq!(e, "unknown table `[budjet]`: did you mean `[budget]`?");
        let e = known_tables("[whatever]\nx = 1\n")
            .expect_err("unknown")
            .to_string();
        assert!(e.starts_with("unknown table `[whatever]`; specc.toml's tables are [providers]"));
        let e = known_tables("dollars = 5\n")
            .expect_err("top-level key")
            .to_string();
        assert!(
            e.starts_with("unknown key `dollars` outside any table"),
            "{e}"
        );
        assert!(known_tables("[budget]\ndollars = 5\n[limits]\ndepth = 2\n").is_ok());
    }
}
