//! The numbers the OpenAPI document and the MCP tool schemas state in prose. A
//! description names a limit or default as `{NAME}`; `stated` writes in its value from
//! the library's constants (`cairn::bounds`, `cairn::inspect_limits`, the options'
//! defaults) or the server's (`Limits`), so no description keeps a number by hand.
use crate::limits::Limits;

/// Every name a description may use, with its value as written.
fn values() -> Vec<(&'static str, String)> {
    use cairn::bounds::*;
    use cairn::inspect_limits::*;
    let inspect = cairn::InspectRecallOptions::default();
    let recall = cairn::RecallOptions::default();
    let server = Limits::default();
    let n = |v: usize| v.to_string();
    vec![
        ("MAX_NOTE_BYTES", n(MAX_NOTE_BYTES)),
        ("MAX_CONTEXT_STATES", n(MAX_CONTEXT_STATES)),
        ("MAX_MANIFEST", n(MAX_MANIFEST)),
        ("MAX_PATTERN_BYTES", n(MAX_PATTERN_BYTES)),
        ("MAX_INSPECT_RESULTS", n(MAX_INSPECT_RESULTS)),
        ("MAX_SPAN_STATES", n(MAX_SPAN_STATES)),
        ("MAX_STATE_CHARS", n(MAX_STATE_CHARS)),
        ("MAX_AGENT_TIME_MS", MAX_AGENT_TIME_MS.to_string()),
        ("SUMMARY_MAX_STATES", n(SUMMARY_MAX_STATES)),
        ("MATCH_LINES", n(MATCH_LINES)),
        ("SEARCH_LINES", n(SEARCH_LINES)),
        ("DEFAULT_STATE_CHARS", n(DEFAULT_STATE_CHARS)),
        ("DEFAULT_SPAN_STATE_CHARS", n(DEFAULT_SPAN_STATE_CHARS)),
        ("DEFAULT_MATCHES", n(DEFAULT_MATCHES)),
        ("DEFAULT_SEARCH_HITS", n(DEFAULT_SEARCH_HITS)),
        ("DEFAULT_MANIFEST_CONCISE", n(DEFAULT_MANIFEST_CONCISE)),
        ("DEFAULT_MANIFEST_FULL", n(DEFAULT_MANIFEST_FULL)),
        ("DEFAULT_CONTEXT_TOKENS", n(DEFAULT_CONTEXT_TOKENS)),
        ("DEFAULT_INSPECT_TOKENS", n(inspect.token_budget)),
        ("DEFAULT_TOP_K", n(recall.top_k)),
        ("DEFAULT_TOKEN_BUDGET", n(recall.token_budget)),
        ("DEFAULT_MAX_BATCH_SESSIONS", n(server.max_batch_sessions)),
    ]
}

/// `text` with each `{NAME}` (capitals, digits and `_`) replaced by its value; an
/// unknown name is an error, so a renamed constant cannot leave a hole in the prose.
pub fn stated(text: &str) -> Result<String, String> {
    if !text.contains('{') {
        return Ok(text.to_string());
    }
    let values = values();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let is_token = name_len > 0 && after[name_len..].starts_with('}');
        if !is_token {
            out.push('{');
            rest = after;
            continue;
        }
        let (_, value) = values
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("{{{name}}} in a description names no limit"))?;
        out.push_str(value);
        rest = &after[name_len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every `description` string under `v`, stated.
pub fn state_descriptions(v: &mut serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, x) in map.iter_mut() {
                match x {
                    Value::String(s) if k == "description" => *s = stated(s)?,
                    _ => state_descriptions(x)?,
                }
            }
        }
        Value::Array(items) => {
            for x in items {
                state_descriptions(x)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_values_and_other_braces_stay() {
        let text = r#"at most {MAX_SPAN_STATES} states; e.g. {"user_id": "u1"} or {x}"#;
        let want = format!(
            r#"at most {} states; e.g. {{"user_id": "u1"}} or {{x}}"#,
            cairn::bounds::MAX_SPAN_STATES
        );
        assert_eq!(stated(text).unwrap(), want);
        assert!(stated("{NO_SUCH_LIMIT}")
            .unwrap_err()
            .contains("NO_SUCH_LIMIT"));
    }
}
