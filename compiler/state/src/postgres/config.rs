//! The settings every PostgreSQL connection of specc's is made with, pooled or not.
//! design: state.backends

use crate::error::StateError;

/// The connection settings of `url` (a libpq URL or key=value string), with `password`
/// when the URL has none, and a connect timeout if given.
pub(crate) fn config_of(
    url: &str,
    password: Option<&str>,
    timeout: Option<std::time::Duration>,
) -> Result<tokio_postgres::Config, StateError> {
    let mut config: tokio_postgres::Config = url
        .parse()
        .map_err(|e| StateError::Open(format!("not a PostgreSQL URL: {e}")))?;
    if let Some(p) = password.filter(|_| config.get_password().is_none()) {
        config.password(p);
    }
    if let Some(t) = timeout {
        config.connect_timeout(t);
    }
    // Every transaction of specc's, pooled or not, at READ COMMITTED whatever the server's
    // default: a budget growth reads other processes' leases after its row lock, and a
    // claim's `SKIP LOCKED` passes rows another claim holds, both of which a REPEATABLE
    // READ default would turn into stale reads or serialisation failures.
    let isolation = "-c default_transaction_isolation=read\\ committed";
    let options = match config.get_options() {
        Some(o) if !o.is_empty() => format!("{o} {isolation}"),
        _ => isolation.to_owned(),
    };
    config.options(&options);
    Ok(config)
}
