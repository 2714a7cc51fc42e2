//! Support shared by specc's integration tests and benchmarks: generated inputs.

/// A realistic spec of about `bytes` bytes: unique nested sections with prose, list-item and
/// paragraph requirements (some tagged, some EARS), examples, checks and decisions. Each
/// section has 6 requirements; section `i` is `## Area i` or `### Part i`.
pub fn generate_spec(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 4096);
    s.push_str("+++\nname = \"generated\"\n+++\n\n# Generated service\n\nA generated spec for benchmarks.\n\n");
    let mut i = 0usize;
    while s.len() < bytes {
        if i % 8 == 0 {
            s.push_str(&format!("## Area {i}\n\nThis area groups the parts that follow. It exists so that nesting is realistic, and its prose runs to a few sentences, e.g. this one.\n\n"));
        } else {
            s.push_str(&format!("### Part {i}\n\n"));
        }
        s.push_str(&format!(
            "The component for part {i} keeps its state in memory and persists it on shutdown.\n\
             The server MUST answer every request for part {i} within 50 ms at the 99th percentile.\n\
             It SHOULD batch writes when the queue holds more than 64 entries. Nothing else changes.\n\n\
             - [G-{i}] The client MUST NOT retry a request that failed with a permanent error.\n\
             - WHEN a connection to part {i} drops, THE SYSTEM SHALL reconnect with exponential backoff.\n\
             - Operators MAY disable part {i} with a **feature flag** named `part_{i}`.\n\
             - The log SHALL record every rejected request with its reason.\n\n\
             ```sh test\ncurl -s localhost:8080/part/{i} | grep ok\n```\n\n\
             > Decision: part {i} stores at most 1024 entries. {{#part{i}.capacity}}\n\n"
        ));
        i += 1;
    }
    s
}

/// Number of requirements [`generate_spec`] writes per section.
pub const GENERATED_REQUIREMENTS_PER_SECTION: usize = 6;
