//! Budget leases (design: llm.budget-lease): two ledgers on one state database, as two
//! processes would be, reserving and settling small calls in turn against one cap. Neither
//! ever takes the run past the cap, together they spend what a single process would, and a
//! dropped ledger gives its lease's free part back.

#[path = "common/row.rs"]
mod rows;

use rows::row;
use specc_llm::{Ledger, LlmError};

/// Spent plus reserved, as a third process reading the database sees it.
fn committed(watch: &Ledger) -> f64 {
    watch.spent("run").expect("spent") + watch.reserved("run").expect("reserved")
}

#[tokio::test]
async fn two_processes_never_pass_the_cap_together() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("state.db");
    let (a, b) = (
        Ledger::open(&path).expect("a"),
        Ledger::open(&path).expect("b"),
    );
    let watch = Ledger::open(&path).expect("watch");
    let (cap, worst, cost) = (1.0, 0.01, 0.004);
    let mut landed = [0usize; 2];
    let mut refused = [false; 2];
    while !(refused[0] && refused[1]) {
        for (i, l) in [&a, &b].into_iter().enumerate() {
            if refused[i] {
                continue;
            }
            match l.reserve("run", worst, Some(cap)) {
                Ok(r) => {
                    // While the call is out, its worst case is held where others see it.
                    l.state_db().commit().expect("commit");
                    assert!(committed(&watch) <= cap + 1e-9, "{}", committed(&watch));
                    l.record_with(&row(cost), None, Some(r)).expect("record");
                    l.durable().await.expect("durable");
                    landed[i] += 1;
                }
                Err(LlmError::Budget { committed, .. }) => {
                    assert!(committed + worst > cap - 1e-9, "refused with room left");
                    refused[i] = true;
                }
                Err(e) => panic!("{e}"),
            }
            assert!(committed(&watch) <= cap + 1e-9, "{}", committed(&watch));
        }
    }
    let spent = watch.spent("run").expect("spent");
    assert!(spent <= cap, "{spent}");
    assert!(landed[0] > 0 && landed[1] > 0, "both spent: {landed:?}");
    // Near the cap the other process's lease may hold room that this one cannot use,
    // but never more than a lease's growth: within a few calls of what one process spends.
    assert!(spent > cap - 20.0 * worst, "{spent}: {landed:?}");
    assert_eq!(
        (a.reservations().expect("a"), b.reservations().expect("b")),
        (0, 0)
    );
    drop(a);
    drop(b);
    assert_eq!(
        watch.reserved("run").expect("reserved"),
        0.0,
        "leases given back"
    );
}

#[tokio::test]
async fn one_process_spends_the_whole_cap_and_gives_back_unspent_calls() {
    let dir = tempfile::tempdir().expect("dir");
    let l = Ledger::open(&dir.path().join("state.db")).expect("open");
    let (cap, worst) = (1.0, 0.01);
    let mut calls = 0;
    loop {
        match l.reserve("run", worst, Some(cap)) {
            Ok(r) => {
                l.record_with(&row(worst), None, Some(r)).expect("record");
                calls += 1;
            }
            Err(LlmError::Budget { .. }) => break,
            Err(e) => panic!("{e}"),
        }
    }
    l.durable().await.expect("durable");
    // Every worst case was spent: what reserving call by call allowed (the last may not fit
    // by a rounding error of the float sums).
    let spent = l.spent("run").expect("spent");
    assert!(spent <= cap + 1e-9 && spent > cap - worst - 1e-9, "{spent}");
    assert!((99..=100).contains(&calls), "{calls}");
    // A call given back unspent frees its room again.
    let other = Ledger::open(&dir.path().join("other.db")).expect("other");
    let r = other.reserve("run", 0.6, Some(1.0)).expect("fits");
    assert!(
        other.reserve("run", 0.6, Some(1.0)).is_err(),
        "both would pass"
    );
    other.release(r).expect("release");
    let again = other.reserve("run", 0.6, Some(1.0)).expect("fits again");
    assert_eq!(other.reservations().expect("n"), 1);
    // Settling one call leaves another one's worst case held.
    let out = other.reserve("run", 0.2, Some(1.0)).expect("fits beside");
    other
        .record_with(&row(0.6), None, Some(again))
        .expect("record");
    other.durable().await.expect("durable");
    let spent = other.spent("run").expect("spent");
    let reserved = other.reserved("run").expect("reserved");
    assert!(reserved >= out.dollars() - 1e-12, "{reserved}");
    assert!(spent + reserved <= 1.0 + 1e-9, "{spent} + {reserved}");
    assert_eq!(other.reservations().expect("n"), 1);
}
