//! Trajectory rows: each body stored without its observations, which are kept once per
//! space by hash (gzip'd), and put back together when read.
use crate::body::{from_json, gunzip, gzip, to_json};
use crate::record_store::PgRecordStore;
use cairn_core::{SpaceId, StoreError, Timestamp, TrajectoryInput, TrajectoryRecord};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::PgConnection;
use std::collections::HashMap;

fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A trajectory row's body: the input without its observations, and for each state the
/// hash of its observation (if it had one).
#[derive(Serialize, Deserialize)]
struct StoredBody {
    trajectory: TrajectoryInput,
    observations: Vec<Option<String>>,
}

/// A trajectory's rows, made outside the transaction that writes them: its body without
/// the observations, its summary, and its distinct observations by hash.
pub(crate) struct TrajectoryRows {
    body: Vec<u8>,
    summary: String,
    hashes: Vec<String>,
    blobs: Vec<Vec<u8>>,
}

impl TrajectoryRows {
    pub(crate) fn of(record: &TrajectoryRecord) -> Result<Self, StoreError> {
        let mut trajectory = record.trajectory.clone();
        let mut refs = Vec::with_capacity(trajectory.states.len());
        let mut observations: Vec<(String, Vec<u8>)> = Vec::new();
        for s in &mut trajectory.states {
            match s.observation.take() {
                Some(obs) => {
                    let h = hash(&obs);
                    if !observations.iter().any(|(k, _)| k == &h) {
                        observations.push((h.clone(), gzip(obs.as_bytes())?));
                    }
                    refs.push(Some(h));
                }
                None => refs.push(None),
            }
        }
        let body = gzip(
            to_json(&StoredBody {
                trajectory,
                observations: refs,
            })?
            .as_bytes(),
        )?;
        let summary = to_json(&record.trajectory.summary(record.recorded_at))?;
        let (hashes, blobs): (Vec<String>, Vec<Vec<u8>>) = observations.into_iter().unzip();
        Ok(Self {
            body,
            summary,
            hashes,
            blobs,
        })
    }

    /// Writes the observations (those already there kept), the trajectory's references
    /// to them, and its row (a new one last in the space's order, or the old one
    /// replaced), inside the caller's transaction.
    pub(crate) async fn write(
        &self,
        conn: &mut PgConnection,
        space: &str,
        id: &str,
        recorded_at: Timestamp,
    ) -> Result<(), sqlx::Error> {
        sqlx::query(
            "INSERT INTO observations(space, hash, body)
             SELECT $1, * FROM UNNEST($2::text[], $3::bytea[]) ON CONFLICT DO NOTHING",
        )
        .bind(space)
        .bind(&self.hashes)
        .bind(&self.blobs)
        .execute(&mut *conn)
        .await?;
        sqlx::query("DELETE FROM trajectory_observations WHERE space = $1 AND trajectory_id = $2")
            .bind(space)
            .bind(id)
            .execute(&mut *conn)
            .await?;
        sqlx::query(
            "INSERT INTO trajectory_observations(space, trajectory_id, hash)
             SELECT $1, $2, h FROM UNNEST($3::text[]) AS h ON CONFLICT DO NOTHING",
        )
        .bind(space)
        .bind(id)
        .bind(&self.hashes)
        .execute(&mut *conn)
        .await?;
        sqlx::query(
            "INSERT INTO trajectories(space, id, ord, recorded_at, summary, body)
             VALUES ($1, $2, (SELECT COALESCE(MAX(ord), -1) + 1 FROM trajectories WHERE space = $1), $3, $4, $5)
             ON CONFLICT (space, id) DO UPDATE SET recorded_at = EXCLUDED.recorded_at,
                 summary = EXCLUDED.summary, body = EXCLUDED.body",
        )
        .bind(space)
        .bind(id)
        .bind(recorded_at.to_rfc3339())
        .bind(&self.summary)
        .bind(&self.body)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }
}

