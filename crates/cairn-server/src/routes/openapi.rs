//! The OpenAPI document, generated: the operations from the `#[utoipa::path]` attributes
//! of the handlers (and of [`mcp`], which stands for rmcp's service), the bodies' schemas
//! from the wire types (`wire/`), every bound and vocabulary from the library's constants.
//!
//! `cargo run --release -p cairn-server --example openapi > crates/cairn-server/openapi.json`
//! writes the checked-in copy; `tests/http.rs` fails when it differs from [`document`] or
//! from what `/v1/openapi.json` serves, or when the router and the document disagree.
use crate::wire::doc::*;
use serde_json::{json, Value};
use std::sync::OnceLock;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Cairn API",
        version = "1",
        description = "Long-term memory for AI agents. Every route but health, ready and this document needs an API key: `Authorization: Bearer <key>` (also `Token <key>` or `X-API-Key`). Errors are problem details with a stable `code`.\n\nEvery route refuses a `Host` it does not answer to (403 `host_not_allowed`), against DNS rebinding."
    ),
    servers((url = "http://127.0.0.1:7700")),
    security(("bearer" = [])),
    tags(
        (name = "service"),
        (name = "spaces"),
        (name = "keys"),
        (name = "ingest"),
        (name = "sessions"),
        (name = "recall"),
        (name = "memories"),
        (name = "mcp"),
        (name = "inspector"),
        (name = "entities"),
    ),
    paths(
        crate::ui::index,
        crate::ui::index_slash,
        crate::ui::file,
        mcp,
        super::spaces::health,
        super::spaces::ready,
        openapi,
        super::keys::list,
        super::keys::create,
        super::keys::revoke,
        super::spaces::list_spaces,
        super::spaces::create_space,
        super::spaces::delete_space,
        super::spaces::forget_partition,
        super::spaces::all_stats,
        super::spaces::space_stats,
        super::sessions::ingest_session,
        super::sessions::ingest_batch,
        super::sessions::add_messages,
        super::sessions::add_group_messages,
        super::sessions::list_sessions,
        super::sessions::get_session,
        super::sessions::delete_session,
        super::sessions::delete_message,
        super::recall::recall,
        super::memories::list_memories,
        super::memories::get_memory,
        super::memories::delete_memory,
        super::trajectories::insert_trajectories,
        super::trajectories::trajectory_manifest,
        super::trajectories::get_trajectory,
        super::trajectories::delete_trajectory,
        super::trajectories::get_trajectory_state,
        super::recall::history,
        super::recall::speakers,
        super::recall::profile,
        super::transfer::export,
        super::transfer::import,
        super::inspect::me,
        super::inspect::subjects,
        super::inspect::session_units,
        super::inspect::trajectory_units,
        super::entities::list,
        super::entities::one,
        super::trajectory_inspect::manifest,
        super::trajectory_inspect::summary,
        super::trajectory_inspect::state_view,
        super::trajectory_inspect::span,
        super::trajectory_inspect::match_states,
        super::trajectory_inspect::search,
        super::trajectory_inspect::context,
        super::trajectory_inspect::inspect,
        super::trajectory_inspect::agent,
    ),
    components(schemas(crate::error::Problem), responses(
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        TooLarge,
        UnsupportedMediaType,
        Invalid,
        Internal,
    )),
    modifiers(&Bearer),
)]
struct Generated;

/// `GET /v1/openapi.json`: the document, beside what builds it.
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    operation_id = "openapi",
    tag = "service",
    summary = "This document",
    description = "The OpenAPI description of the API. No key needed.",
    responses(
        (status = 200, description = "OK", body = Object),
        (status = 403, response = Forbidden),
    ),
    security(()),
)]
pub(super) async fn openapi() -> axum::Json<&'static Value> {
    axum::Json(document())
}

/// `POST /mcp`. The route is rmcp's streamable HTTP service (`mcp::http_service`), which
/// has no handler function to carry the attribute: this function stands for it in the
/// document and is never called.
#[utoipa::path(
    post,
    path = "/mcp",
    operation_id = "mcp",
    tag = "mcp",
    summary = "MCP (streamable HTTP)",
    description = "Model Context Protocol endpoint, stateless, JSON responses. Tools: the memory tools (`?tools=memory`, the server's default unless `--mcp-tools all`) or those and the trajectory tools (`?tools=all`). The key scopes tool calls like REST calls.",
    request_body(content = Object, description = "A JSON-RPC 2.0 message", content_type = "application/json"),
    responses(
        (status = 200, description = "A JSON-RPC 2.0 response", body = Object, content_type = "application/json"),
        (status = 202, description = "Notification accepted"),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 413, response = TooLarge),
        (status = 415, response = UnsupportedMediaType),
        (status = 500, response = Internal),
    ),
)]
#[allow(dead_code)]
fn mcp() {}

