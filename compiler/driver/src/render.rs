//! Diagnostics for people (miette) and for machines (one JSON object per line).
//!
//! Labels in the primary label's file are drawn on that file's source; labels in other files
//! are drawn as related reports on their own sources, so one diagnostic can point into both
//! the code and a design document.
//!
//! What a person reads is bounded here, whatever the diagnostic: labels far apart are
//! separate snippets (never the lines between them), a label over many lines is drawn on
//! its first, at most [`MAX_LABELS`] labels are drawn (the rest are counted in the message),
//! and a message or help longer than [`MAX_TEXT`] characters is cut. JSON output keeps all.
//! design: diagnostics.rendering
//! design: diagnostics.bounded

use std::io::Write;
use std::sync::Arc;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource};
use specc_ir::{Diagnostic, FileId, Label, LineIndex, Severity};

use crate::source::Files;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiagnosticFormat {
    /// miette's graphical report in colour (a terminal without `NO_COLOR`).
    Color,
    /// The same report in plain ASCII with no colour (`NO_COLOR`, pipes, snapshots).
    Plain,
    /// One JSON object per line.
    Json,
}

pub struct Renderer {
    format: DiagnosticFormat,
    /// Built once: a run may render thousands of diagnostics.
    handler: GraphicalReportHandler,
}

impl Renderer {
    pub fn new(format: DiagnosticFormat, width: usize) -> Renderer {
        let mut theme = if format == DiagnosticFormat::Color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::none()
        };
        // Say the severity in words, so `grep error` finds errors in any output.
        theme.characters.error = "error:".into();
        theme.characters.warning = "warning:".into();
        theme.characters.advice = "note:".into();
        let handler = GraphicalReportHandler::new_themed(theme)
            .with_width(width)
            .with_links(false)
            .without_syntax_highlighting();
        Renderer { format, handler }
    }

    pub fn is_json(&self) -> bool {
        self.format == DiagnosticFormat::Json
    }

    pub fn render(&self, files: &Files, d: &Diagnostic, w: &mut dyn Write) -> std::io::Result<()> {
        match self.format {
            DiagnosticFormat::Json => writeln!(w, "{}", to_json(files, d)),
            DiagnosticFormat::Color | DiagnosticFormat::Plain => {
                let handler = &self.handler;
                let report = Report::build(files, d, true);
                let mut s = String::new();
                if handler.render_report(&mut s, &report).is_err() {
                    s = format!("{}[{}]: {}\n", d.severity.as_str(), d.code, d.message);
                }
                write!(w, "{s}")
            }
        }
    }
}

/// At most this many labels are drawn, the primary first.
const MAX_LABELS: usize = 3;
/// A label spanning more lines than this is drawn on its first line only.
const MAX_LABEL_LINES: usize = 6;
/// The characters of a message or help beyond which it is cut.
const MAX_TEXT: usize = 600;

/// `text` cut to [`MAX_TEXT`] characters, saying so.
fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}… (cut; --message-format json has it whole)", &text[..at]),
        None => text.to_owned(),
    }
}

/// `l` drawn on its first line when it spans more than [`MAX_LABEL_LINES`].
fn first_lines(files: &Files, l: &Label) -> Label {
    let Some(lines) = files.lines(l.span.file) else {
        return l.clone();
    };
    let first = lines.line_of(l.span.start);
    let last = lines.line_of(l.span.end.saturating_sub(1).max(l.span.start));
    if last - first < MAX_LABEL_LINES {
        return l.clone();
    }
    let end = lines
        .line_start(first + 1)
        .map_or(l.span.end, |next| next.saturating_sub(1).max(l.span.start));
    let mut cut = l.clone();
    cut.span.end = end;
    cut
}

/// A diagnostic as miette wants it: one source, labels in it, related reports for the rest.
#[derive(Debug)]
struct Report {
    code: &'static str,
    severity: Severity,
    message: String,
    help: Option<String>,
    source: Option<NamedSource<IndexedSource>>,
    labels: Vec<LabeledSpan>,
    related: Vec<Report>,
}

