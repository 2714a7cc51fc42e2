//! The one diagnostic model every stage reports through. Rendering is the driver's job.
//! design: diagnostics.model

use serde::{Deserialize, Serialize};

use crate::Span;
use crate::severity::Severity;

/// A span with a short message shown under it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

impl Label {
    pub fn new(span: Span, message: impl Into<String>) -> Label {
        Label {
            span,
            message: message.into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Diagnostic {
    /// A stable code from [`crate::codes`], e.g. `E0101`.
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is. `None` only for problems with no place (a missing file).
    pub primary: Option<Label>,
    pub secondary: Vec<Label>,
    pub help: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the severity its code is registered with.
    pub fn new(code: &'static str, message: impl Into<String>) -> Diagnostic {
        let severity = crate::codes::lookup(code).map_or(Severity::Error, |c| c.severity);
        Diagnostic {
            code,
            severity,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            help: None,
        }
    }

    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label::new(span, message));
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label::new(span, message));
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
