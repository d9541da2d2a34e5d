//! Reads for clients that browse a space: sessions and units by id, pages of them, and
//! the metadata filter, which is evaluated here (on session headers) for listings and
//! recall alike, so every surface filters the same way.
use cairn_core::{Scope, SessionHeader, SessionRecord, SpaceId, Unit, UnitPage, UnitQuery};

use crate::budget::Ticker;

use super::error::EngineError;
use super::services::Knowledge;

/// A page of sessions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionPage {
    pub sessions: Vec<SessionRecord>,
    /// Sessions matching the filter across all pages.
    pub total: usize,
}

impl Knowledge<'_> {
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

    /// A page of a space's units (see [`UnitQuery`] for the order), keeping only units of
    /// the sessions `scope` admits (its `sessions`, `groups`, metadata filter and
    /// partition; the query's own times apply, not the scope's).
    pub fn list_units(
        &self,
        space: &SpaceId,
        query: &UnitQuery,
        scope: &Scope,
    ) -> Result<UnitPage, EngineError> {
        self.require_space(space)?;
        let mut query = query.clone();
        if let Some(admitted) = self.view(space, scope)?.sessions() {
            query.sessions = Some(match query.sessions.take() {
                None => admitted.to_vec(),
                Some(asked) => asked
                    .into_iter()
                    .filter(|s| admitted.binary_search(s).is_ok())
                    .collect(),
            });
        }
        Ok(self.b.records.list_units(space, &query)?)
    }

    /// A page of a space's sessions in ingest order, keeping only those `scope` admits
    /// (as for [`Knowledge::list_units`]); only the page's sessions are read whole.
    pub fn list_sessions(
        &self,
        space: &SpaceId,
        scope: &Scope,
        offset: usize,
        limit: usize,
    ) -> Result<SessionPage, EngineError> {
        self.require_space(space)?;
        let view = self.view(space, scope)?;
        let mut ticker = Ticker::new("sessions a filter admits");
        let mut ids: Vec<String> = Vec::new();
        for h in self.b.records.session_headers(space)? {
            ticker.tick()?;
            if view.admits(Some(&h.id)) {
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

    /// Every session of a space, exactly as ingested.
    pub fn export(&self, space: &SpaceId) -> Result<Vec<SessionRecord>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.sessions(space)?)
    }

    /// Every record of a space, exactly as stored, handed to `each` one at a time:
    /// sessions in ingest order, then trajectories in insert order (the order and the
    /// records of [`Knowledge::export`] and [`Trajectories::trajectories`](super::Trajectories::trajectories)). Each is read when its
    /// turn comes, so an export holds one record at a time and the list of what to read
    /// (the session headers and trajectory summaries), never the whole space (issue 54,
    /// finding 8: eight concurrent exports of a large space held 680 MiB more). A record
    /// written or forgotten while the export runs may or may not be in it; each one in it
    /// is whole. Returns how many records `each` was handed.
    pub fn export_each<E: From<EngineError>>(
        &self,
        space: &SpaceId,
        within: Option<&cairn_core::Partition>,
        mut each: impl FnMut(Exported) -> Result<(), E>,
    ) -> Result<usize, E> {
        let store = |e: cairn_core::StoreError| E::from(EngineError::from(e));
        self.require_space(space)?;
        // The partition's sessions are those its view admits: the rule every read keeps.
        let scope = Scope {
            partition: within.cloned(),
            ..Scope::default()
        };
        let view = self.view(space, &scope)?;
        let mut n = 0;
        let headers = self.b.records.session_headers(space).map_err(store)?;
        for h in headers {
            if !view.admits(Some(&h.id)) {
                continue;
            }
            // None: forgotten since the headers were read.
            if let Some(r) = self.b.records.get_session(space, &h.id).map_err(store)? {
                each(Exported::Session(r))?;
                n += 1;
            }
        }
        // A trajectory belongs to no session, so to no end-user partition: a view that
        // admits some sessions only admits none of them.
        if !view.admits(None) {
            return Ok(n);
        }
        let summaries = self.b.records.trajectory_summaries(space).map_err(store)?;
        for t in summaries {
            if let Some(r) = self.b.records.get_trajectory(space, &t.id).map_err(store)? {
                each(Exported::Trajectory(r))?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// The units derived from one session.
    pub fn session_units(&self, space: &SpaceId, session: &str) -> Result<Vec<Unit>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.session_units(space, session)?)
    }
}

/// One record of an export ([`Knowledge::export_each`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Exported {
    Session(SessionRecord),
    Trajectory(cairn_core::TrajectoryRecord),
}
