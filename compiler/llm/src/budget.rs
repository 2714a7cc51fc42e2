//! Budget leases: a process reserves its calls' worst cases from a lease of budget it holds
//! in the state database, instead of one immediate transaction per call. A lease is one row
//! of `llm_reservations` whose dollars are always at least what this process has reserved
//! and not settled, so another process counting spent plus reserved still never passes the
//! cap; the lease only grows (an immediate transaction, with the cap checked against every
//! other process's reservations) when its free part cannot cover a call, by up to sixteen
//! such calls but never more than half of the cap's remaining room, and shrinks as calls
//! settle (in the transaction that records them). Other processes see a lease's free part
//! as reserved: near the cap they may be refused while this one could still spend it; a
//! lease is given back when the ledger is dropped, and stops counting after an hour
//! without a top-up, like any reservation of a process that died.
//! design: llm.budget-lease

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, params};

use crate::error::LlmError;
use crate::state_db::{StateDb, StateError, Write};

/// How many calls of the size that needed a top-up one top-up covers.
const CALLS_PER_TOP_UP: f64 = 16.0;

/// One call's reservation: dollars held for it within a lease.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reservation {
    /// The lease's row in `llm_reservations`.
    pub lease: i64,
    pub dollars: f64,
}

/// This process's lease for one run.
#[derive(Debug)]
pub(crate) struct Lease {
    pub(crate) id: i64,
    /// Dollars the lease's row holds (once the queue is committed).
    pub(crate) held: f64,
    /// Dollars reserved for calls not settled yet, and how many such calls.
    pub(crate) in_use: f64,
    pub(crate) calls: usize,
}

impl Lease {
    /// Reserves `dollars` from the free part, if it covers them.
    pub(crate) fn take(&mut self, dollars: f64) -> Option<Reservation> {
        (self.held - self.in_use >= dollars).then(|| {
            self.in_use += dollars;
            self.calls += 1;
            Reservation {
                lease: self.id,
                dollars,
            }
        })
    }

    /// Records that the lease of `run` grew to hold `held` (made with id `id`, if it had
    /// none), with a call of `dollars` reserved from it.
    pub(crate) fn grown(
        leases: &mut HashMap<String, Lease>,
        run: &str,
        id: i64,
        held: f64,
        dollars: f64,
    ) -> Reservation {
        let (in_use, calls) = leases.get(run).map_or((0.0, 0), |l| (l.in_use, l.calls));
        leases.insert(
            run.to_owned(),
            Lease {
                id,
                held,
                in_use: in_use + dollars,
                calls: calls + 1,
            },
        );
        Reservation { lease: id, dollars }
    }

    /// Settles `r` for a call that cost `spent`: what it cost moves from the lease to the
    /// run's spent total. Returns what the lease's row holds now.
    pub(crate) fn settle(&mut self, r: Reservation, spent: f64) -> f64 {
        self.in_use = (self.in_use - r.dollars).max(0.0);
        self.calls = self.calls.saturating_sub(1);
        self.held = (self.held - spent).max(self.in_use);
        self.held
    }
}

/// What a lease grows by for a call of `dollars` that its free part does not cover, given
/// what is committed (spent, every other reservation and this lease's unsettled calls):
/// sixteen such calls, at most half the room the cap leaves, at least the call; refused
/// when the call does not fit in the room.
pub(crate) fn growth(dollars: f64, cap: Option<f64>, committed: f64) -> Result<f64, LlmError> {
    let Some(cap) = cap else {
        return Ok(dollars * CALLS_PER_TOP_UP);
    };
    let room = cap - committed;
    if room < dollars {
        return Err(LlmError::Budget {
            cap,
            committed,
            needed: dollars,
        });
    }
    Ok((dollars * CALLS_PER_TOP_UP).min(room / 2.0).max(dollars))
}

/// The leases of one ledger, by run.
pub(crate) struct Leases {
    db: Arc<StateDb>,
    by_run: Mutex<HashMap<String, Lease>>,
}

fn now() -> i64 {
    crate::ledger::unix_now()
}

