//! The one concrete salsa database.

use std::sync::{Arc, Mutex};

/// specc's database. With [`Database::with_event_log`] it records which queries executed,
/// which is how tests assert incrementality.
#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
    log: Option<Arc<Mutex<Vec<String>>>>,
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl specc_passes::db::Db for Database {}

impl Database {
    /// A database that logs every query execution (`WillExecute`) as the query's debug name
    /// and key, e.g. `node_summary(Id(402))`.
    pub fn with_event_log() -> Database {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind
                && let Ok(mut log) = sink.lock()
            {
                log.push(format!("{database_key:?}"));
            }
        })));
        Database {
            storage,
            log: Some(log),
        }
    }

    /// The queries executed since the last call, in order.
    pub fn take_executed(&self) -> Vec<String> {
        self.log
            .as_ref()
            .and_then(|l| l.lock().ok().map(|mut l| std::mem::take(&mut *l)))
            .unwrap_or_default()
    }
}
