//! Read access for clients that browse a space (the server's memories and sessions
//! endpoints, the inspector): records and units by id, and pages of them filtered by the
//! engine. Reads only; every write goes through the engine so derived state stays
//! consistent.
use crate::memory::space;
use crate::{Error, Memory};
use cairn_core::filter::Filter;
use cairn_core::{
    FactSubject, ScopeOptions, SessionHeader, SessionRecord, Unit, UnitPage, UnitQuery,
};
use cairn_engine::SessionPage;
use serde_json::Value;

/// Parses a metadata filter over sessions (errors name the path, `filter.and[1].op`).
pub fn parse_filter(v: &Value) -> Result<Filter, Error> {
    Ok(Filter::parse_sessions(v)?)
}

impl Memory {
    /// True if the space exists.
    pub fn space_exists(&self, space_name: &str) -> Result<bool, Error> {
        Ok(self.engine.space_exists(&space(space_name)?)?)
    }

    /// One session exactly as ingested, if stored.
    pub fn session(&self, space_name: &str, id: &str) -> Result<Option<SessionRecord>, Error> {
        Ok(self.engine.knowledge().session(&space(space_name)?, id)?)
    }

    /// The headers of a space's sessions (id, times, group, metadata, message count) in
    /// ingest order, without reading their messages.
    pub fn session_headers(&self, space_name: &str) -> Result<Vec<SessionHeader>, Error> {
        Ok(self
            .engine
            .knowledge()
            .session_headers(&space(space_name)?)?)
    }

    /// A page of a space's sessions in ingest order, only those `sessions` admits: its
    /// `sessions` and `groups` lists, metadata filter (see [`cairn_core::filter`]) and
    /// end-user partition (its times and speakers do not apply to a listing).
    pub fn list_sessions(
        &self,
        space_name: &str,
        sessions: &ScopeOptions,
        offset: usize,
        limit: usize,
    ) -> Result<SessionPage, Error> {
        Ok(self.engine.knowledge().list_sessions(
            &space(space_name)?,
            &sessions.scope()?,
            offset,
            limit,
        )?)
    }

    /// A page of a space's units, filtered and ordered by the store (occurrence time,
    /// session, position, id; undated units last), so offset pages are stable; only
    /// units of the sessions `sessions` admits (as for [`Memory::list_sessions`]).
    pub fn list_units(
        &self,
        space_name: &str,
        query: &UnitQuery,
        sessions: &ScopeOptions,
    ) -> Result<UnitPage, Error> {
        Ok(self
            .engine
            .knowledge()
            .list_units(&space(space_name)?, query, &sessions.scope()?)?)
    }

    /// Every unit of a space, in the listing order (see [`Memory::list_units`]).
    pub fn space_units(&self, space_name: &str) -> Result<Vec<Unit>, Error> {
        let query = UnitQuery {
            limit: usize::MAX >> 1,
            ..Default::default()
        };
        Ok(self
            .list_units(space_name, &query, &ScopeOptions::default())?
            .units)
    }

    /// Units by id, in the order asked; unknown ids are skipped.
    pub fn units(&self, space_name: &str, ids: &[String]) -> Result<Vec<Unit>, Error> {
        Ok(self.engine.knowledge().units(&space(space_name)?, ids)?)
    }

    /// Every subject the facts `scope` sees are about (one entry per chain): the subject
    /// as last written, how many statements it has, the newest value and when it was
    /// stated. [`Memory::history`] gives a subject's whole chain.
    pub fn fact_subjects(
        &self,
        space_name: &str,
        scope: &ScopeOptions,
    ) -> Result<Vec<FactSubject>, Error> {
        Ok(self
            .engine
            .knowledge()
            .fact_subjects(&space(space_name)?, &scope.scope()?)?)
    }
}
