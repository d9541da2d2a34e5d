//! Tool input schemas in the subset of JSON Schema that the function-calling APIs of the
//! major model providers all accept (OpenAI, Anthropic, Google Gemini's OpenAPI subset):
//! one `type` per schema (never `["string", "null"]`: an optional argument is one left out
//! of `required`), nested objects written inline (no `$ref` / `$defs`), and no `format`
//! (`uint`, `double`), `additionalProperties`, `$schema` or `default`. The tools still
//! refuse unknown arguments and negative counts when they parse a call; the schema only
//! describes. The tests hold every tool to that vocabulary (`PORTABLE_KEYS`).
use rmcp::model::JsonObject;
use serde_json::{Map, Value};

/// `schema` (as schemars generates it) rewritten into the portable subset.
pub(crate) fn portable(schema: &JsonObject) -> JsonObject {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = rewrite(schema, &defs);
    if !out.contains_key("properties") {
        // A tool without arguments still says it takes an object of none.
        out.insert("properties".into(), Value::Object(Map::new()));
    }
    out
}

fn rewrite(schema: &Map<String, Value>, defs: &Map<String, Value>) -> Map<String, Value> {
    // `Option<Struct>`: `anyOf: [{$ref}, {type: null}]` is the struct, optional.
    if let Some(inner) = not_null_variant(schema) {
        let mut out = rewrite(inner, defs);
        if let Some(d) = schema.get("description") {
            out.insert("description".into(), d.clone());
        }
        return out;
    }
    if let Some(target) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(|name| defs.get(name))
        .and_then(Value::as_object)
    {
        let mut out = rewrite(target, defs);
        if let Some(d) = schema.get("description") {
            out.insert("description".into(), d.clone());
        }
        return out;
    }
    let mut out = Map::new();
    for (key, value) in schema {
        let value = match key.as_str() {
            "$schema"
            | "$defs"
            | "definitions"
            | "format"
            | "additionalProperties"
            | "default"
            | "nullable"
            | "title" => continue,
            "type" => single_type(value),
            "properties" => Value::Object(
                value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, s)| (name.clone(), sub(s, defs)))
                    .collect(),
            ),
            "items" => sub(value, defs),
            _ => value.clone(),
        };
        out.insert(key.clone(), value);
    }
    out
}

fn sub(schema: &Value, defs: &Map<String, Value>) -> Value {
    match schema.as_object() {
        Some(o) => Value::Object(rewrite(o, defs)),
        None => schema.clone(),
    }
}

/// `["string", "null"]` is `"string"`: the argument may be left out instead.
fn single_type(t: &Value) -> Value {
    match t.as_array() {
        Some(types) => {
            let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
            match named.as_slice() {
                [one] => (*one).clone(),
                _ => t.clone(),
            }
        }
        None => t.clone(),
    }
}

/// The one variant of an `anyOf` / `oneOf` that is not `{"type": "null"}`, if that is
/// all it holds.
fn not_null_variant(schema: &Map<String, Value>) -> Option<&Map<String, Value>> {
    let variants = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))?
        .as_array()?;
    let named: Vec<&Map<String, Value>> = variants
        .iter()
        .filter_map(Value::as_object)
        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
        .collect();
    match named.as_slice() {
        [one] if variants.len() == 2 => Some(one),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every keyword a portable schema may use.
    const PORTABLE_KEYS: [&str; 12] = [
        "type",
        "description",
        "properties",
        "required",
        "items",
        "enum",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
    ];

    /// Where `schema` leaves the portable subset, as JSON paths with the reason (none: it is
    /// portable).
    fn violations(schema: &Map<String, Value>, at: &str) -> Vec<String> {
        let mut out = Vec::new();
        for (key, value) in schema {
            let here = format!("{at}.{key}");
            if !PORTABLE_KEYS.contains(&key.as_str()) {
                out.push(format!("{here}: keyword outside the portable subset"));
                continue;
            }
            match key.as_str() {
                "type" => {
                    let ok = value.as_str().is_some_and(|t| {
                        ["object", "string", "integer", "number", "boolean", "array"].contains(&t)
                    });
                    if !ok {
                        out.push(format!("{here}: {value} is not one JSON type"));
                    }
                }
                "properties" => {
                    for (name, s) in value.as_object().into_iter().flatten() {
                        match s.as_object() {
                            Some(s) => out.extend(violations(s, &format!("{here}.{name}"))),
                            None => out.push(format!("{here}.{name}: not a schema")),
                        }
                    }
                }
                "items" => match value.as_object() {
                    Some(s) => out.extend(violations(s, &here)),
                    None => out.push(format!("{here}: not a schema")),
                },
                _ => {}
            }
        }
        if !schema.contains_key("type") {
            out.push(format!("{at}: no `type`"));
        }
        out
    }

    #[test]
    fn every_tool_schema_is_portable() {
        use crate::mcp::{memory, tools::portable, trajectories, CairnMcp};
        let router = portable(memory::tools::<CairnMcp>() + trajectories::tools());
        let tools = router.list_all();
        assert_eq!(tools.len(), 16);
        for t in tools {
            let v = violations(&t.input_schema, &t.name);
            assert!(v.is_empty(), "{v:#?}");
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert!(t.input_schema.contains_key("properties"), "{}", t.name);
        }
    }

    #[test]
    fn optional_fields_refs_and_formats_become_portable() {
        let schemars = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "space": {"type": ["string", "null"], "description": "a space", "default": null},
                "top_k": {"type": ["integer", "null"], "format": "uint", "minimum": 1},
                "messages": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Msg"}},
                "one": {"anyOf": [{"$ref": "#/$defs/Msg"}, {"type": "null"}], "description": "one"}
            },
            "required": [],
            "$defs": {"Msg": {"type": "object", "properties": {"text": {"type": "string"}},
                              "required": ["text"], "additionalProperties": false}}
        });
        let out = Value::Object(portable(schemars.as_object().unwrap()));
        let msg = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "space": {"type": "string", "description": "a space"},
                    "top_k": {"type": "integer", "minimum": 1},
                    "messages": {"type": "array", "items": msg},
                    "one": {"type": "object", "properties": {"text": {"type": "string"}},
                            "required": ["text"], "description": "one"}
                },
                "required": []
            })
        );
        assert!(violations(out.as_object().unwrap(), "$").is_empty());
    }

    #[test]
    fn violations_name_the_place() {
        let bad = json!({"type": "object", "properties": {"a": {"type": ["string", "null"]},
                          "b": {"$ref": "#/$defs/B"}}});
        let v = violations(bad.as_object().unwrap(), "$");
        assert!(
            v.iter().any(|x| x.starts_with("$.properties.a.type")),
            "{v:?}"
        );
        assert!(
            v.iter().any(|x| x.starts_with("$.properties.b.$ref")),
            "{v:?}"
        );
    }
}
