//! Budget leases: a process reserves its calls' worst cases from a lease of budget it holds
//! in the state database, instead of one immediate transaction per call. A lease is one row
//! of `llm_reservations` whose dollars are always at least what this process has reserved
//! and not settled, so another process counting spent plus reserved still never passes the
//! cap; the lease only grows (an immediate transaction, with the cap checked against every
//! other process's reservations) when its free part cannot cover a call, by up to sixteen
//! such calls but never more than half of the cap's remaining room, and shrinks as calls
//! settle (in the transaction that records them, which also refreshes its time). Other
//! processes see a lease's free part as reserved: near the cap they may be refused while
//! this one could still spend it; a lease is given back when the ledger is dropped, and
//! stops counting once it has not been written for an hour, like the reservation of a
//! process that died: a lease idle for half an hour is grown before its next use.
//! design: llm.budget-lease

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use specc_state::{Dialect, Sql, StateDb, StateError, Write, args};

use crate::error::LlmError;

/// Reservations older than this belong to a process that died mid-call; they stop counting.
pub(crate) const STALE_RESERVATION: Duration = Duration::from_secs(3600);

/// How many calls of the size that needed a top-up one top-up covers.
const CALLS_PER_TOP_UP: f64 = 16.0;

/// One call's reservation within a lease. Settling it twice (a guard's drop after its row
/// was recorded) does nothing the second time: the lease knows it by serial number.
#[derive(Debug, PartialEq)]
pub struct Reservation {
    serial: u64,
    dollars: f64,
}

impl Reservation {
    /// The call's worst case, held for it.
    pub fn dollars(&self) -> f64 {
        self.dollars
    }
}

/// This process's lease for one run.
#[derive(Debug)]
pub(crate) struct Lease {
    pub(crate) id: i64,
    /// Dollars the lease's row holds (once the queue is committed).
    pub(crate) held: f64,
    /// The unsettled reservations: serial → dollars.
    open: HashMap<u64, f64>,
    /// When its row was last written: other processes stop counting a row not written for
    /// an hour, so a lease idle for half of that is grown (and so written) before use.
    written: Instant,
}

impl Lease {
    /// Dollars reserved for calls not settled yet (exactly 0 with none: summed, not kept).
    pub(crate) fn in_use(&self) -> f64 {
        self.open.values().sum()
    }

    /// Whether a call is reserved and not settled.
    pub(crate) fn busy(&self) -> bool {
        !self.open.is_empty()
    }

    /// What the row holds once `r` is settled for a call that cost `spent` (what it cost
    /// moves from the lease to the run's spent total); `None` if `r` is not open here.
    pub(crate) fn settled(&self, r: &Reservation, spent: f64) -> Option<f64> {
        if !self.open.contains_key(&r.serial) {
            return None;
        }
        let in_use = self.in_use() - r.dollars;
        Some((self.held - spent).max(in_use).max(0.0))
    }

    /// Settles `r`, the row holding `held` ([`Lease::settled`]) since now.
    pub(crate) fn close(&mut self, r: &Reservation, held: f64) {
        self.open.remove(&r.serial);
        self.held = held;
        self.written = Instant::now();
    }
}

/// The leases of one process, by run, and the next reservation's serial number.
#[derive(Debug, Default)]
pub(crate) struct Book {
    pub(crate) by_run: HashMap<String, Lease>,
    serial: u64,
}

impl Book {
    /// Reserves `dollars` from the run's lease, if its free part covers them.
    pub(crate) fn take(&mut self, run: &str, dollars: f64) -> Option<Reservation> {
        let l = self.by_run.get_mut(run)?;
        if l.held - l.in_use() < dollars || l.written.elapsed() > STALE_RESERVATION / 2 {
            return None;
        }
        self.serial += 1;
        l.open.insert(self.serial, dollars);
        Some(Reservation {
            serial: self.serial,
            dollars,
        })
    }

    /// What a growth for `run` starts from: the lease's row, if any, and its unsettled
    /// dollars.
    pub(crate) fn before_growth(&self, run: &str) -> (Option<i64>, f64) {
        self.by_run
            .get(run)
            .map_or((None, 0.0), |l| (Some(l.id), l.in_use()))
    }

    /// Records that the lease of `run` grew to hold `held` in row `id` (a new row if it had
    /// none, or its row was gone), with a call of `dollars` reserved from it.
    pub(crate) fn grown(&mut self, run: &str, id: i64, held: f64, dollars: f64) -> Reservation {
        self.serial += 1;
        let l = self.by_run.entry(run.to_owned()).or_insert_with(|| Lease {
            id,
            held,
            open: HashMap::new(),
            written: Instant::now(),
        });
        l.id = id;
        l.held = held;
        l.written = Instant::now();
        l.open.insert(self.serial, dollars);
        Reservation {
            serial: self.serial,
            dollars,
        }
    }

