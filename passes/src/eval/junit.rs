//! JUnit XML, as pytest, node, surefire and others write it: every `<testcase>` at any depth
//! is a test, failed if it holds `<failure>` or `<error>`, skipped if it holds `<skipped>`.
//! XML that does not parse to its end (cut short, or not XML) is unknown.

use quick_xml::Reader;
use quick_xml::events::Event;

use super::{Outcome, Score};

pub(super) fn parse(output: &str) -> Option<Score> {
    let start = output.find('<')?;
    let mut reader = Reader::from_str(&output[start..]);
    let mut score = Score::default();
    let mut depth = 0usize;
    let mut roots = 0usize;
    // The test case open now: its name and what its children said.
    let mut case: Option<(String, Outcome)> = None;
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => {
                depth += 1;
                if depth == 1 {
                    roots += 1;
                }
                match e.name().as_ref() {
                    b"testcase" => case = Some((name_of(&e), Outcome::Passed)),
                    tag => mark(&mut case, tag),
                }
            }
            Event::Empty(e) => match e.name().as_ref() {
                b"testcase" => score.add(name_of(&e), Outcome::Passed),
                tag => mark(&mut case, tag),
            },
            Event::End(e) => {
                depth = depth.checked_sub(1)?;
                if e.name().as_ref() == b"testcase"
                    && let Some((name, outcome)) = case.take()
                {
                    score.add(name, outcome);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    (depth == 0 && roots > 0).then_some(score)
}

/// What a child element `tag` of the open test case says of it: a failure or an error
/// fails it, a skip skips it unless it failed.
fn mark(case: &mut Option<(String, Outcome)>, tag: &[u8]) {
    let Some(c) = case.as_mut() else {
        return;
    };
    match tag {
        b"failure" | b"error" => c.1 = Outcome::Failed,
        b"skipped" if c.1 != Outcome::Failed => c.1 = Outcome::Skipped,
        _ => {}
    }
}

fn name_of(e: &quick_xml::events::BytesStart<'_>) -> String {
    let attr = |key: &[u8]| {
        e.attributes()
            .flatten()
            .find(|a| a.key.as_ref() == key)
            .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
    };
    match (attr(b"classname"), attr(b"name")) {
        (Some(c), Some(n)) if !c.is_empty() => format!("{c}::{n}"),
        (_, Some(n)) => n,
        _ => String::new(),
    }
}
