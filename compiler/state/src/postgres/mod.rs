//! The PostgreSQL backend: the settings of every connection (`config.rs`), the synchronous
//! connection the state database's writer uses (`conn.rs`) and the async pool the task
//! leases claim through (`pool.rs`).
//! design: state.backends

mod config;
mod conn;
mod pool;

pub(crate) use config::config_of;
pub(crate) use conn::PgConn;
pub use pool::PgState;
