//! The error type of every loader in this crate.
use cairn_core::InputError;
use std::path::PathBuf;
use thiserror::Error;

/// Why a file could not be read into Cairn's types. Every variant that comes from a file
/// names the file; record-level problems also name the record (line, question, sample).
#[derive(Debug, Error)]
pub enum FormatError {
    /// The file could not be opened or read (missing, permissions, corrupt gzip stream).
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file's bytes are not UTF-8 text.
    #[error("{path}: not valid UTF-8 text (first bad byte at offset {offset})")]
    Utf8 { path: PathBuf, offset: usize },
    /// The file is not well-formed JSON, or its top level has the wrong shape.
    #[error("{path}: invalid JSON: {msg}")]
    Json { path: PathBuf, msg: String },
    /// One record of the file is wrong; the inner error names the record and the field.
    #[error("{path}: {error}")]
    Record {
        path: PathBuf,
        #[source]
        error: InputError,
    },
    /// A record is wrong, outside the context of a file (e.g. converting an in-memory
    /// question into sessions).
    #[error(transparent)]
    Input(#[from] InputError),
}

impl FormatError {
    /// Attach a file to a record-level error.
    pub fn record(path: impl Into<PathBuf>, error: InputError) -> Self {
        FormatError::Record {
            path: path.into(),
            error,
        }
    }

    /// The record-level error inside, if this is one.
    pub fn input_error(&self) -> Option<&InputError> {
        match self {
            FormatError::Record { error, .. } | FormatError::Input(error) => Some(error),
            _ => None,
        }
    }
}

/// A serde_json error message without its ` at line L column C` suffix, and the position
/// (line, column) when it has one.
pub(crate) fn split_json_error(e: &serde_json::Error) -> (String, Option<(usize, usize)>) {
    let full = e.to_string();
    if e.line() == 0 {
        return (full, None);
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let msg = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
    (msg, Some((e.line(), e.column())))
}