impl PgRecordStore {
    /// The records of trajectory rows (`recorded_at`, body), their observations put back.
    pub(crate) fn records_of_rows(
        &self,
        space: &SpaceId,
        rows: Vec<(String, Vec<u8>)>,
    ) -> Result<Vec<TrajectoryRecord>, StoreError> {
        let mut stored = Vec::with_capacity(rows.len());
        let mut wanted: Vec<String> = Vec::new();
        for (at, body) in rows {
            let b: StoredBody = from_json(&gunzip(&body, "trajectory")?, "trajectory")?;
            wanted.extend(b.observations.iter().flatten().cloned());
            stored.push((at, b));
        }
        wanted.sort();
        wanted.dedup();
        let found: Vec<(String, Vec<u8>)> = self.db.block_on(
            sqlx::query_as(
                "SELECT hash, body FROM observations WHERE space = $1 AND hash = ANY($2)",
            )
            .bind(space.as_str())
            .bind(&wanted)
            .fetch_all(self.db.pool()),
        )?;
        let mut obs: HashMap<String, String> = HashMap::new();
        for (h, b) in found {
            obs.insert(h, gunzip(&b, "observation")?);
        }
        stored
            .into_iter()
            .map(|(at, b)| {
                let mut trajectory = b.trajectory;
                for (s, h) in trajectory.states.iter_mut().zip(&b.observations) {
                    if let Some(h) = h {
                        match obs.get(h) {
                            Some(o) => s.observation = Some(o.clone()),
                            None => {
                                return Err(StoreError::Corrupt(format!(
                                    "observation {h} is missing"
                                )))
                            }
                        }
                    }
                }
                let recorded_at: Timestamp = chrono::DateTime::parse_from_rfc3339(&at)
                    .map_err(|e| StoreError::Corrupt(format!("trajectory recorded_at: {e}")))?
                    .with_timezone(&chrono::Utc);
                Ok(TrajectoryRecord {
                    space: space.clone(),
                    recorded_at,
                    trajectory,
                })
            })
            .collect()
    }

    /// The state `index` of a trajectory with its observation, and the trajectory's
    /// number of states (what `RecordStore::trajectory_state` answers).
    pub(crate) fn state_of(
        &self,
        space: &SpaceId,
        id: &str,
        index: usize,
    ) -> Result<Option<(usize, Option<cairn_core::AgentState>)>, StoreError> {
        let body: Option<Vec<u8>> = self.db.block_on(
            sqlx::query_scalar("SELECT body FROM trajectories WHERE space = $1 AND id = $2")
                .bind(space.as_str())
                .bind(id)
                .fetch_optional(self.db.pool()),
        )?;
        let Some(body) = body else {
            return Ok(None);
        };
        let stored: StoredBody = from_json(&gunzip(&body, "trajectory")?, "trajectory")?;
        let n = stored.trajectory.states.len();
        let Some(mut state) = stored.trajectory.states.into_iter().nth(index) else {
            return Ok(Some((n, None)));
        };
        if let Some(Some(h)) = stored.observations.get(index) {
            let found: Option<Vec<u8>> = self.db.block_on(
                sqlx::query_scalar("SELECT body FROM observations WHERE space = $1 AND hash = $2")
                    .bind(space.as_str())
                    .bind(h)
                    .fetch_optional(self.db.pool()),
            )?;
            let found =
                found.ok_or_else(|| StoreError::Corrupt(format!("observation {h} is missing")))?;
            state.observation = Some(gunzip(&found, "observation")?);
        }
        Ok(Some((n, Some(state))))
    }
}

/// Drops the space's observations that no trajectory references any more.
pub(crate) async fn collect_garbage(
    conn: &mut PgConnection,
    space: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM observations o WHERE o.space = $1 AND NOT EXISTS
           (SELECT 1 FROM trajectory_observations t WHERE t.space = $1 AND t.hash = o.hash)",
    )
    .bind(space)
    .execute(conn)
    .await?;
    Ok(())
}
