//! The `[runners]` table of specc.toml: more languages for a spec's ```` ```LANG test ````
//! blocks, each a command template run by `sh` in the sandbox.
//!
//! ```toml
//! [runners]
//! sql = "sqlite3 :memory: < {file}"   # the block's code in a file
//! ruby = "ruby -"                     # no {file}: the code on standard input
//! ```
//!
//! A configured name takes precedence over a built-in one.
//! design: runtime.runners

use std::collections::BTreeMap;

use serde::Deserialize;

/// Runner name → command template.
pub type Runners = BTreeMap<String, String>;

#[derive(Deserialize)]
struct File {
    runners: Option<BTreeMap<String, String>>,
}

/// Why `[runners]` was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunnersError {
    /// Not TOML, or not a table of strings (the parser's message).
    Toml(String),
    /// A name that is not one word (or is `test`).
    Name(String),
    /// A runner whose command is empty.
    EmptyCommand(String),
}

impl std::fmt::Display for RunnersError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunnersError::Toml(why) => write!(f, "[runners]: {why}"),
            RunnersError::Name(name) => write!(
                f,
                "[runners] `{name}` is not a runner name: one word of letters, digits, `-`, `_`, `+` or `.`, other than `test`"
            ),
            RunnersError::EmptyCommand(name) => write!(f, "[runners] {name}: the command is empty"),
        }
    }
}

impl std::error::Error for RunnersError {}

/// The `[runners]` of specc.toml's `text`.
pub fn parse(text: &str) -> Result<Runners, RunnersError> {
    let file: File = toml::from_str(text).map_err(|e| RunnersError::Toml(e.to_string()))?;
    let runners = file.runners.unwrap_or_default();
    for (name, template) in &runners {
        let word = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '.'));
        if !word || name == "test" {
            return Err(RunnersError::Name(name.clone()));
        }
        if template.trim().is_empty() {
            return Err(RunnersError::EmptyCommand(name.clone()));
        }
    }
    Ok(runners)
}

/// The shell script that runs `code` with the command `template`: `{file}` stands for a
/// file holding the code (made in the command's private tmp); without it, the code is the
/// command's standard input.
pub fn script(template: &str, code: &str) -> String {
    let mut delimiter = "SPECC_CHECK".to_owned();
    while code.contains(&delimiter) {
        delimiter.push('_');
    }
    if template.contains("{file}") {
        format!(
            "specc_check=$(mktemp)\ncat > \"$specc_check\" <<'{delimiter}'\n{code}\n{delimiter}\n{}\n",
            template.replace("{file}", "\"$specc_check\"")
        )
    } else {
        format!("{template} <<'{delimiter}'\n{code}\n{delimiter}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_its_scripts() {
        let r = parse("[runners]\nsql = \"sqlite3 :memory: < {file}\"\nruby = \"ruby -\"\n")
            .expect("parses");
        assert_eq!(r.len(), 2);
        assert!(parse("[runners]\n\"two words\" = \"x\"\n").is_err());
        assert!(parse("[runners]\ntest = \"x\"\n").is_err());
        assert!(parse("[runners]\nsql = \" \"\n").is_err());
        assert_eq!(parse("").expect("none"), Runners::new());
        let s = script("sqlite3 :memory: < {file}", "select 1;");
        assert!(
            s.contains("cat > \"$specc_check\" <<'SPECC_CHECK'\nselect 1;\nSPECC_CHECK\n"),
            "{s}"
        );
        assert!(s.ends_with("sqlite3 :memory: < \"$specc_check\"\n"), "{s}");
        assert_eq!(
            script("ruby -", "puts 1"),
            "ruby - <<'SPECC_CHECK'\nputs 1\nSPECC_CHECK\n"
        );
        assert!(script("x", "SPECC_CHECK").contains("<<'SPECC_CHECK_'"));
    }
}