impl Report {
    fn build(files: &Files, d: &Diagnostic, top: bool) -> Report {
        let home = d.primary.as_ref().map(|l| l.span.file);
        let mut labels = Vec::new();
        let mut others: Vec<(FileId, Vec<&Label>)> = Vec::new();
        let drawn: Vec<(Label, bool)> = d
            .primary
            .iter()
            .map(|l| (l, true))
            .chain(d.secondary.iter().map(|l| (l, false)))
            .take(MAX_LABELS)
            .map(|(l, primary)| (first_lines(files, l), primary))
            .collect();
        let hidden = usize::from(d.primary.is_some()) + d.secondary.len() - drawn.len();
        for (label, primary) in &drawn {
            let (label, primary) = (label, *primary);
            if Some(label.span.file) == home {
                labels.push(labeled(label, primary));
            } else {
                match others.iter_mut().find(|(f, _)| *f == label.span.file) {
                    Some((_, ls)) => ls.push(label),
                    None => others.push((label.span.file, vec![label])),
                }
            }
        }
        let related = others
            .into_iter()
            .map(|(file, ls)| Report {
                code: d.code,
                severity: Severity::Note,
                message: format!("see also {}", files.name(file)),
                help: None,
                source: source(files, file),
                labels: ls.into_iter().map(|l| labeled(l, false)).collect(),
                related: Vec::new(),
            })
            .collect();
        let mut message = bounded(&d.message);
        if hidden > 0 {
            message.push_str(&format!(
                " ({hidden} more place{} not drawn; --message-format json lists them)",
                if hidden == 1 { "" } else { "s" }
            ));
        }
        Report {
            code: d.code,
            severity: d.severity,
            message,
            help: if top {
                d.help.as_deref().map(bounded)
            } else {
                None
            },
            source: home.and_then(|f| source(files, f)),
            labels,
            related,
        }
    }
}

fn labeled(l: &Label, primary: bool) -> LabeledSpan {
    // A label's text stands on one line beside the code: a few words, never a page.
    let text = (!l.message.is_empty()).then(|| match l.message.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &l.message[..at]),
        None => l.message.clone(),
    });
    if primary {
        LabeledSpan::new_primary_with_span(text, l.span.range())
    } else {
        LabeledSpan::new_with_span(text, l.span.range())
    }
}

fn source(files: &Files, file: FileId) -> Option<NamedSource<IndexedSource>> {
    let text = files.text(file)?.clone();
    let lines = files.lines(file)?.clone();
    Some(NamedSource::new(
        files.name(file),
        IndexedSource { text, lines },
    ))
}

/// A file's text with its line index, so that drawing a snippet costs the snippet's size.
/// (miette's own `SourceCode` for strings counts lines from the start of the file for every
/// label, which makes a thousand diagnostics on a 50 MB spec quadratic.)
#[derive(Debug)]
struct IndexedSource {
    text: Arc<str>,
    lines: Arc<LineIndex>,
}

impl miette::SourceCode for IndexedSource {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let (start, len) = (span.offset(), span.len());
        let end = start + len;
        if end > self.text.len() {
            return Err(miette::MietteError::OutOfBounds);
        }
        let offset = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let start_line = self.lines.line_of(offset(start));
        let end_line = self.lines.line_of(offset(end.saturating_sub(1).max(start)));
        let first = start_line.saturating_sub(before);
        let last = (end_line + after).min(self.lines.line_count() - 1);
        let window_start = self.lines.line_start(first).unwrap_or(0) as usize;
        let window_end = self
            .lines
            .line_start(last + 1)
            .map_or(self.text.len(), |s| s as usize);
        let column = if before == 0 { start - window_start } else { 0 };
        let data = &self.text.as_bytes()[window_start..window_end];
        let window = miette::SourceSpan::from((window_start, window_end - window_start));
        // The lines in the window. miette merges two labels' snippets when the first's
        // `line() + line_count()` reaches the second's line; its own implementation for
        // strings counts the lines from the file's start, so every two labels of a file
        // merged into one snippet with every line between them (4,600 lines for two
        // headings of the Rust Reference). Counting the window's own lines merges only
        // snippets that touch (design: diagnostics.bounded).
        let line_count = last - first + 1;
        Ok(Box::new(miette::MietteSpanContents::new(
            data, window, first, column, line_count,
        )))
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        (self.severity != Severity::Note).then(|| Box::new(self.code) as Box<dyn std::fmt::Display>)
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        (!self.labels.is_empty()).then(|| Box::new(self.labels.iter().cloned()) as Box<_>)
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        (!self.related.is_empty())
            .then(|| Box::new(self.related.iter().map(|r| r as &dyn miette::Diagnostic)) as Box<_>)
    }
}

