use thiserror::Error;

/// A problem with input handed to Cairn. Always names the record and the field, so a user
/// with a 10,000-line JSONL file can find the line to fix.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{record}: {problem}")]
pub struct InputError {
    /// Which record: e.g. `session "s1"`, `line 17`, `session "s1" message 3`.
    pub record: String,
    /// What is wrong with it, naming the field.
    pub problem: String,
}

impl InputError {
    pub fn new(record: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            record: record.into(),
            problem: problem.into(),
        }
    }

    /// Prefix the record description with an outer location (e.g. a file line).
    pub fn within(mut self, outer: impl std::fmt::Display) -> Self {
        self.record = format!("{outer}, {}", self.record);
        self
    }
}

/// Errors that core validation can raise.
#[derive(Debug, Error)]
pub enum CoreError {
    #[error(transparent)]
    Input(#[from] InputError),
}
