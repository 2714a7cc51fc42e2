//! The integrator thread: the one owner of the log and the branch. It takes every request
//! waiting, applies the submissions in order, makes the batch durable with one fsync, then
//! answers (design: vcs.store).

use std::sync::mpsc;

use tokio::sync::oneshot;

use crate::channel::Request;
use crate::{FileEntry, Options, Outcome, Refusal, Stats, export, object, published, read, state};

/// The integrator: takes every request waiting, applies the submissions in order, makes the
/// batch durable with one fsync, then answers. Reads of the head are answered after the
/// batch's fsync, so nobody sees a commit that a crash could still take back; reads at a
/// commit the reader names, at once.
pub(crate) fn integrate(
    mut state: state::State,
    rx: mpsc::Receiver<Request>,
    options: Options,
    published: &published::Published,
) {
    // However the integrator ends (a failed fsync, a panic), the store is unavailable.
    let _stop = published.stop_on_drop();
    let mut batches = 0u64;
    while let Ok(first) = rx.recv() {
        let mut requests = vec![first];
        while requests.len() < options.max_batch {
            match rx.try_recv() {
                Ok(r) => requests.push(r),
                Err(_) => break,
            }
        }
        let flags_before = state.flagged.clone();
        let batch = apply(&mut state, requests, batches);
        let flags_changed = state.flagged != flags_before;
        if !batch.replies.is_empty() || flags_changed || batch.moved {
            if !durable(&mut state, flags_changed) {
                // Not durable: nobody is told it committed, and the store stops (after an
                // fsync error the file's state is not known), before anyone is told.
                published.stop();
                for (tx, _) in batch.replies {
                    let _ = tx.send(Outcome::Refused(Refusal::Unavailable));
                }
                for (tx, _) in batch.imports {
                    let _ = tx.send(false);
                }
                return;
            }
            batches += 1;
            // An import moved the head past commits this process did not make: the recent
            // commits start again at the head (design: vcs.recent-changes).
            let made = match batch.moved {
                true => Vec::new(),
                false => std::mem::take(&mut state.made),
            };
            state.made.clear();
            let flagged = flags_changed.then_some(&state.flagged);
            published.set_with(state.head, flagged, made);
        }
        for (tx, outcome) in batch.replies {
            let _ = tx.send(outcome);
        }
        for (tx, ok) in batch.imports {
            let _ = tx.send(ok);
        }
        for r in batch.later {
            answer(&state, r, batches);
        }
    }
}

/// What a batch applied and owes an answer once it is durable.
struct Batch {
    replies: Vec<(oneshot::Sender<Outcome>, Outcome)>,
    imports: Vec<(oneshot::Sender<bool>, bool)>,
    /// Requests answered after the batch is durable.
    later: Vec<Request>,
    /// Whether an import moved the head.
    moved: bool,
}

/// Applies a batch's submissions, flags and imports to `state` in memory; reads at a named
/// commit are answered at once.
fn apply(state: &mut state::State, requests: Vec<Request>, batches: u64) -> Batch {
    let mut batch = Batch {
        replies: Vec::new(),
        imports: Vec::new(),
        later: Vec::new(),
        moved: false,
    };
    for r in requests {
        match r {
            Request::Submit(s, tx) => {
                let outcome = state.apply(&s);
                batch.replies.push((tx, outcome));
            }
            Request::Flag(path) => {
                state.flagged.insert(path);
            }
            Request::Import(b, tx) => {
                let before = state.head;
                let ok = state.import(&b);
                batch.moved |= state.head != before;
                batch.imports.push((tx, ok));
            }
            // A read at a commit the reader names is answered at once: it knows the commit
            // from a durable head or outcome, so the batch's fsync adds nothing to what it
            // may see, and it does not wait for that fsync (design: vcs.store).
            r @ (Request::File(..)
            | Request::Changes(..)
            | Request::Commit(..)
            | Request::Files(..)) => answer(state, r, batches),
            other => batch.later.push(other),
        }
    }
    batch
}

/// Writes the batch's head (and the flags, if they changed) and syncs the log: one fsync
/// for the whole batch. `false` if the log could not be made durable.
fn durable(state: &mut state::State, flags_changed: bool) -> bool {
    if flags_changed {
        let flags: Vec<&str> = state.flagged.iter().map(String::as_str).collect();
        state.log.push_flags(&flags);
    }
    state.log.push_head(state.head, state.seq);
    state.log.sync().is_ok()
}

fn answer(state: &state::State, r: Request, batches: u64) {
    match r {
        Request::ReadHead(path, tx) => {
            // Unreadable bytes drop the reply: the reader sees the store unavailable.
            if let Some(file) = state.head_file(&path) {
                let _ = tx.send((state.head, file));
            }
        }
        Request::File(commit, path, tx) => {
            let _ = tx.send(read::entry_at(state, commit, &path));
        }
        Request::Changes(from, to, tx) => {
            let _ = tx.send(read::changes(state, from, to));
        }
        Request::Stats(tx) => {
            let mut conflicts: Vec<(String, u64)> = state
                .conflicts
                .iter()
                .map(|(p, n)| (p.clone(), *n))
                .collect();
            conflicts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let _ = tx.send(Stats {
                head: Some(state.head),
                seq: state.seq,
                files: state.files.len(),
                flagged: state.flagged.iter().cloned().collect(),
                conflicts,
                batches,
            });
        }
        Request::Commit(id, tx) => {
            let c = state
                .commits
                .contains_key(&id)
                .then(|| state.object(id).and_then(|b| object::Commit::decode(&b)))
                .flatten();
            let _ = tx.send(c);
        }
        Request::Files(commit, tx) => {
            let files = read::commit(state, commit)
                .and_then(|c| read::files(state, c.tree))
                .and_then(|files| {
                    files
                        .into_iter()
                        .map(|(path, id, executable)| {
                            state.object(id).map(|bytes| FileEntry {
                                path,
                                bytes,
                                executable,
                            })
                        })
                        .collect::<Option<Vec<_>>>()
                });
            let _ = tx.send(files);
        }
        Request::Export(since, onto, tx) => {
            let stream = export::stream(state, since, &onto);
            let _ = tx.send(stream.map(|(s, n)| (s, n, state.head)));
        }
        Request::Bundle(have, tx) => {
            let _ = tx.send(state.bundle(have));
        }
        Request::Submit(..) | Request::Flag(_) | Request::Import(..) => {}
    }
}