struct Bearer;

impl Modify for Bearer {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let scheme =
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build());
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme("bearer", scheme);
    }
}

/// The document `/v1/openapi.json` serves (built once).
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| build().unwrap_or_else(|e| panic!("building the OpenAPI document: {e}")))
}

/// The document as the checked-in file holds it (pretty, ending in a newline).
pub fn document_text() -> String {
    let mut text = serde_json::to_string_pretty(document()).expect("a JSON value prints");
    text.push('\n');
    text
}

fn build() -> Result<Value, String> {
    let mut doc = serde_json::to_value(Generated::openapi()).map_err(|e| e.to_string())?;
    merge_flattened(&mut doc)?;
    public_routes(&mut doc);
    state_bounds(&mut doc)?;
    state_vocabularies(&mut doc)?;
    crate::wire::stated::state_descriptions(&mut doc)?;
    Ok(doc)
}

/// A request with a flattened part (the scope, `wire/scope.rs`) is generated as `allOf`
/// its parts; the document states it as the one object a client sends, with one list of
/// properties. A part no other schema names is dropped from the components.
fn merge_flattened(doc: &mut Value) -> Result<(), String> {
    let bodies = request_bodies(doc);
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .ok_or("the document has no schemas")?;
    let before = schemas.clone();
    let mut merged_parts = Vec::new();
    for (name, schema) in schemas.iter_mut() {
        let Some(parts) = schema.get("allOf").and_then(Value::as_array).cloned() else {
            continue;
        };
        let (mut properties, mut required) = (serde_json::Map::new(), Vec::new());
        for part in parts {
            let part = match part.get("$ref").and_then(Value::as_str) {
                Some(r) => {
                    let target = r.rsplit('/').next().unwrap_or_default();
                    merged_parts.push(target.to_string());
                    before
                        .get(target)
                        .cloned()
                        .ok_or_else(|| format!("{name}: {r} is not a schema"))?
                }
                None => part,
            };
            if let Some(Value::Object(p)) = part.get("properties") {
                properties.extend(p.clone());
            }
            if let Some(Value::Array(r)) = part.get("required") {
                required.extend(r.iter().cloned());
            }
        }
        let mut object = json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            object["required"] = Value::Array(required);
        }
        if let Some(d) = schema.get("description") {
            object["description"] = d.clone();
        }
        // utoipa drops `additionalProperties` from a flattened struct; every body the server
        // reads refuses unknown fields (`deny_unknown_fields`), so a body is closed.
        if bodies.contains(name) {
            object["additionalProperties"] = json!(false);
        }
        *schema = object;
    }
    let text = doc.to_string();
    let schemas = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .ok_or("the document has no schemas")?;
    for part in merged_parts {
        if !text.contains(&format!("\"#/components/schemas/{part}\"")) {
            schemas.remove(&part);
        }
    }
    Ok(())
}

/// The schemas the operations take as their JSON request body.
fn request_bodies(doc: &Value) -> std::collections::BTreeSet<String> {
    let operations = doc["paths"]
        .as_object()
        .into_iter()
        .flat_map(|paths| paths.values())
        .filter_map(Value::as_object)
        .flat_map(|path| path.values());
    operations
        .filter_map(|op| op.pointer("/requestBody/content/application~1json/schema/$ref"))
        .filter_map(Value::as_str)
        .filter_map(|r| r.rsplit('/').next())
        .map(str::to_string)
        .collect()
}

/// An operation that needs no key says `security: []`; the attribute can only write
/// `security(())`, which is `[{}]`.
fn public_routes(doc: &mut Value) {
    let Some(Value::Object(paths)) = doc.get_mut("paths") else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|p| p.values_mut())
    {
        if op.get("security") == Some(&json!([{}])) {
            op["security"] = json!([]);
        }
    }
}

