//! pulldown-cmark's events, delivered in order to the builder. A large spec is parsed on a
//! second thread while the builder walks the events already parsed: the two halves of the
//! front end overlap, and a 2 MB spec is read in the builder's time rather than the sum of
//! both. Events travel in batches, so the hand-over costs a few channel operations per
//! thousand events. A small spec, or a machine that will not start a thread, is parsed on
//! the calling thread, with the same events in the same order.
//! design: spec.front-end-pipeline

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser};

/// Below this many bytes a second thread costs more than it saves.
const PIPELINE_MIN: usize = 128 * 1024;

/// Events per batch: large enough to amortise the channel, small enough that the builder
/// starts early and a batch stays in cache.
const BATCH: usize = 2048;

/// Batches in flight: the parser may run this far ahead of the builder.
const IN_FLIGHT: usize = 4;

type Batch<'s> = Vec<(Event<'s>, Range<usize>)>;

/// Whether `text` is large enough for the front end to use a second thread.
pub(crate) fn pipelined(text: &str) -> bool {
    text.len() >= PIPELINE_MIN
}

/// Calls `f` with every event of `text` and its byte range, in order.
pub(crate) fn for_each<'s>(
    text: &'s str,
    options: Options,
    mut f: impl FnMut(Event<'s>, Range<usize>),
) {
    if !pipelined(text) {
        for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
            f(event, range);
        }
        return;
    }
    let pipelined = std::thread::scope(|scope| {
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Batch<'s>>(IN_FLIGHT);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Batch<'s>>();
        let parser = std::thread::Builder::new()
            .name("specc-markdown".to_owned())
            // The default stack: pulldown-cmark does not recurse on nesting, and asking for
            // a larger one measured about 2 ms more per parse (the thread's stack is mapped
            // afresh instead of reused).
            .spawn_scoped(scope, move || {
                let mut batch = Vec::with_capacity(BATCH);
                for item in Parser::new_ext(text, options).into_offset_iter() {
                    batch.push(item);
                    if batch.len() == BATCH {
                        let next = empty_rx
                            .try_recv()
                            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                        if full_tx.send(std::mem::replace(&mut batch, next)).is_err() {
                            return;
                        }
                    }
                }
                let _ = full_tx.send(batch);
            });
        let Ok(parser) = parser else {
            return false;
        };
        for mut batch in full_rx {
            for (event, range) in batch.drain(..) {
                f(event, range);
            }
            // The builder's side is done with it: give the allocation back.
            let _ = empty_tx.send(batch);
        }
        // A panic in pulldown-cmark reaches the caller as itself.
        if let Err(panic) = parser.join() {
            std::panic::resume_unwind(panic);
        }
        true
    });
    if !pipelined {
        // No second thread: parse here, as for a small spec.
        for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
            f(event, range);
        }
    }
}
