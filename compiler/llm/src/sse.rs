//! Server-sent events, parsed incrementally from the bytes as they arrive.

/// One event: its `event:` name (if any) and its `data:` lines joined by `\n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) name: Option<String>,
    pub(crate) data: String,
}

/// Feed it chunks; it returns the events each chunk completes.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    buffer: Vec<u8>,
    name: Option<String>,
    data: Option<String>,
}

impl Parser {
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        let mut consumed = 0;
        while let Some(nl) = memchr_newline(&self.buffer[consumed..]) {
            let line_end = consumed + nl;
            let mut line = &self.buffer[consumed..line_end];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            let line = String::from_utf8_lossy(line).into_owned();
            consumed = line_end + 1;
            self.line(&line, &mut events);
        }
        self.buffer.drain(..consumed);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<Event>) {
        if line.is_empty() {
            if let Some(data) = self.data.take() {
                events.push(Event {
                    name: self.name.take(),
                    data,
                });
            }
            self.name = None;
            return;
        }
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.name = Some(value.to_owned()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            _ => {}
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::{Event, Parser};

    #[test]
    fn events_split_across_chunks_and_crlf() {
        let mut p = Parser::default();
        assert!(p.feed(b"event: ping\r\ndata: {\"a\"").is_empty());
        let got = p.feed(b":1}\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n\n");
        assert_eq!(
            got,
            [
                Event {
                    name: Some("ping".into()),
                    data: "{\"a\":1}".into()
                },
                Event {
                    name: None,
                    data: "x\ny".into()
                }
            ]
        );
    }
}