/// States the library's vocabularies (unit kinds, recall formats) where the wire takes them.
fn state_vocabularies(doc: &mut Value) -> Result<(), String> {
    let kinds: Vec<Value> = cairn::UnitKind::ALL.iter().map(|k| json!(k)).collect();
    let formats = json!([cairn::Format::Synthesized, cairn::Format::Raw]);
    let recall = "/components/schemas/RecallRequest/properties";
    let set = |doc: &mut Value, at: String, key: &str, v: Value| -> Result<(), String> {
        let o = doc
            .pointer_mut(&at)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| format!("{at}: not in the document"))?;
        o.insert(key.into(), v);
        Ok(())
    };
    set(doc, format!("{recall}/kinds/items"), "enum", json!(kinds))?;
    set(doc, format!("{recall}/format"), "enum", formats)?;
    set(
        doc,
        format!("{recall}/format"),
        "default",
        json!(cairn::Format::default()),
    )?;
    // The enumerations of the trajectory verbs are the wire's own (`wire/inspection.rs`);
    // their defaults are the library's.
    let agent = "/components/schemas/AgentRequest/properties/fallback".to_string();
    set(
        doc,
        agent,
        "default",
        json!(cairn::AgentFallback::default()),
    )?;
    let categories: Vec<Value> = cairn::FactCategory::ALL.iter().map(|c| json!(c)).collect();
    for schema in ["FactSubject", "FactVersion", "ProfileFact"] {
        let at = format!("/components/schemas/{schema}/properties/category");
        set(doc, at, "enum", json!(categories))?;
    }
    let entity_kinds = json!(crate::wire::entities::entity_kinds());
    for schema in ["EntitySummary", "EntityDetail", "EntityRelation"] {
        let at = format!("/components/schemas/{schema}/properties/kind");
        set(doc, at, "enum", entity_kinds.clone())?;
    }
    let at = "/components/schemas/EntityMention/properties/edge".to_string();
    set(doc, at, "enum", json!(crate::wire::entities::edge_kinds()))?;
    let mut listing = kinds.clone();
    listing.push(json!("all"));
    let memories = doc
        .pointer_mut("/paths/~1v1~1spaces~1{space}~1memories/get/parameters")
        .and_then(Value::as_array_mut)
        .ok_or("listMemories has no parameters")?;
    let kind = memories
        .iter_mut()
        .find(|p| p["name"] == "kind")
        .ok_or("listMemories has no kind parameter")?;
    kind["schema"]["enum"] = json!(listing);
    // What the listing shows when no kind is named, for a client (the inspector) to
    // offer the same set without a list of its own.
    kind["x-memory-kinds"] = json!(cairn::UnitKind::MEMORIES);
    Ok(())
}

/// States every bound and default the library checks, from its constants: the document
/// cannot promise a range validation does not keep. A bound whose field is gone from the
/// document is an error, so a renamed field cannot leave its bound behind.
fn state_bounds(doc: &mut Value) -> Result<(), String> {
    for (schema, property, min, max, default) in bounded_properties() {
        let at = format!("/components/schemas/{schema}/properties/{property}");
        let p = doc
            .pointer_mut(&at)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| format!("bound of {schema}.{property}: no such property"))?;
        p.insert("minimum".into(), min);
        p.insert("maximum".into(), max);
        p.insert("default".into(), default);
    }
    parameter_bounds(doc)
}

/// Each bounded property of a request body: (schema, property, minimum, maximum,
/// default), from the library's bounds and its options' defaults.
fn bounded_properties() -> [(&'static str, &'static str, Value, Value, Value); 10] {
    use cairn::bounds::*;
    let recall = cairn::RecallOptions::default();
    let inspect = cairn::InspectRecallOptions::default();
    let agent = cairn::AgentOptions::default();
    let context = cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS;
    let n = |v: usize| json!(v);
    [
        (
            "RecallRequest",
            "top_k",
            json!(1),
            n(MAX_TOP_K),
            n(recall.top_k),
        ),
        (
            "RecallRequest",
            "token_budget",
            json!(1),
            n(MAX_TOKEN_BUDGET),
            n(recall.token_budget),
        ),
        (
            "RecallRequest",
            "min_relevance",
            json!(MIN_RELEVANCE_RANGE.start()),
            json!(MIN_RELEVANCE_RANGE.end()),
            short_float(recall.min_relevance),
        ),
        (
            "ContextRequest",
            "token_budget",
            json!(1),
            n(MAX_TOKEN_BUDGET),
            n(context),
        ),
        (
            "InspectRequest",
            "token_budget",
            json!(1),
            n(MAX_TOKEN_BUDGET),
            n(inspect.token_budget),
        ),
        (
            "InspectRequest",
            "top_k",
            json!(1),
            n(MAX_TOP_K),
            n(inspect.top_k),
        ),
        (
            "InspectRequest",
            "trajectories",
            json!(1),
            n(MAX_INSPECT_TRAJECTORIES),
            n(inspect.trajectories),
        ),
        (
            "AgentRequest",
            "max_steps",
            json!(1),
            n(MAX_AGENT_STEPS),
            n(agent.max_steps),
        ),
        (
            "AgentRequest",
            "time_budget_ms",
            json!(1),
            json!(MAX_AGENT_TIME_MS),
            json!(agent.time_budget_ms),
        ),
        (
            "AgentRequest",
            "token_budget",
            json!(1),
            n(MAX_TOKEN_BUDGET),
            n(agent.token_budget),
        ),
    ]
}

