//! Import: restoring exported records (sessions and trajectories, keeping their
//! `recorded_at`) as one request. Every record is validated and every conflict found
//! before anything is written (spaces included), so a refused line leaves nothing of the
//! request behind; an idempotency key covers the whole request, trajectories too. Errors
//! name a record by its place among the sessions followed by the trajectories (`[n]`).
use cairn_core::{SessionRecord, SpaceId, TrajectoryRecord};
use std::collections::BTreeSet;

use super::error::EngineError;
use super::ingest::WriteMode;
use super::receipt::{Request, WriteOptions};
use super::reports::IngestReport;
use super::services::Writes;

impl Writes<'_> {
    /// Restores exported records, each into the space it names. Sessions are written in
    /// one transaction with the request's receipt; with trajectories, those follow (one
    /// transaction each) and the receipt comes last, so a retry after a crash between
    /// them finds no receipt and writes only what is missing (identical records are
    /// left alone).
    pub fn import(
        &self,
        sessions: Vec<SessionRecord>,
        trajectories: Vec<TrajectoryRecord>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, EngineError> {
        let space = sessions
            .first()
            .map(|r| &r.space)
            .or(trajectories.first().map(|r| &r.space));
        let request = match space {
            Some(s) => Request::new(&s.clone(), opts, "import", &(&sessions, &trajectories))?,
            None => None,
        };
        let n = sessions.len();
        let (sessions, trajectories) = validated(sessions, trajectories)?;
        let spaces: BTreeSet<SpaceId> = sessions
            .iter()
            .map(|(r, _)| r.space.clone())
            .chain(trajectories.iter().map(|r| r.space.clone()))
            .collect();
        let _staged = (
            self.stage_sessions(&sessions),
            self.stage_trajectories(&trajectories),
        );
        let _w = self.lock()?;
        if let Some(report) = request
            .as_ref()
            .map(|r| r.replay(self.b.records.as_ref()))
            .transpose()?
            .flatten()
        {
            return Ok(report);
        }
        let mut report = IngestReport::default();
        let planned = self.plan_writes(sessions, &mut report)?;
        let trajectories = self
            .trajectories()
            .plan_trajectories(trajectories, false, &mut report)
            .map_err(|e| shifted(e, n))?;
        // Nothing is refused from here on.
        for s in &spaces {
            self.b.records.create_space(s)?;
        }
        let with_sessions = trajectories
            .is_empty()
            .then_some(request.as_ref())
            .flatten();
        self.write_planned(planned, &mut report, with_sessions)?;
        if !trajectories.is_empty() {
            self.trajectories()
                .write_planned_trajectories(trajectories, &mut report)?;
            if let Some(r) = &request {
                self.b.records.put_sessions(&[], &[r.receipt(&report)])?;
            }
        }
        Ok(report)
    }
}

/// `e` with the record index that starts its field (`[i]...`) moved by `by`.
fn shifted(e: EngineError, by: usize) -> EngineError {
    let shift = |field: &mut Option<String>| {
        let moved = field
            .as_deref()
            .and_then(|f| f.strip_prefix('['))
            .and_then(|f| f.split_once(']'))
            .and_then(|(i, rest)| Some(format!("[{}]{rest}", i.parse::<usize>().ok()? + by)));
        if moved.is_some() {
            *field = moved;
        }
    };
    match e {
        EngineError::Conflict(mut c) => {
            shift(&mut c.field);
            EngineError::Conflict(c)
        }
        EngineError::Input(mut i) => {
            shift(&mut i.field);
            EngineError::Input(i)
        }
        other => other,
    }
}

/// Every record checked as a new one would be, in restore mode; an error names the
/// record by its place in the import (`[n]`: the n-th of the sessions followed by the
/// trajectories).
#[allow(clippy::type_complexity)]
fn validated(
    sessions: Vec<SessionRecord>,
    trajectories: Vec<TrajectoryRecord>,
) -> Result<(Vec<(SessionRecord, WriteMode)>, Vec<TrajectoryRecord>), EngineError> {
    let sessions: Vec<(SessionRecord, WriteMode)> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.session = r
                .session
                .validate()
                .map_err(|e| e.nested(&format!("[{i}].session")))?;
            Ok((r, WriteMode::Restore))
        })
        .collect::<Result<_, EngineError>>()?;
    // Trajectories are numbered after the sessions: `[n]` is the n-th record of
    // the sessions followed by the trajectories.
    let n = sessions.len();
    let trajectories: Vec<TrajectoryRecord> = trajectories
        .into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.trajectory = r
                .trajectory
                .validate()
                .map_err(|e| e.nested(&format!("[{}].trajectory", n + i)))?;
            Ok(r)
        })
        .collect::<Result<_, EngineError>>()?;
    Ok((sessions, trajectories))
}
