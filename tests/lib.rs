//! Support shared by specc's integration tests and benchmarks: generated inputs.

/// A realistic spec of about `bytes` bytes: unique nested sections with prose, list-item and
/// paragraph requirements (some tagged, some EARS), examples, checks and decisions. Each
/// section has 6 requirements; section `i` is `## Area i` or `### Part i`.
pub fn generate_spec(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 4096);
    s.push_str("+++\nname = \"generated\"\n+++\n\n# Generated service\n\nA generated spec for benchmarks.\n\n");
    let mut i = 0usize;
    while s.len() < bytes {
        if i.is_multiple_of(8) {
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

/// A spec of about `bytes` bytes made of copies of a real spec's body (`template`, front
/// matter and title dropped), each copy's headings, explicit ids and tags made unique, under
/// one title. Its density of requirements, prose and code is the template's.
pub fn repeat_spec(template: &str, bytes: usize) -> String {
    let body = strip_front_matter_and_title(template);
    let mut s = String::with_capacity(bytes + template.len());
    s.push_str("# Repeated spec\n\n");
    let mut copy = 0usize;
    while s.len() < bytes {
        for line in body.lines() {
            if line.starts_with('#') {
                // `## Title {#id}` -> `## Title N {#id-N}`; `## Title` -> `## Title N`.
                match line.find(" {#") {
                    Some(at) => {
                        let id = line[at + 3..].trim_end_matches('}');
                        s.push_str(&format!("{} {copy} {{#{id}-{copy}}}", &line[..at]));
                    }
                    None => s.push_str(&format!("{line} {copy}")),
                }
            } else {
                s.push_str(&retag(line, copy));
            }
            s.push('\n');
        }
        copy += 1;
    }
    s
}

fn strip_front_matter_and_title(text: &str) -> &str {
    let mut rest = text;
    if let Some(after) = rest.strip_prefix("+++\n")
        && let Some(end) = after.find("\n+++\n")
    {
        rest = &after[end + 5..];
    }
    let rest = rest.trim_start();
    match rest.strip_prefix("# ") {
        Some(r) => r.find('\n').map_or("", |p| &r[p + 1..]),
        None => rest,
    }
}

/// `[KV-3]` -> `[KV-3-N]`-like unique tags: the letters get the copy number appended.
fn retag(line: &str, copy: usize) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let tail = &rest[open + 1..];
        let letters = tail.bytes().take_while(u8::is_ascii_uppercase).count();
        if letters > 0 && tail[letters..].starts_with('-') {
            out.push('[');
            out.push_str(&tail[..letters]);
            out.push_str(&format!("X{copy}"));
            rest = &tail[letters..];
        } else {
            out.push('[');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}