impl Leases {
    pub(crate) fn new(db: Arc<StateDb>) -> Leases {
        Leases {
            db,
            by_run: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, Lease>>, LlmError> {
        self.by_run
            .lock()
            .map_err(|_| LlmError::Ledger(StateError::Poisoned))
    }

    /// Reserves `dollars` for a call of `run` from the run's lease, growing it if its free
    /// part is too small; refused with [`LlmError::Budget`] if spent plus every reservation
    /// (this process's unsettled calls included) plus this would pass `cap`.
    pub(crate) fn reserve(
        &self,
        run: &str,
        dollars: f64,
        cap: Option<f64>,
    ) -> Result<Reservation, LlmError> {
        let mut leases = self.lock()?;
        if let Some(r) = leases.get_mut(run).and_then(|l| l.take(dollars)) {
            return Ok(r);
        }
        let (id, in_use) = leases
            .get(run)
            .map_or((None, 0.0), |l| (Some(l.id), l.in_use));
        // The queue first (settlements lower the row) and the new size in one immediate
        // transaction, so other processes see it at once.
        let grown = self.db.now_with_queue(|tx| {
            let committed = match cap {
                Some(_) => committed_elsewhere(tx, run, id)? + in_use,
                None => 0.0,
            };
            let held = match growth(dollars, cap, committed) {
                Ok(g) => in_use + g,
                Err(e) => return Ok(Err(e)),
            };
            let id = match id {
                Some(id) => {
                    tx.prepare_cached(
                        "UPDATE llm_reservations SET dollars = ?2, created_unix = ?3 WHERE id = ?1",
                    )?
                    .execute(params![id, held, now()])?;
                    id
                }
                None => {
                    tx.prepare_cached(
                        "INSERT INTO llm_reservations (run, dollars, created_unix)
                         VALUES (?1, ?2, ?3)",
                    )?
                    .execute(params![run, held, now()])?;
                    tx.last_insert_rowid()
                }
            };
            Ok(Ok((id, held)))
        });
        let (id, held) = grown.map_err(LlmError::Ledger)??;
        Ok(Lease::grown(&mut leases, run, id, held, dollars))
    }

    /// Settles `r` for a call that cost `spent`, or gives it back unspent (`spent` 0): queues
    /// `first` (the call's row) and the lease's new size in one write, while no other
    /// reservation can change the lease, so the row's writes reach the database in the
    /// order their sizes were computed. A reservation of another process's lease (a ledger
    /// opened again after a restart) lowers that row by its dollars.
    pub(crate) fn settle(
        &self,
        r: Reservation,
        spent: f64,
        first: Option<Write>,
    ) -> Result<(), LlmError> {
        let mut leases = self.lock()?;
        let lease: Write = match leases.values_mut().find(|l| l.id == r.lease) {
            Some(l) => {
                let (id, held) = (l.id, l.settle(r, spent));
                Box::new(move |c: &Connection| {
                    c.prepare_cached("UPDATE llm_reservations SET dollars = ?2 WHERE id = ?1")?
                        .execute(params![id, held])
                        .map(drop)
                })
            }
            None => {
                let (id, d) = (r.lease, r.dollars);
                Box::new(move |c: &Connection| {
                    c.prepare_cached(
                        "UPDATE llm_reservations SET dollars = MAX(0, dollars - ?2) WHERE id = ?1",
                    )?
                    .execute(params![id, d])?;
                    c.prepare_cached("DELETE FROM llm_reservations WHERE id = ?1 AND dollars <= 0")?
                        .execute([id])
                        .map(drop)
                })
            }
        };
        let write: Write = match first {
            Some(first) => Box::new(move |c: &Connection| {
                first(c)?;
                lease(c)
            }),
            None => lease,
        };
        self.db.defer(write).map_err(LlmError::Ledger)
    }

    /// Calls reserved and not settled yet, in every run.
    pub(crate) fn unsettled(&self) -> Result<usize, LlmError> {
        Ok(self.lock()?.values().map(|l| l.calls).sum())
    }
}

impl Drop for Leases {
    /// Gives the leases' free parts back: a row keeps only what unsettled calls hold (none
    /// once every call ended), and goes when that is nothing.
    fn drop(&mut self) {
        let Ok(leases) = self.by_run.get_mut() else {
            return;
        };
        for l in leases.values() {
            let (id, in_use) = (l.id, l.in_use);
            let _ = self.db.defer(Box::new(move |c: &Connection| {
                if in_use > 0.0 {
                    c.execute(
                        "UPDATE llm_reservations SET dollars = ?2 WHERE id = ?1",
                        params![id, in_use],
                    )
                    .map(drop)
                } else {
                    c.execute("DELETE FROM llm_reservations WHERE id = ?1", [id])
                        .map(drop)
                }
            }));
        }
        let _ = self.db.commit();
    }
}

/// Spent plus what every other lease and reservation of `run` holds (not counting `mine`),
/// reservations of processes that died (no top-up for an hour) aside.
fn committed_elsewhere(tx: &Connection, run: &str, mine: Option<i64>) -> rusqlite::Result<f64> {
    let spent: f64 = tx
        .prepare_cached("SELECT COALESCE((SELECT dollars FROM llm_run_spent WHERE run = ?1), 0)")?
        .query_row([run], |r| r.get(0))?;
    let reserved: f64 = tx
        .prepare_cached(
            "SELECT COALESCE(SUM(dollars), 0) FROM llm_reservations
             WHERE run = ?1 AND created_unix > ?2 AND id IS NOT ?3",
        )?
        .query_row(
            params![
                run,
                now() - crate::ledger::STALE_RESERVATION.as_secs() as i64,
                mine
            ],
            |r| r.get(0),
        )?;
    Ok(spent + reserved)
}