/// The bounds of the path and query parameters: a space name's pattern, a listing's
/// `limit`.
fn parameter_bounds(doc: &mut Value) -> Result<(), String> {
    use cairn::bounds::*;
    let space = json!(format!("^[A-Za-z0-9._:@-]{{1,{MAX_SPACE_LEN}}}$"));
    let Some(Value::Object(paths)) = doc.get_mut("paths") else {
        return Err("the document has no paths".into());
    };
    // The two listings page by `limit` (the trajectory verbs have limits of their own).
    let listings = ["/v1/spaces/{space}/sessions", "/v1/spaces/{space}/memories"];
    for (path, item) in paths.iter_mut() {
        let listing = listings.contains(&path.as_str());
        let ops = item.as_object_mut().into_iter().flat_map(|o| o.iter_mut());
        for (method, op) in ops {
            let Some(Value::Array(params)) = op.get_mut("parameters") else {
                continue;
            };
            for param in params.iter_mut().filter_map(Value::as_object_mut) {
                let name = param.get("name").and_then(Value::as_str).map(str::to_owned);
                let place = param.get("in").and_then(Value::as_str).map(str::to_owned);
                let Some(Value::Object(schema)) = param.get_mut("schema") else {
                    continue;
                };
                match (name.as_deref(), place.as_deref()) {
                    (Some("space"), Some("path")) => {
                        schema.insert("pattern".into(), space.clone());
                    }
                    (Some("limit"), Some("query")) if listing && method == "get" => {
                        schema.insert("minimum".into(), json!(1));
                        schema.insert("maximum".into(), json!(MAX_PAGE));
                        schema.insert("default".into(), json!(DEFAULT_PAGE));
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// An `f32` as the short decimal it was written as (0.2, not 0.20000000298023224).
fn short_float(v: f32) -> Value {
    json!(v.to_string().parse::<f64>().unwrap_or(f64::from(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    out.push(r);
                }
                map.values().for_each(|x| refs(x, out));
            }
            Value::Array(items) => items.iter().for_each(|x| refs(x, out)),
            _ => {}
        }
    }

    #[test]
    fn every_reference_of_the_document_resolves() {
        let doc = document();
        let mut all = Vec::new();
        refs(doc, &mut all);
        assert!(all.len() > 100, "{} references", all.len());
        for r in all {
            let at = r.strip_prefix('#').expect("a local reference");
            assert!(doc.pointer(at).is_some(), "{r} resolves to nothing");
        }
    }

    #[test]
    fn the_bounds_are_the_libraries() {
        let doc = document();
        let p = |at: &str| doc.pointer(at).cloned().unwrap_or(Value::Null);
        let recall = "/components/schemas/RecallRequest/properties";
        assert_eq!(
            p(&format!("{recall}/top_k/maximum")),
            json!(cairn::bounds::MAX_TOP_K)
        );
        assert_eq!(
            p(&format!("{recall}/token_budget/maximum")),
            json!(cairn::bounds::MAX_TOKEN_BUDGET)
        );
        assert_eq!(p(&format!("{recall}/min_relevance/default")), json!(0.2));
        let limits: Vec<&Value> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|p| p.as_object().unwrap().values())
            .filter_map(|op| op["parameters"].as_array())
            .flatten()
            .filter(|p| p["name"] == "limit" && p["schema"]["default"] == json!(50))
            .collect();
        assert_eq!(limits.len(), 2, "the two listings");
        assert!(limits
            .iter()
            .all(|l| l["schema"]["maximum"] == json!(cairn::bounds::MAX_PAGE)));
    }
}