    /// The lease `r` was reserved from, if `r` is still open there (found by its serial,
    /// which is unique in the book: a lease whose row was made again keeps its calls).
    pub(crate) fn lease_of(&mut self, r: &Reservation) -> Option<&mut Lease> {
        self.by_run
            .values_mut()
            .find(|l| l.open.contains_key(&r.serial))
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

/// The leases of one ledger on SQLite.
pub(crate) struct Leases {
    db: Arc<StateDb>,
    book: Mutex<Book>,
}

/// Seconds since the epoch, by this machine's clock.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Leases {
    pub(crate) fn new(db: Arc<StateDb>) -> Leases {
        Leases {
            db,
            book: Mutex::new(Book::default()),
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Book>, LlmError> {
        self.book
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
        let mut book = self.lock()?;
        if let Some(r) = book.take(run, dollars) {
            return Ok(r);
        }
        let (id, in_use) = book.before_growth(run);
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
            let updated = match id {
                Some(id) => tx.execute(
                    "UPDATE llm_reservations SET dollars = ?2, created_unix = ?3 WHERE id = ?1",
                    args![id, held, now()],
                )?,
                None => 0,
            };
            // A new lease, or one whose row is gone (nothing of this process deletes a
            // live lease; a row can only go with a damaged or hand-edited database).
            let id = match (id, updated) {
                (Some(id), 1) => id,
                _ => tx
                    .query_one(
                        "INSERT INTO llm_reservations (run, dollars, created_unix)
                         VALUES (?1, ?2, ?3) RETURNING id",
                        args![run, held, now()],
                    )?
                    .int(0)?,
            };
            Ok(Ok((id, held)))
        });
        let (id, held) = grown.map_err(LlmError::Ledger)??;
        Ok(book.grown(run, id, held, dollars))
    }

    /// Settles `r` for a call that cost `spent`, or gives it back unspent (`spent` 0): queues
    /// `first` (the call's row) and the lease's new size in one write, while no other
    /// reservation can change the lease, so the row's writes reach the database in the
    /// order their sizes were computed. Each write refreshes the row's time, so a lease in
    /// use never looks like a dead process's. A reservation already settled changes
    /// nothing (`first` is still queued).
    pub(crate) fn settle(
        &self,
        r: Reservation,
        spent: f64,
        first: Option<Write>,
    ) -> Result<(), LlmError> {
        let mut book = self.lock()?;
        let lease: Option<Write> = book.lease_of(&r).and_then(|l| {
            let held = l.settled(&r, spent)?;
            l.close(&r, held);
            let id = l.id;
            Some(Box::new(move |c: &mut dyn Sql| {
                c.execute(
                    "UPDATE llm_reservations SET dollars = ?2, created_unix = ?3 WHERE id = ?1",
                    args![id, held, now()],
                )
                .map(drop)
            }) as Write)
        });
        let write: Write = match (first, lease) {
            (Some(first), Some(lease)) => Box::new(move |c: &mut dyn Sql| {
                first(c)?;
                lease(c)
            }),
            (Some(only), None) | (None, Some(only)) => only,
            (None, None) => return Ok(()),
        };
        self.db.defer(write).map_err(LlmError::Ledger)
    }

    /// Calls reserved and not settled yet, in every run.
    pub(crate) fn unsettled(&self) -> Result<usize, LlmError> {
        Ok(self.lock()?.by_run.values().map(|l| l.open.len()).sum())
    }
}

impl Drop for Leases {
    /// Gives the leases' free parts back: a row keeps only what unsettled calls hold (none
    /// once every call ended), and goes when that is nothing.
    fn drop(&mut self) {
        let Ok(book) = self.book.get_mut() else {
            return;
        };
        for l in book.by_run.values() {
            let (id, in_use, busy) = (l.id, l.in_use(), l.busy());
            let _ = self.db.defer(Box::new(move |c: &mut dyn Sql| {
                if busy {
                    c.execute(
                        "UPDATE llm_reservations SET dollars = ?2, created_unix = ?3 WHERE id = ?1",
                        args![id, in_use, now()],
                    )
                    .map(drop)
                } else {
                    c.execute("DELETE FROM llm_reservations WHERE id = ?1", args![id])
                        .map(drop)
                }
            }));
        }
        let _ = self.db.commit();
    }
}

/// Spent plus what every other lease and reservation of `run` holds (not counting `mine`),
/// leases not written for an hour (their process died) aside. On PostgreSQL the run's spent
/// row is locked first (made if missing), so that two processes' growths of their leases
/// are serialised as SQLite's immediate transactions are: neither can count the other's
/// room as free.
fn committed_elsewhere(tx: &mut dyn Sql, run: &str, mine: Option<i64>) -> Result<f64, StateError> {
    let spent = match tx.dialect() {
        Dialect::Sqlite => tx
            .query_one(
                "SELECT COALESCE((SELECT dollars FROM llm_run_spent WHERE run = ?1), 0)",
                args![run],
            )?
            .real(0)?,
        Dialect::Postgres => {
            tx.execute(
                "INSERT INTO llm_run_spent (run, dollars) VALUES (?1, 0)
                 ON CONFLICT (run) DO NOTHING",
                args![run],
            )?;
            tx.query_one(
                "SELECT dollars FROM llm_run_spent WHERE run = ?1 FOR UPDATE",
                args![run],
            )?
            .real(0)?
        }
    };
    let reserved = tx
        .query_one(
            "SELECT COALESCE(SUM(dollars), 0) FROM llm_reservations
             WHERE run = ?1 AND created_unix > ?2 AND id IS DISTINCT FROM ?3",
            args![run, now() - STALE_RESERVATION.as_secs() as i64, mine],
        )?
        .real(0)?;
    Ok(spent + reserved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reservation_is_settled_once() {
        let mut book = Book::default();
        let a = book.grown("run", 7, 1.0, 0.3);
        let b = book.take("run", 0.3).expect("fits");
        let again = Reservation {
            serial: a.serial,
            dollars: a.dollars,
        };
        let l = book.lease_of(&a).expect("open");
        let held = l.settled(&a, 0.3).expect("settles");
        l.close(&a, held);
        assert!((held - 0.7).abs() < 1e-12, "{held}");
        // The guard's drop settling it again finds nothing to settle.
        assert!(book.lease_of(&again).is_none());
        let l = book.lease_of(&b).expect("b is open");
        assert!((l.in_use() - 0.3).abs() < 1e-12);
        let held = l.settled(&b, 0.0).expect("b settles");
        l.close(&b, held);
        assert_eq!(book.by_run["run"].in_use(), 0.0, "exactly nothing in use");
        assert!(!book.by_run["run"].busy());
    }
}
