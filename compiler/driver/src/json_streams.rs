//! `--message-format json`: every JSON object on stdout, one per line, the summary last, as
//! cargo, ruff and eslint do; stderr keeps what a person reads. Commands report diagnostics
//! to their error stream as they always do; in JSON mode that stream is this demultiplexer,
//! which sends each whole line that is a JSON object (a diagnostic, a count of suppressed
//! ones) to stdout, in order with what the command writes there, and every other line to
//! stderr.
//! design: driver.json-output

use std::cell::RefCell;
use std::io::Write;

/// Stdout and stderr behind one cell, so two writers can share them in call order.
pub(crate) struct Streams<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    /// Bytes of the error stream not yet ended by a newline.
    line: Vec<u8>,
}

impl<'a> Streams<'a> {
    pub(crate) fn new(out: &'a mut dyn Write, err: &'a mut dyn Write) -> RefCell<Streams<'a>> {
        RefCell::new(Streams {
            out,
            err,
            line: Vec::new(),
        })
    }

    fn route(&mut self, line: &[u8]) -> std::io::Result<()> {
        if is_json_object(line) {
            self.out.write_all(line)
        } else {
            self.err.write_all(line)
        }
    }
}

/// A line that is one JSON object (a diagnostic, the count of suppressed ones): for programs.
/// A line people read never is one.
fn is_json_object(line: &[u8]) -> bool {
    line.first() == Some(&b'{')
        && serde_json::from_slice::<serde_json::Value>(line).is_ok_and(|v| v.is_object())
}

/// The stdout half.
pub(crate) struct Out<'s, 'a>(pub(crate) &'s RefCell<Streams<'a>>);

impl Write for Out<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().out.flush()
    }
}

/// The stderr half: whole lines, routed.
pub(crate) struct Err<'s, 'a>(pub(crate) &'s RefCell<Streams<'a>>);

impl Write for Err<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut s = self.0.borrow_mut();
        s.line.extend_from_slice(buf);
        while let Some(nl) = s.line.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = s.line.drain(..=nl).collect();
            s.route(&line)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut s = self.0.borrow_mut();
        if !s.line.is_empty() {
            let rest = std::mem::take(&mut s.line);
            s.route(&rest)?;
        }
        s.out.flush()?;
        s.err.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics_go_to_stdout_in_order_and_people_read_stderr() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        {
            let streams = Streams::new(&mut out, &mut err);
            let (mut o, mut e) = (Out(&streams), Err(&streams));
            write!(
                e,
                "{{\"code\":\"E0101\",\"severity\":\"error\"}}\nresuming build"
            )
            .expect("written");
            write!(e, " b-1\n{{\"co").expect("written");
            writeln!(e, "de\":\"W0107\",\"severity\":\"warning\"}}").expect("written");
            writeln!(o, "{{\"summary\":true}}").expect("written");
            write!(e, "{{not json}}").expect("written");
            e.flush().expect("written");
        }
        assert_eq!(
            String::from_utf8(out).expect("valid"),
            "{\"code\":\"E0101\",\"severity\":\"error\"}\n{\"code\":\"W0107\",\"severity\":\"warning\"}\n{\"summary\":true}\n"
        );
        assert_eq!(
            String::from_utf8(err).expect("valid"),
            "resuming build b-1\n{not json}"
        );
    }
}
