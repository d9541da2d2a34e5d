//! Tolerant JSON extraction from a model's text: small and local models wrap JSON in code
//! fences or prose, or leave trailing commas.
use serde_json::Value;

/// The first JSON object or array in `text`: the whole text, a fenced block, or the first
/// balanced `{...}` / `[...]` span (trailing commas forgiven). `None` when there is none.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        if v.is_object() || v.is_array() {
            return Some(v);
        }
    }
    if let Some(inner) = fenced(t) {
        if let Some(v) = extract_json(inner) {
            return Some(v);
        }
    }
    let bytes = t.as_bytes();
    for (start, &b) in bytes.iter().enumerate() {
        if b != b'{' && b != b'[' {
            continue;
        }
        if let Some(end) = balanced_end(&t[start..]) {
            let span = &t[start..start + end];
            if let Ok(v) = serde_json::from_str::<Value>(span) {
                return Some(v);
            }
            if let Ok(v) = serde_json::from_str::<Value>(&drop_trailing_commas(span)) {
                return Some(v);
            }
        }
    }
    None
}

fn fenced(t: &str) -> Option<&str> {
    let open = t.find("```")?;
    let rest = &t[open + 3..];
    let body_start = rest.find('\n').map(|i| i + 1).unwrap_or(0);
    let rest = &rest[body_start..];
    let close = rest.find("```").unwrap_or(rest.len());
    Some(&rest[..close])
}

/// Length of the balanced bracket span at the start of `s` (strings respected).
fn balanced_end(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn drop_trailing_commas(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut in_str = false;
    let mut escaped = false;
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            out.push(c);
            continue;
        }
        if c == '"' {
            in_str = true;
        }
        if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_json_where_models_put_it() {
        assert_eq!(extract_json(r#"{"a": 1}"#), Some(json!({"a": 1})));
        assert_eq!(
            extract_json("```json\n{\"a\": [1, 2]}\n```"),
            Some(json!({"a": [1, 2]}))
        );
        assert_eq!(
            extract_json("Sure! Here it is: {\"a\": \"x } y\", \"b\": {\"c\": 2}} Hope it helps."),
            Some(json!({"a": "x } y", "b": {"c": 2}}))
        );
        assert_eq!(
            extract_json("[{\"s\": \"a\",}, {\"s\": \"b\"},]"),
            Some(json!([{"s": "a"}, {"s": "b"}]))
        );
        assert_eq!(
            extract_json("{broken {\"ok\": true}"),
            Some(json!({"ok": true}))
        );
        assert_eq!(extract_json("no json here"), None);
        assert_eq!(extract_json("42"), None);
    }
}
