//! Agent trajectories: insert (idempotent), read, forget.
use crate::trajectory::derive_trajectory_units;
use cairn_core::{
    AgentState, ConflictError, SpaceId, TrajectoryInput, TrajectoryRecord, TrajectorySummary, Unit,
};

use super::error::EngineError;
use super::receipt::{Request, WriteOptions};
use super::reports::IngestReport;
use super::services::Trajectories;

impl Trajectories<'_> {
    /// Inserts agent trajectories into a space (created if needed). All are validated
    /// before anything is written; a trajectory already stored identically is left as it
    /// is, one stored with different content is a conflict.
    pub fn insert_trajectories(
        &self,
        space: &SpaceId,
        trajectories: Vec<TrajectoryInput>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, EngineError> {
        let request = Request::new(space, opts, "trajectories", &trajectories)?;
        let trajectories = trajectories
            .into_iter()
            .enumerate()
            .map(|(i, t)| t.validate().map_err(|e| e.nested(&format!("[{i}]"))))
            .collect::<Result<Vec<_>, _>>()?;
        self.b.records.create_space(space)?;
        let now = chrono::Utc::now();
        let records = trajectories
            .into_iter()
            .map(|trajectory| TrajectoryRecord {
                space: space.clone(),
                recorded_at: now,
                trajectory,
            })
            .collect();
        self.write_trajectories(records, false, request.as_ref())
    }

    /// Writes trajectories (each in one transaction with its units), then indexes them.
    /// The request's receipt is stored after them: a trajectory stored again identically
    /// is left alone, so a retry that finds no receipt still writes nothing twice.
    pub(super) fn write_trajectories(
        &self,
        records: Vec<TrajectoryRecord>,
        rederive: bool,
        request: Option<&Request>,
    ) -> Result<IngestReport, EngineError> {
        let _staged = (!rederive).then(|| self.writes().stage_trajectories(&records));
        let _w = self.lock()?;
        if let Some(report) = request
            .map(|r| r.replay(self.b.records.as_ref()))
            .transpose()?
            .flatten()
        {
            return Ok(report);
        }
        let mut report = IngestReport::default();
        let planned = self.plan_trajectories(records, rederive, &mut report)?;
        self.write_planned_trajectories(planned, &mut report)?;
        if let Some(r) = request {
            self.b.records.put_sessions(&[], &[r.receipt(&report)])?;
        }
        Ok(report)
    }

    /// The trajectories to write: a conflict anywhere refuses all of them before any is
    /// written; one stored identically is counted unchanged (written again on a rebuild).
    pub(super) fn plan_trajectories(
        &self,
        records: Vec<TrajectoryRecord>,
        rederive: bool,
        report: &mut IngestReport,
    ) -> Result<Vec<TrajectoryRecord>, EngineError> {
        let mut planned: Vec<TrajectoryRecord> = Vec::new();
        let mut position: std::collections::HashMap<(SpaceId, String), usize> =
            std::collections::HashMap::new();
        for (i, r) in records.into_iter().enumerate() {
            let key = (r.space.clone(), r.trajectory.id.clone());
            let stored = match position.get(&key) {
                Some(&p) => Some(planned[p].clone()),
                None => self.b.records.get_trajectory(&r.space, &r.trajectory.id)?,
            };
            match stored {
                Some(s) if s.trajectory != r.trajectory => {
                    return Err(ConflictError::new(
                        format!("trajectory {:?}", r.trajectory.id),
                        "is already stored with different content (forget it first to replace it)",
                    )
                    .at(format!("[{i}]"))
                    .into())
                }
                Some(_) if !rederive => report.unchanged += 1,
                _ => {
                    position.insert(key, planned.len());
                    planned.push(r);
                }
            }
        }
        Ok(planned)
    }

    /// Writes planned trajectories (each in one transaction with its units), then
    /// indexes them; the caller holds the write lock.
    pub(super) fn write_planned_trajectories(
        &self,
        planned: Vec<TrajectoryRecord>,
        report: &mut IngestReport,
    ) -> Result<(), EngineError> {
        let mut written = Vec::new();
        let mut last = 0;
        if !planned.is_empty() {
            self.hold_reserve()?;
        }
        for r in planned {
            let units = derive_trajectory_units(&r.space, &r.trajectory, r.recorded_at);
            last = self.b.records.put_trajectory(&r, &units)?;
            report.trajectories += 1;
            report.units += units.len();
            written.extend(units);
        }
        self.index_written(written, last, report)
    }

    /// Forgets a trajectory: its record, units, vectors, index entries and the
    /// observations no other trajectory shares.
    pub fn forget_trajectory(&self, space: &SpaceId, id: &str) -> Result<usize, EngineError> {
        self.require_space(space)?;
        let w = self.lock_to_forget()?;
        let removed = self.delete_trajectory_locked(space, id)?;
        self.forgetting().scrub(w)?;
        self.forgotten();
        Ok(removed)
    }

    /// [`Trajectories::forget_trajectory`] for a caller holding the write lock.
    pub(super) fn delete_trajectory_locked(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<usize, EngineError> {
        // Units are derived deterministically, so the record tells what was embedded.
        if let Some(r) = self.b.records.get_trajectory(space, id)? {
            let units = derive_trajectory_units(space, &r.trajectory, r.recorded_at);
            self.purge_cached(&units, &[])?;
        }
        let ids = self.b.records.delete_trajectory(space, id)?;
        self.b.text.remove_forgotten(space, &ids)?;
        self.b.vectors.remove(space, &ids)?;
        self.removals_applied(space)?;
        Ok(ids.len())
    }

    /// A trajectory exactly as inserted.
    pub fn trajectory(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<Option<TrajectoryRecord>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.get_trajectory(space, id)?)
    }

    /// State `index` of a trajectory, exactly as inserted, with the trajectory's state
    /// count (`None`: no such trajectory; `(n, None)`: no such state).
    pub fn stored_state(
        &self,
        space: &SpaceId,
        id: &str,
        index: usize,
    ) -> Result<Option<(usize, Option<AgentState>)>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.trajectory_state(space, id, index)?)
    }

    /// Every trajectory of a space, exactly as inserted.
    pub fn trajectories(&self, space: &SpaceId) -> Result<Vec<TrajectoryRecord>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.trajectories(space)?)
    }

    /// The manifest of a space: goal, outcome, steps and URLs of each trajectory.
    pub fn trajectory_manifest(
        &self,
        space: &SpaceId,
    ) -> Result<Vec<TrajectorySummary>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.trajectory_summaries(space)?)
    }

    /// The units derived from one trajectory (slices, events, its note), oldest first.
    pub fn trajectory_units(
        &self,
        space: &SpaceId,
        trajectory: &str,
    ) -> Result<Vec<Unit>, EngineError> {
        self.require_space(space)?;
        Ok(self.b.records.trajectory_units(space, trajectory)?)
    }
}
