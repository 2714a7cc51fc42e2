//! The budget's holds for the workers' model calls in flight (`budget.rs` takes and gives
//! them back).
//! design: state.leases

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use specc_llm::Reservation;

/// How long the holds of a claim that was taken over stay: a worker paused or cut off past
/// its lease may still be in a call that will be paid for; its row settles the hold if it
/// comes back in time (design: state.leases).
pub(super) const GRACE: Duration = Duration::from_secs(600);

/// The holds of the workers' calls in flight.
#[derive(Default)]
pub(super) struct Holds {
    pub(super) next: AtomicU64,
    pub(super) open: Mutex<HashMap<u64, Open>>,
    /// The ids of the rows recorded, so that a row sent again is recorded once.
    pub(super) recorded: Mutex<HashSet<String>>,
}

pub(super) struct Open {
    pub(super) task: String,
    pub(super) attempt: i64,
    pub(super) reservation: Reservation,
    /// Set once its claim was taken over: given back then.
    pub(super) until: Option<Instant>,
}
