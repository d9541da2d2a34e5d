use thiserror::Error;

/// A problem with input handed to Cairn. Names the record (for people: a 10,000-line JSONL
/// file needs the line to fix) and, when one field is at fault, its JSON path within the
/// value handed over (for programs: `messages[3].text`), so every surface reports the same
/// field without guessing it from the words.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{record}: {problem}")]
pub struct InputError {
    /// Which record: e.g. `session "s1"`, `line 17`, `session "s1" message 3`.
    pub record: String,
    /// The JSON path of the field at fault, relative to the value handed to the call that
    /// failed (`messages[3].text`, `occurred_at`, `filter.and[1].op`); `None` when the
    /// problem is not one field's.
    pub field: Option<String>,
    /// What is wrong with it, naming the field.
    pub problem: String,
    /// The bound the input is over, when its size is what is wrong (`None` otherwise):
    /// a surface that answers by size (HTTP's 413) tells it by this, not by the words.
    pub too_large: Option<TooLarge>,
}

/// A bound on the size of what is stored, which an input would pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TooLarge {
    /// A session's messages past [`crate::bounds::MAX_SESSION_BYTES`].
    Session,
}

impl InputError {
    pub fn new(record: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            record: record.into(),
            field: None,
            problem: problem.into(),
            too_large: None,
        }
    }

    /// The same error, saying which size bound the input is over.
    pub fn over(mut self, bound: TooLarge) -> Self {
        self.too_large = Some(bound);
        self
    }

    /// An error about one field of a call's arguments (`limit`, `spans[2].end_state`): the
    /// field is both the record people read and the path programs act on.
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        let field = field.into();
        Self::new(field.clone(), problem).at(field)
    }

    /// The same error, naming the JSON path of the field at fault.
    pub fn at(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Prefix the record description with an outer location (e.g. a file line).
    pub fn within(mut self, outer: impl std::fmt::Display) -> Self {
        self.record = format!("{outer}, {}", self.record);
        self
    }

    /// Prefix the field path with the path of the value that held the failing one (a
    /// session inside `sessions[2]`): `messages[0].text` becomes
    /// `sessions[2].messages[0].text`.
    pub fn nested(mut self, outer: &str) -> Self {
        self.field = Some(match self.field.take() {
            None => outer.to_string(),
            Some(f) if f.starts_with('[') => format!("{outer}{f}"),
            Some(f) => format!("{outer}.{f}"),
        });
        self
    }
}

/// Input that is well formed but contradicts what is stored: a stored message sent again
/// with other content, a session header that differs from the stored one, a trajectory
/// id stored with other states. Nothing was written; forget the stored record first to
/// replace it.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{record}: {problem}")]
pub struct ConflictError {
    pub record: String,
    /// The JSON path of the field in conflict, relative to the value handed over.
    pub field: Option<String>,
    pub problem: String,
}

impl ConflictError {
    pub fn new(record: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            record: record.into(),
            field: None,
            problem: problem.into(),
        }
    }

    pub fn at(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

/// Errors that core validation can raise.
#[derive(Debug, Error)]
pub enum CoreError {
    #[error(transparent)]
    Input(#[from] InputError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_nest_under_their_container() {
        let e = InputError::new("session \"s\" message 0", "field `text` is empty")
            .at("messages[0].text")
            .nested("sessions[2]");
        assert_eq!(e.field.as_deref(), Some("sessions[2].messages[0].text"));
        let e = InputError::new("x", "bad").nested("messages[1]");
        assert_eq!(e.field.as_deref(), Some("messages[1]"));
    }
}
