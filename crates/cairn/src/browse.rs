//! Read access for clients that browse a space (the server's memories and sessions
//! endpoints): single records and units by id. Reads only; every write goes through the
//! engine so derived state stays consistent.
use crate::memory::space;
use crate::{Error, Memory};
use cairn_core::{FactSubject, SessionRecord, StoreError, Timestamp, Unit};

impl Memory {
    /// True if the space exists.
    pub fn space_exists(&self, space_name: &str) -> Result<bool, Error> {
        Ok(self.records.space_exists(&space(space_name)?)?)
    }

    fn require(&self, space_name: &str) -> Result<cairn_core::SpaceId, Error> {
        let sp = space(space_name)?;
        if !self.records.space_exists(&sp)? {
            return Err(StoreError::NoSuchSpace(space_name.to_string()).into());
        }
        Ok(sp)
    }

    /// One session exactly as ingested, if stored.
    pub fn session(&self, space_name: &str, id: &str) -> Result<Option<SessionRecord>, Error> {
        let sp = self.require(space_name)?;
        Ok(self.records.get_session(&sp, id)?)
    }

    /// Every unit of a space, ordered by occurrence time, session, position and id: a
    /// stable order, so offset pages do not shuffle between requests.
    pub fn space_units(&self, space_name: &str) -> Result<Vec<Unit>, Error> {
        let sp = self.require(space_name)?;
        let mut units = self.records.space_units(&sp)?;
        units.sort_by(|a, b| {
            (
                a.occurred_at,
                &a.provenance.session_id,
                a.provenance.first_position,
                &a.id,
            )
                .cmp(&(
                    b.occurred_at,
                    &b.provenance.session_id,
                    b.provenance.first_position,
                    &b.id,
                ))
        });
        Ok(units)
    }

    /// Units by id, in the order asked; unknown ids are skipped.
    pub fn units(&self, space_name: &str, ids: &[String]) -> Result<Vec<Unit>, Error> {
        let sp = self.require(space_name)?;
        Ok(self.records.units(&sp, ids)?)
    }

    /// Every subject the space holds facts about as of a time (`None`: now): the subject
    /// as last written, how many statements it has, the newest value and when it was
    /// stated. [`Memory::history`] gives a subject's whole chain.
    pub fn fact_subjects(
        &self,
        space_name: &str,
        as_of: Option<Timestamp>,
    ) -> Result<Vec<FactSubject>, Error> {
        Ok(self.engine.fact_subjects(&space(space_name)?, as_of)?)
    }

    /// The units derived from one trajectory (slices, events, its note), oldest first.
    pub fn trajectory_units(&self, space_name: &str, id: &str) -> Result<Vec<Unit>, Error> {
        Ok(self.engine.trajectory_units(&space(space_name)?, id)?)
    }
}
