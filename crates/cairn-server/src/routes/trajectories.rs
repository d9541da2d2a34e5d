//! Agent trajectories: insert, the manifest, one trajectory or one state, forget.
use super::{ingested, write_options, ApiResult, S};
use crate::auth::{Need, Principal};
use crate::error::ApiError;
use crate::ops::blocking;
use crate::wire::out::Removed;
use crate::wire::{TrajectoryIngest, WireJson};
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::{Extension, Json};
use serde_json::{json, Value};

pub(super) async fn insert_trajectories(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
    headers: HeaderMap,
    WireJson(body): WireJson<TrajectoryIngest>,
) -> ApiResult<Response> {
    who.require(&space, Need::Write)?;
    st.config.limits.check_trajectories(&body.trajectories)?;
    let opts = write_options(&headers)?;
    let report = blocking(&st, move |m| {
        m.insert_trajectories_with(&space, body.trajectories, &opts)
    })
    .await
    .map_err(|e| e.nested("trajectories"))?;
    Ok(ingested(report))
}

pub(super) async fn trajectory_manifest(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path(space): Path<String>,
) -> ApiResult<Json<Value>> {
    who.require(&space, Need::Read)?;
    let list = blocking(&st, move |m| m.trajectory_manifest(&space)).await?;
    Ok(Json(json!({ "trajectories": list })))
}

async fn fetch_trajectory(st: &S, space: &str, id: &str) -> ApiResult<cairn::TrajectoryRecord> {
    let (sp, i) = (space.to_string(), id.to_string());
    blocking(st, move |m| m.trajectory(&sp, &i))
        .await?
        .ok_or_else(|| ApiError::not_found("not_found", format!("trajectory {id:?} not found")))
}

pub(super) async fn get_trajectory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<cairn::TrajectoryRecord>> {
    who.require(&space, Need::Read)?;
    Ok(Json(fetch_trajectory(&st, &space, &id).await?))
}

pub(super) async fn get_trajectory_state(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id, index)): Path<(String, String, String)>,
) -> ApiResult<Json<cairn::AgentState>> {
    who.require(&space, Need::Read)?;
    let i: usize = index
        .parse()
        .map_err(|_| ApiError::invalid("index", format!("{index:?} is not a state index")))?;
    let t = fetch_trajectory(&st, &space, &id).await?;
    let n = t.trajectory.states.len();
    t.trajectory
        .states
        .into_iter()
        .nth(i)
        .map(Json)
        .ok_or_else(|| {
            ApiError::not_found(
                "not_found",
                format!("trajectory {id:?} has {n} states; no state {i}"),
            )
        })
}

pub(super) async fn delete_trajectory(
    State(st): State<S>,
    Extension(who): Extension<Principal>,
    Path((space, id)): Path<(String, String)>,
) -> ApiResult<Json<Removed>> {
    who.require(&space, Need::Write)?;
    let removed_units = blocking(&st, move |m| m.forget_trajectory(&space, &id)).await?;
    Ok(Json(Removed { removed_units }))
}
