//! The OpenAPI document, generated: the operations from the `#[utoipa::path]` attributes
//! of the handlers, the bodies' schemas from the wire types (`wire/`), every bound from
//! `cairn::bounds`. What is not generated yet is read from `wire/openapi-hand.json`
//! (the routes and schemas still described by hand; ARCHITECTURE.md lists them) and merged
//! in; a route or schema described in both is an error.
//!
//! `cargo run --release -p cairn-server --example openapi > crates/cairn-server/openapi.json`
//! writes the checked-in copy; `tests/http.rs` fails when it differs from [`document`] or
//! from what `/v1/openapi.json` serves, or when the router and the document disagree.
use crate::wire::doc::*;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The part still described by hand.
const HAND: &str = include_str!("../wire/openapi-hand.json");

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
        (name = "ingest"),
        (name = "sessions"),
        (name = "recall"),
        (name = "memories"),
        (name = "mcp"),
        (name = "inspector"),
        (name = "entities"),
    ),
    paths(
        super::spaces::health,
        super::spaces::ready,
        super::spaces::openapi,
        super::spaces::list_spaces,
        super::spaces::create_space,
        super::spaces::delete_space,
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
    components(responses(
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
    let hand: Value = serde_json::from_str(HAND).map_err(|e| format!("openapi-hand.json: {e}"))?;
    merge_hand(&mut doc, hand)?;
    if let Some(Value::Object(schemas)) = doc.pointer("/components/schemas") {
        if let Some((name, _)) = schemas.iter().find(|(_, s)| is_placeholder(s)) {
            return Err(format!("schema {name} is referenced but not described"));
        }
    }
    public_routes(&mut doc);
    state_bounds(&mut doc)?;
    state_vocabularies(&mut doc)?;
    Ok(doc)
}

fn is_placeholder(schema: &Value) -> bool {
    schema.get("description").and_then(Value::as_str) == Some(HAND_PLACEHOLDER)
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
    let fallbacks = json!([
        cairn::AgentFallback::Recall,
        cairn::AgentFallback::RecallInspection
    ]);
    let agent = "/components/schemas/AgentRequest/properties/fallback".to_string();
    set(doc, agent.clone(), "enum", fallbacks)?;
    set(
        doc,
        agent,
        "default",
        json!(cairn::AgentFallback::default()),
    )?;
    let forms = json!([cairn::ManifestForm::Concise, cairn::ManifestForm::Full]);
    let modes = json!([cairn::PatternMode::Regex, cairn::PatternMode::Words]);
    for (path, name, values) in [
        ("/v1/spaces/{space}/trajectory-manifest", "form", &forms),
        ("/v1/spaces/{space}/trajectories/{id}/match", "mode", &modes),
        ("/v1/spaces/{space}/trajectory-search", "mode", &modes),
    ] {
        let at = format!("/paths/{}/get/parameters", path.replace('/', "~1"));
        let params = doc
            .pointer_mut(&at)
            .and_then(Value::as_array_mut)
            .ok_or_else(|| format!("{path} has no parameters"))?;
        let param = params
            .iter_mut()
            .find(|p| p["name"] == name)
            .ok_or_else(|| format!("{path} has no {name} parameter"))?;
        param["schema"]["enum"] = values.clone();
    }
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
    Ok(())
}

/// Adds the hand-described operations and components; one described twice is an error.
fn merge_hand(doc: &mut Value, hand: Value) -> Result<(), String> {
    let Value::Object(hand) = hand else {
        return Err("openapi-hand.json is not an object".into());
    };
    for (section, entries) in hand {
        let Value::Object(entries) = entries else {
            return Err(format!("openapi-hand.json: {section} is not an object"));
        };
        for (name, value) in entries {
            match section.as_str() {
                // Paths merge by method: one path may have generated and hand operations.
                "paths" => {
                    let Value::Object(ops) = value else {
                        return Err(format!("openapi-hand.json: paths.{name}"));
                    };
                    let path = object_at(doc, &["paths", &name])?;
                    for (method, op) in ops {
                        if path.insert(method.clone(), op).is_some() {
                            return Err(format!("{method} {name} is generated and hand-described"));
                        }
                    }
                }
                "components" => {
                    let Value::Object(kinds) = value else {
                        return Err(format!("openapi-hand.json: components.{name}"));
                    };
                    for (kind, item) in kinds {
                        let at = object_at(doc, &["components", &name])?;
                        let placeholder = at.get(&kind).is_some_and(is_placeholder);
                        if at.insert(kind.clone(), item).is_some() && !placeholder {
                            return Err(format!(
                                "components.{name}.{kind} is generated and hand-described"
                            ));
                        }
                    }
                }
                other => return Err(format!("openapi-hand.json: unexpected section {other}")),
            }
        }
    }
    Ok(())
}

/// The object at `keys` under `doc`, created empty where missing.
fn object_at<'a>(doc: &'a mut Value, keys: &[&str]) -> Result<&'a mut Map<String, Value>, String> {
    let mut at = doc;
    for key in keys {
        let Value::Object(map) = at else {
            return Err(format!("{key}: not an object"));
        };
        at = map.entry(key.to_string()).or_insert_with(|| json!({}));
    }
    match at {
        Value::Object(map) => Ok(map),
        _ => Err(format!("{}: not an object", keys.join("."))),
    }
}

/// States every bound and default the library checks, from its constants: the document
/// cannot promise a range validation does not keep. A bound whose field is gone from the
/// document is an error, so a renamed field cannot leave its bound behind.
fn state_bounds(doc: &mut Value) -> Result<(), String> {
    use cairn::bounds::*;
    let recall = cairn::RecallOptions::default();
    let inspect = cairn::InspectRecallOptions::default();
    let agent = cairn::AgentOptions::default();
    let context = cairn::inspect_limits::DEFAULT_CONTEXT_TOKENS;
    let n = |v: usize| json!(v);
    // (schema, property, minimum, maximum, default)
    let properties: [(&str, &str, Value, Value, Value); 10] = [
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
            json!(-1),
            json!(1),
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
    ];
    for (schema, property, min, max, default) in properties {
        let at = format!("/components/schemas/{schema}/properties/{property}");
        let p = doc
            .pointer_mut(&at)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| format!("bound of {schema}.{property}: no such property"))?;
        p.insert("minimum".into(), min);
        p.insert("maximum".into(), max);
        p.insert("default".into(), default);
    }
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
                        schema.insert("maximum".into(), n(MAX_PAGE));
                        schema.insert("default".into(), n(DEFAULT_PAGE));
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

    #[test]
    fn a_hand_schema_described_twice_is_refused() {
        let mut doc = serde_json::to_value(Generated::openapi()).unwrap();
        let twice = json!({"components": {"responses": {"Internal": {"description": "x"}}}});
        let err = merge_hand(&mut doc, twice).unwrap_err();
        assert!(err.contains("Internal"), "{err}");
    }
}
