use crate::InputError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest accepted space name, in bytes.
pub const MAX_SPACE_LEN: usize = 128;

/// The name of an isolated memory space (one user, one agent, one benchmark question).
///
/// Validated on construction: 1..=128 bytes of ASCII letters, digits, `.`, `_`, `-`, `:`,
/// `@`. The restriction keeps space names safe inside file names, index terms and URLs.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SpaceId(String);

/// Debug output is the quoted name, as for a string: error messages format spaces with
/// `{:?}` and must not show the type's internals (`SpaceId("alice")`).
impl fmt::Debug for SpaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl SpaceId {
    /// A space name given as input: [`SpaceId::stored`]'s rules, and not `.` or `..`,
    /// which URL clients rewrite (`/v1/spaces/../stats` reaches `/v1/stats`).
    pub fn new(name: impl Into<String>) -> Result<Self, InputError> {
        let name = name.into();
        if name == "." || name == ".." {
            return Err(InputError::new(
                format!("space {name:?}"),
                "name is a dot segment, which URL clients rewrite (`/v1/spaces/../stats` is `/v1/stats`)",
            ));
        }
        Self::stored(name)
    }

    /// A space name a store's own row holds: [`SpaceId::stored`], an unreadable name
    /// being the store's corruption, not the caller's input.
    pub fn from_store(name: impl Into<String>) -> Result<Self, crate::StoreError> {
        Self::stored(name).map_err(|e| crate::StoreError::Corrupt(e.to_string()))
    }

    /// A space name read back from a store (or a record naming its space): the character
    /// rules only, so a space created before `.` and `..` were refused stays readable.
    pub fn stored(name: impl Into<String>) -> Result<Self, InputError> {
        let name = name.into();
        if name.is_empty() {
            return Err(InputError::new("space", "name is empty"));
        }
        if name.len() > MAX_SPACE_LEN {
            return Err(InputError::new(
                format!("space {:?}", truncate_for_message(&name)),
                format!("name is longer than {MAX_SPACE_LEN} bytes"),
            ));
        }
        if let Some(bad) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@')))
        {
            return Err(InputError::new(
                format!("space {name:?}"),
                format!("character {bad:?} is not allowed (use letters, digits, . _ - : @)"),
            ));
        }
        Ok(Self(name))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn truncate_for_message(s: &str) -> String {
    s.chars().take(40).collect::<String>() + "..."
}

/// Deserialized names are stored ones (records, export lines): an import names its space
/// as input and checks it with [`SpaceId::new`].
impl TryFrom<String> for SpaceId {
    type Error = InputError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::stored(value)
    }
}

impl From<SpaceId> for String {
    fn from(value: SpaceId) -> Self {
        value.0
    }
}

impl fmt::Display for SpaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_names_and_rejects_unsafe_ones() {
        assert!(SpaceId::new("user-42").is_ok());
        assert!(SpaceId::new("lme:q_0a1b").is_ok());
        assert!(SpaceId::new("").is_err());
        assert!(SpaceId::new("../etc").is_err());
        assert!(SpaceId::new("a b").is_err());
        assert!(SpaceId::new("x".repeat(129)).is_err());
        let err = SpaceId::new("a/b").unwrap_err();
        assert!(err.to_string().contains("'/'"), "{err}");
    }

    #[test]
    fn dot_segments_are_refused_as_input_but_read_back_when_stored() {
        for name in [".", ".."] {
            let err = SpaceId::new(name).unwrap_err();
            assert!(err.to_string().contains("dot segment"), "{err}");
            assert!(SpaceId::stored(name).is_ok());
            let back: SpaceId = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(back.as_str(), name);
        }
        assert!(SpaceId::new(".hidden").is_ok());
        assert!(SpaceId::new("a..b").is_ok());
    }
}
