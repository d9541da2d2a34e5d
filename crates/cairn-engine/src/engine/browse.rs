//! Reads for clients that browse a space: sessions and units by id, pages of them, and
//! the metadata filter, which is evaluated here (on session headers) for listings and
//! recall alike, so every surface filters the same way.
use cairn_core::filter::{session_document, Filter};
use cairn_core::{SessionHeader, SessionRecord, SpaceId, Unit, UnitPage, UnitQuery};
use std::collections::HashSet;

use crate::budget::Ticker;

use super::{Engine, EngineError};

/// A page of sessions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionPage {
    pub sessions: Vec<SessionRecord>,
    /// Sessions matching the filter across all pages.
    pub total: usize,
}

impl Engine {
    /// One session exactly as ingested, if stored.
    pub fn session(&self, space: &SpaceId, id: &str) -> Result<Option<SessionRecord>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.get_session(space, id)?)
    }

    /// Units by id, in the order asked; unknown ids are skipped.
    pub fn units(&self, space: &SpaceId, ids: &[String]) -> Result<Vec<Unit>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.units(space, ids)?)
    }

    /// Every unit of a space, in sequence order.
    pub fn space_units(&self, space: &SpaceId) -> Result<Vec<Unit>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.space_units(space)?)
    }

    /// The headers of a space's sessions in ingest order (no messages read).
    pub fn session_headers(&self, space: &SpaceId) -> Result<Vec<SessionHeader>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.session_headers(space)?)
    }

    /// The ids of the sessions whose header matches `filter`, among `within` when given.
    pub fn matching_sessions(
        &self,
        space: &SpaceId,
        filter: &Filter,
        within: Option<&[String]>,
    ) -> Result<Vec<String>, EngineError> {
        let within: Option<HashSet<&str>> = within.map(|w| w.iter().map(String::as_str).collect());
        let mut ticker = Ticker::new("sessions a filter admits");
        let mut ids = Vec::new();
        for h in self.b.records.session_headers(space)? {
            ticker.tick()?;
            if within.as_ref().is_none_or(|w| w.contains(h.id.as_str()))
                && filter.matches(&session_document(&h))
            {
                ids.push(h.id);
            }
        }
        Ok(ids)
    }

    /// A page of a space's units (see [`UnitQuery`] for the order), keeping only units of
    /// sessions that match `filter` when one is given.
    pub fn list_units(
        &self,
        space: &SpaceId,
        query: &UnitQuery,
        filter: Option<&Filter>,
    ) -> Result<UnitPage, EngineError> {
        self.require_space(space)?;
        let mut query = query.clone();
        if let Some(f) = filter {
            query.sessions = Some(self.matching_sessions(space, f, query.sessions.as_deref())?);
        }
        Ok(self.b.records.list_units(space, &query)?)
    }

    /// A page of a space's sessions in ingest order, keeping only those matching
    /// `filter`; only the page's sessions are read whole.
    pub fn list_sessions(
        &self,
        space: &SpaceId,
        filter: Option<&Filter>,
        offset: usize,
        limit: usize,
    ) -> Result<SessionPage, EngineError> {
        self.require_space(space)?;
        let mut ticker = Ticker::new("sessions a filter admits");
        let mut ids: Vec<String> = Vec::new();
        for h in self.b.records.session_headers(space)? {
            ticker.tick()?;
            if filter.is_none_or(|f| f.matches(&session_document(&h))) {
                ids.push(h.id);
            }
        }
        let mut sessions = Vec::new();
        for id in ids.iter().skip(offset).take(limit) {
            sessions.extend(self.b.records.get_session(space, id)?);
        }
        Ok(SessionPage {
            sessions,
            total: ids.len(),
        })
    }
}
