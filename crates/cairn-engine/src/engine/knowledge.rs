//! What a space knows beyond its lines: fact histories and speaker profiles.
use crate::{facts, profile};
use cairn_core::{FactHistory, InputError, SpaceId, SpeakerProfile, Timestamp, Unit};

use super::{Engine, EngineError};

impl Engine {
    /// Every fact of a space stated at or before `as_of`.
    pub(super) fn facts(
        &self,
        space: &SpaceId,
        as_of: Option<Timestamp>,
    ) -> Result<Vec<Unit>, EngineError> {
        let mut facts = self.b.records.topic_units(space, "fact:")?;
        if let Some(as_of) = as_of {
            facts.retain(|f| f.occurred_at.is_none_or(|t| t <= as_of));
        }
        Ok(facts)
    }

    /// The version chain of the subject best matching `subject`, as of a time.
    pub fn history(
        &self,
        space: &SpaceId,
        subject: &str,
        as_of: Option<Timestamp>,
    ) -> Result<Option<FactHistory>, EngineError> {
        self.require_space(space)?;
        if subject.trim().is_empty() {
            return Err(InputError::new("history", "`subject` is empty").into());
        }
        Ok(facts::history(subject, &self.facts(space, as_of)?))
    }

    /// What is known about a speaker of the space.
    pub fn profile(
        &self,
        space: &SpaceId,
        speaker: &str,
    ) -> Result<Option<SpeakerProfile>, EngineError> {
        self.require_space(space)?;
        let contributions = self.b.records.topic_units(space, "speaker:")?;
        Ok(profile::build_profile(speaker, &contributions))
    }

    /// Everyone who wrote in, or was described in, the space.
    pub fn speakers(&self, space: &SpaceId) -> Result<Vec<String>, EngineError> {
        self.require_space(space)?;
        Ok(self
            .b
            .records
            .topics(space, "speaker:")?
            .into_iter()
            .filter_map(|t| t.strip_prefix("speaker:").map(String::from))
            .collect())
    }
}
