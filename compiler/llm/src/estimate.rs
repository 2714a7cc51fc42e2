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
    let tools: usize = r
        .tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + json_len(&t.parameters))
        .sum();
    let format = match &r.response_format {
        crate::types::ResponseFormat::JsonSchema(s) => json_len(s),
        _ => 0,
    };
    ((messages + tools + format) / 3) as u64
}
