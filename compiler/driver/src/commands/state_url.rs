//! Reading a PostgreSQL state database: where a command takes a state database's path
//! (`specc cost --state`, `specc report --state`) a `postgres://` URL names one, and
//! `specc status` reads the configured one; with no migration and a short connect timeout
//! (design: state.backends).

use std::path::Path;
use std::time::Duration;

use specc_state::StateDb;

/// The URL `state` is, if it names PostgreSQL rather than a file.
pub(in crate::commands) fn of(state: &Path) -> Option<&str> {
    state
        .to_str()
        .filter(|s| s.starts_with("postgres://") || s.starts_with("postgresql://"))
}

/// A reader of the PostgreSQL state database at `url` (`PGPASSWORD` for a URL without a
/// password).
pub(in crate::commands) fn reader(url: &str) -> Result<StateDb, String> {
    let password = super::build::config::pg_password();
    StateDb::read_postgres(url, password.as_deref(), Duration::from_secs(5))
        .map_err(|e| format!("the state database (PostgreSQL): {e}"))
}

/// `url` as a legend may show it: its host and database, never its user or password.
pub(in crate::commands) fn label(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('?').next().unwrap_or(rest).to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_label_shows_no_credentials() {
        assert_eq!(
            super::label("postgres://me:secret@db.example:5432/specc?sslmode=disable"),
            "db.example:5432/specc"
        );
        assert_eq!(super::of("state.db".as_ref()), None);
        assert!(super::of("postgresql://h/db".as_ref()).is_some());
    }
}