/// One diagnostic as a JSON object; positions are 1-based lines and columns.
fn to_json(files: &Files, d: &Diagnostic) -> serde_json::Value {
    let label = |l: &Label, primary: bool| {
        let start = files.line_col(l.span.file, l.span.start);
        let end = files.line_col(l.span.file, l.span.end);
        serde_json::json!({
            "file": files.name(l.span.file),
            "byte_start": l.span.start,
            "byte_end": l.span.end,
            "line": start.line,
            "column": start.col,
            "end_line": end.line,
            "end_column": end.col,
            "message": l.message,
            "primary": primary,
        })
    };
    let labels: Vec<_> = d
        .primary
        .iter()
        .map(|l| label(l, true))
        .chain(d.secondary.iter().map(|l| label(l, false)))
        .collect();
    let (file, line, column) = match &d.primary {
        Some(l) => {
            let lc = files.line_col(l.span.file, l.span.start);
            (
                Some(files.name(l.span.file).to_owned()),
                Some(lc.line),
                Some(lc.col),
            )
        }
        None => (None, None, None),
    };
    serde_json::json!({
        "code": d.code,
        "severity": d.severity.as_str(),
        "message": d.message,
        "file": file,
        "line": line,
        "column": column,
        "labels": labels,
        "help": d.help,
    })
}

#[cfg(test)]
mod tests {
    use specc_ir::{Diagnostic, Label, Span, codes};

    use super::{DiagnosticFormat, Renderer};
    use crate::source::Files;

    /// The rendering of a worst case with `code`: labels as far apart, as long, as wordy and
    /// as many as a pass could make them, in two files, with a long message and help.
    fn worst(code: &'static str) -> usize {
        let mut files = Files::default();
        let text: String = (1..=10_000)
            .map(|i| format!("line {i} of a long spec\n"))
            .collect();
        let at = |line: usize| {
            text.match_indices('\n')
                .nth(line - 2)
                .map_or(0, |(i, _)| i + 1)
        };
        let file = files.add("spec.md".to_owned(), text.as_str().into());
        let other = files.add("design-docs/a.md".to_owned(), text.as_str().into());
        let span = |f, from: usize, to: usize| Span::new(f, at(from)..at(to) - 1);
        let mut d = Diagnostic::new(code, "a message ".repeat(200))
            .with_primary(span(file, 10, 11), "a label ".repeat(100))
            .with_secondary(span(file, 4_600, 4_601), "again here")
            .with_secondary(span(file, 7_000, 7_500), "a long span")
            .with_secondary(span(other, 50, 51), "in another file")
            .with_help("a help ".repeat(200));
        for k in 0..20 {
            d.secondary.push(Label::new(
                span(file, 8_000 + k * 30, 8_001 + k * 30),
                "more",
            ));
        }
        let mut out = Vec::new();
        Renderer::new(DiagnosticFormat::Plain, 100)
            .render(&files, &d, &mut out)
            .expect("render");
        String::from_utf8_lossy(&out).lines().count()
    }

    #[test]
    fn no_diagnostic_draws_more_than_forty_lines_whatever_its_labels() {
        for info in codes::ALL {
            let n = worst(info.code);
            assert!(n <= 40, "{}: {n} lines", info.code);
        }
    }

    #[test]
    fn labels_that_touch_share_one_snippet() {
        let mut files = Files::default();
        let text = "a\nb\nc\nd\ne\n";
        let file = files.add("s.md".to_owned(), text.into());
        let d = Diagnostic::new(codes::DUPLICATE_NODE_ID, "dup")
            .with_primary(Span::new(file, 2..3), "one")
            .with_secondary(Span::new(file, 4..5), "two");
        let mut out = Vec::new();
        Renderer::new(DiagnosticFormat::Plain, 100)
            .render(&files, &d, &mut out)
            .expect("render");
        let out = String::from_utf8_lossy(&out);
        assert_eq!(out.matches(",-[").count(), 1, "{out}");
    }
}
