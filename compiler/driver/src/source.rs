//! Reading input files, and the table of files a run has read.
//! design: driver.input-files

use std::path::Path;
use std::sync::{Arc, OnceLock};

use specc_ir::{Diagnostic, FileId, LineCol, LineIndex, codes};

/// The largest input specc reads: offsets in spans are `u32`.
pub(crate) const MAX_FILE_BYTES: u64 = u32::MAX as u64;

/// Why a file could not be read, as a diagnostic with no span (exit status 2).
#[derive(Debug)]
pub struct ReadError(pub Box<Diagnostic>);

/// Reads `path` as UTF-8 text, refusing directories, binary files and oversized files with a
/// diagnostic that says which and why.
pub fn read_source(path: &Path) -> Result<String, ReadError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            fail(
                codes::FILE_NOT_FOUND,
                format!("`{shown}` does not exist"),
                "check the path; it is read relative to the current directory",
            )
        } else {
            fail(
                codes::IO_ERROR,
                format!("cannot read `{shown}`: {e}"),
                "check the file's permissions",
            )
        }
    })?;
    if meta.is_dir() {
        return Err(fail(
            codes::NOT_A_FILE,
            format!("`{shown}` is a directory"),
            "name the spec file inside it, e.g. `spec.md`",
        ));
    }
    if !meta.is_file() {
        return Err(fail(
            codes::NOT_A_FILE,
            format!("`{shown}` is not a regular file"),
            "name a Markdown file",
        ));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(fail(
            codes::FILE_TOO_LARGE,
            format!(
                "`{shown}` is {} bytes; specc reads at most {MAX_FILE_BYTES}",
                meta.len()
            ),
            "split the spec into smaller files",
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| {
        fail(
            codes::IO_ERROR,
            format!("cannot read `{shown}`: {e}"),
            "check the file's permissions",
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..at];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        fail(
            codes::NOT_UTF8,
            format!("`{shown}` is not UTF-8 text: invalid byte at offset {at} (line {line})"),
            "specc reads UTF-8 Markdown; convert the file, or check that it is not a binary file",
        )
    })?;
    if let Some(at) = text.find('\0') {
        return Err(fail(
            codes::NOT_UTF8,
            format!("`{shown}` looks like a binary file: NUL byte at offset {at}"),
            "specc reads UTF-8 Markdown; check that this is the file you meant",
        ));
    }
    Ok(text)
}

#[cold]
fn fail(code: &'static str, message: String, help: &str) -> ReadError {
    ReadError(Box::new(Diagnostic::new(code, message).with_help(help)))
}

/// The files a run has read, by [`FileId`]. A file's line index is built the first time a
/// diagnostic needs it: a check reads thousands of files and reports on few.
#[derive(Default, Debug)]
pub struct Files {
    files: Vec<SourceFile>,
}

#[derive(Debug)]
struct SourceFile {
    name: String,
    text: Arc<str>,
    lines: OnceLock<Arc<LineIndex>>,
}

impl Files {
    pub fn add(&mut self, name: impl Into<String>, text: Arc<str>) -> FileId {
        let id = FileId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.files.push(SourceFile {
            name: name.into(),
            text,
            lines: OnceLock::new(),
        });
        id
    }

    /// Replaces the text of file `id` (a watched file changed).
    pub fn replace(&mut self, id: FileId, text: Arc<str>) {
        if let Some(f) = self.files.get_mut(id.0 as usize) {
            f.text = text;
            f.lines = OnceLock::new();
        }
    }

    pub fn name(&self, id: FileId) -> &str {
        self.files
            .get(id.0 as usize)
            .map_or("<unknown>", |f| &f.name)
    }

    pub fn text(&self, id: FileId) -> Option<&Arc<str>> {
        self.files.get(id.0 as usize).map(|f| &f.text)
    }

    pub fn lines(&self, id: FileId) -> Option<&Arc<LineIndex>> {
        self.files
            .get(id.0 as usize)
            .map(|f| f.lines.get_or_init(|| Arc::new(LineIndex::new(&f.text))))
    }

    pub fn line_col(&self, id: FileId, offset: u32) -> LineCol {
        match (self.text(id), self.lines(id)) {
            (Some(text), Some(lines)) => lines.line_col(text, offset),
            _ => LineCol { line: 1, col: 1 },
        }
    }
}
