//! Agent trajectories: insert, the manifest, one trajectory or one state, forget.
use super::handler::{ApiResult, S};
use super::idempotency::{ingested, write_options};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::doc::*;
use crate::wire::formats::AgentStateWire;
use crate::wire::out::{Removed, TrajectoryList};
use crate::wire::records::{TrajectoryRecordOut, TrajectorySummaryOut};
use crate::wire::{TrajectoryIngest, WireJson};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::{Extension, Json};

#[utoipa::path(
    post,
    path = "/v1/spaces/{space}/trajectories",
    operation_id = "insertTrajectories",
    tag = "ingest",
    summary = "Insert agent trajectories",
    description = "Trajectories are kept verbatim (observations deduplicated and compressed); slices, events and a procedure/gotcha note are derived from each. Inserting an identical trajectory again changes nothing; different content under a stored id is a conflict.",
    params(SpacePath, IdempotencyHeader),
    request_body = inline(crate::wire::TrajectoryIngest),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Ingested, headers(("Idempotency-Replayed" = String, description = "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`: nothing was written now."))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn insert_trajectories(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<TrajectoryIngest>,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
    let trajectories = body.into_trajectories();
    st.config.limits.check_trajectories(&trajectories)?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.trajectories()
            .insert_many_with(&space, trajectories, &opts)
    })
    .await
    .map_err(|e| e.nested("trajectories"))?;
    Ok(ingested(report))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories",
    operation_id = "trajectoryManifest",
    tag = "trajectories",
    summary = "The trajectory manifest of a space",
    description = "Goal, outcome, steps and URLs of every trajectory, in insert order.",
    params(SpacePath),
    responses(
        (status = 200, description = "OK", body = inline(crate::wire::out::TrajectoryList)),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn trajectory_manifest(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<TrajectoryList>> {
    who.require(&space, Need::Read)?;
    let list = blocking(&st, move |m| m.trajectories().manifest(&space)).await?;
    let trajectories = list.into_iter().map(TrajectorySummaryOut::from).collect();
    Ok(Json(TrajectoryList { trajectories }))
}

async fn fetch_trajectory(st: &S, space: &str, id: &str) -> ApiResult<cairn::TrajectoryRecord> {
    let (sp, i) = (space.to_string(), id.to_string());
    blocking(st, move |m| m.trajectories().get(&sp, &i))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("trajectory {id:?} not found")))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}",
    operation_id = "getTrajectory",
    tag = "trajectories",
    summary = "Get a trajectory",
    description = "The trajectory exactly as inserted.",
    params(SpacePath, TrajectoryPath),
    responses(
        (status = 200, description = "OK", body = crate::wire::records::TrajectoryRecordOut),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn get_trajectory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<TrajectoryRecordOut>> {
    who.require(&space, Need::Read)?;
    Ok(Json(fetch_trajectory(&st, &space, &id).await?.into()))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{space}/trajectories/{id}/states/{index}",
    operation_id = "getTrajectoryState",
    tag = "trajectories",
    summary = "Get one state of a trajectory",
    description = "State `index` (0-based) exactly as inserted.",
    params(SpacePath, TrajectoryPath, StatePath),
    responses(
        (status = 200, description = "OK", body = AgentStateWire),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn get_trajectory_state(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id, index)): Path<(String, String, String)>,
) -> ApiResult<Json<AgentStateWire>> {
    who.require(&space, Need::Read)?;
    let i: usize = index
        .parse()
        .map_err(|_| ApiError::invalid("index", format!("{index:?} is not a state index")))?;
    let (sp, tid) = (space.clone(), id.clone());
    match blocking(&st, move |m| m.trajectories().stored_state(&sp, &tid, i)).await? {
        None => Err(ApiError::not_found(
            "not_found",
            format!("trajectory {id:?} not found"),
        )),
        Some((n, None)) => Err(ApiError::not_found(
            "not_found",
            format!("trajectory {id:?} has {n} states; no state {i}"),
        )),
        Some((_, Some(s))) => Ok(Json(s.into())),
    }
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{space}/trajectories/{id}",
    operation_id = "deleteTrajectory",
    tag = "trajectories",
    summary = "Forget a trajectory",
    description = "Removes the trajectory, its units, index entries, vectors and observations no other trajectory shares.",
    params(SpacePath, TrajectoryPath),
    responses(
        (status = 200, description = "OK", body = crate::wire::out::Removed),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 422, response = Invalid),
        (status = 500, response = Internal),
    ),
)]
pub(super) async fn delete_trajectory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<Removed>> {
    who.require(&space, Need::Write)?;
    let removed_units = blocking(&st, move |m| m.trajectories().forget(&space, &id)).await?;
    Ok(Json(Removed { removed_units }))
}
