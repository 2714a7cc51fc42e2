//! The most input tokens a request may use, counted generously from its text, before it is
//! sent: what a call's budget reservation holds.
//! design: llm.ledger

use crate::types::Request;

/// The length of `v` as JSON text, counted without building the text.
fn json_len(v: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // Writing to a counter cannot fail; a Value always serialises.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// The length of the tool definitions: an agent sends the same shared definitions on every
/// turn, so the last ones counted are remembered (held, so their address is not reused)
/// (design: perf.orchestration).
fn tools_len(tools: &std::sync::Arc<[crate::types::Tool]>) -> usize {
    use std::sync::{Arc, Mutex};
    type Counted = Option<(Arc<[crate::types::Tool]>, usize)>;
    static LAST: Mutex<Counted> = Mutex::new(None);
    if let Ok(last) = LAST.lock()
        && let Some((t, n)) = last.as_ref()
        && Arc::ptr_eq(t, tools)
    {
        return *n;
    }
    let n = tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + json_len(&t.parameters))
        .sum();
    if let Ok(mut last) = LAST.lock() {
        *last = Some((tools.clone(), n));
    }
    n
}

/// The input tokens a request may use at most, counted generously: three characters a token
/// over messages, tool calls, tool schemas and the response schema.
pub(crate) fn input_estimate(r: &Request) -> u64 {
    let messages: usize = r
        .messages
        .iter()
        .map(|m| {
            m.text.len()
                + 16
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + json_len(&c.arguments))
                    .sum::<usize>()
        })
        .sum();
    let tools = tools_len(&r.tools);
    let format = match &r.response_format {
        crate::types::ResponseFormat::JsonSchema(s) => json_len(s),
        _ => 0,
    };
    ((messages + tools + format) / 3) as u64
}
