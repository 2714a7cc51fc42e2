//! A build's trace over OTLP/HTTP: with the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set, the spans `build` → `task` → `attempt` →
//! `model call` and `tool call` are exported with their fields as attributes (role, model,
//! tokens, dollars, outcome). This is a `tracing` layer with a filter of its own: unset,
//! the layer is not there, the info-level spans it alone enables stay disabled at their
//! callsites, and nothing is exported or slowed down.
//! design: runtime.traces

mod export;
mod span;

use std::sync::mpsc;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::span::{Attributes, Id, Record};
use tracing::{Subscriber, field};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{FilterFn, Filtered};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

pub use export::Exporter;
use span::{Finished, Value};

/// The spans a trace holds.
const SPANS: &[&str] = &["build", "task", "attempt", "model call", "tool call"];

/// The layer and what ships its spans, when the environment asks for a trace.
pub fn from_env<S>() -> Option<(Filtered<Otlp, FilterFn, S>, Exporter)>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let endpoint = export::endpoint()?;
    let (tx, rx) = mpsc::channel();
    let exporter = Exporter::start(endpoint, tx.clone(), rx);
    let filter = FilterFn::new(traced as fn(&tracing::Metadata<'_>) -> bool);
    Some((Otlp { tx }.with_filter(filter), exporter))
}

/// Whether the layer sees a callsite: the spans of [`SPANS`], nothing else.
fn traced(m: &tracing::Metadata<'_>) -> bool {
    m.is_span() && SPANS.contains(&m.name())
}

/// The layer: each span of [`SPANS`] gets ids when it opens, collects its fields, and is
/// sent to the exporter when it closes.
pub struct Otlp {
    tx: mpsc::Sender<export::Message>,
}

/// What an open span carries until it closes.
struct Open(Finished);

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Random ids: the standard library's randomly seeded hasher over a counter.
fn random<const N: usize>() -> [u8; N] {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut out = [0u8; N];
    for chunk in out.chunks_mut(8) {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        h.write_u128(now_ns());
        chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
    }
    out
}

impl<S> Layer<S> for Otlp
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        // The nearest ancestor this layer sees: spans of other names are skipped.
        let parent = span
            .scope()
            .skip(1)
            .find_map(|p| p.extensions().get::<Open>().map(|o| (o.0.trace, o.0.id)));
        let mut open = Finished {
            trace: parent.map_or_else(random::<16>, |(t, _)| t),
            id: random::<8>(),
            parent: parent.map(|(_, id)| id),
            name: span.metadata().name(),
            start_ns: now_ns(),
            end_ns: 0,
            attributes: Vec::new(),
        };
        attrs.record(&mut Fields(&mut open.attributes));
        span.extensions_mut().insert(Open(open));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id)
            && let Some(open) = span.extensions_mut().get_mut::<Open>()
        {
            values.record(&mut Fields(&mut open.0.attributes));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        if let Some(Open(mut done)) = span.extensions_mut().remove::<Open>() {
            done.end_ns = now_ns();
            let _ = self.tx.send(export::Message::Span(done));
        }
    }
}

/// Records a span's fields as attributes named `specc.<field>` (a field recorded again
/// replaces its value).
struct Fields<'a>(&'a mut Vec<(String, Value)>);

impl Fields<'_> {
    fn set(&mut self, f: &field::Field, v: Value) {
        let key = format!("specc.{}", f.name());
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.0.push((key, v)),
        }
    }
}

impl field::Visit for Fields<'_> {
    fn record_str(&mut self, f: &field::Field, v: &str) {
        self.set(f, Value::Str(v.to_owned()));
    }
    fn record_i64(&mut self, f: &field::Field, v: i64) {
        self.set(f, Value::Int(v));
    }
    fn record_u64(&mut self, f: &field::Field, v: u64) {
        self.set(f, Value::Int(i64::try_from(v).unwrap_or(i64::MAX)));
    }
    fn record_f64(&mut self, f: &field::Field, v: f64) {
        self.set(f, Value::Float(v));
    }
    fn record_bool(&mut self, f: &field::Field, v: bool) {
        self.set(f, Value::Bool(v));
    }
    fn record_debug(&mut self, f: &field::Field, v: &dyn std::fmt::Debug) {
        self.set(f, Value::Str(format!("{v:?}")));
    }
}
