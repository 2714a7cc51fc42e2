//! A budget shared through a service rather than a database: a `specc worker`'s calls are
//! held against its `specc serve`'s budget, and recorded in that serve's ledger, under the
//! worker's claim (design: state.leases). The client holds a call's worst case through the
//! gate before the call goes out (beside its own ledger's reservation), records every
//! attempt's row through it, and settles the hold with the row that ends the call, so the
//! shared ledger never counts a call's cost twice nor lets two processes spend the same room.

use crate::error::LlmError;
use crate::ledger::CallRow;
use crate::provider::BoxFuture;

pub trait BudgetGate: Send + Sync {
    /// Holds `dollars` of the shared budget for a call on behalf of `task`: the hold's id,
    /// or why not (the cap: [`LlmError::Budget`]; the task's claim is lost or the service
    /// cannot be reached: [`LlmError::Halted`]).
    fn hold<'a>(&'a self, task: &'a str, dollars: f64) -> BoxFuture<'a, Result<u64, LlmError>>;

    /// Records `row` in the shared ledger and, in the same transaction, settles `hold` (its
    /// call is over); resolves once both are durable there, or once the gate has given up
    /// (and said so: the row stays in this process's own ledger).
    fn record<'a>(&'a self, row: &'a CallRow, hold: Option<u64>) -> BoxFuture<'a, ()>;

    /// Gives `hold` back unspent: its call ended with no row (dropped by its caller).
    fn release(&self, hold: u64);
}

/// A hold, given back when dropped unless it was settled with its call's row.
pub(crate) struct Held<'a> {
    pub(crate) gate: &'a dyn BudgetGate,
    pub(crate) id: Option<u64>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.gate.release(id);
        }
    }
}
