//! Typed access to fields of untyped JSON records, with errors that name the record and the
//! field (`question "q1": field `haystack_dates`[3]: expected a string, found a number (5)`).
use cairn_core::InputError;
use serde_json::{Map, Value};

/// A short description of a JSON value, for error messages.
pub(crate) fn describe(v: &Value) -> String {
    fn clip(s: &str) -> String {
        let mut out: String = s.chars().take(40).collect();
        if out.len() < s.len() {
            out.push_str("...");
        }
        out
    }
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) => format!("a string ({:?})", clip(s)),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

pub(crate) fn expected(rec: &str, field: &str, what: &str, got: &Value) -> InputError {
    InputError::new(
        rec,
        format!("field `{field}`: expected {what}, found {}", describe(got)),
    )
}

pub(crate) fn object<'a>(
    v: &'a Value,
    rec: &str,
    what: &str,
) -> Result<&'a Map<String, Value>, InputError> {
    v.as_object().ok_or_else(|| {
        InputError::new(
            rec,
            format!("expected {what} (a JSON object), found {}", describe(v)),
        )
    })
}

pub(crate) fn get<'a>(
    m: &'a Map<String, Value>,
    rec: &str,
    key: &str,
) -> Result<&'a Value, InputError> {
    m.get(key)
        .ok_or_else(|| InputError::new(rec, format!("missing field `{key}`")))
}

pub(crate) fn string(m: &Map<String, Value>, rec: &str, key: &str) -> Result<String, InputError> {
    let v = get(m, rec, key)?;
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| expected(rec, key, "a string", v))
}

/// A string field that may be missing or null.
pub(crate) fn opt_string(
    m: &Map<String, Value>,
    rec: &str,
    key: &str,
) -> Result<Option<String>, InputError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(expected(rec, key, "a string", v)),
    }
}

/// A field holding a string or a number (benchmark answers), as text; missing or null is
/// `None`.
pub(crate) fn opt_text(
    m: &Map<String, Value>,
    rec: &str,
    key: &str,
) -> Result<Option<String>, InputError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(v) => Err(expected(rec, key, "a string or a number", v)),
    }
}

pub(crate) fn array<'a>(
    m: &'a Map<String, Value>,
    rec: &str,
    key: &str,
) -> Result<&'a Vec<Value>, InputError> {
    let v = get(m, rec, key)?;
    v.as_array()
        .ok_or_else(|| expected(rec, key, "an array", v))
}

pub(crate) fn string_list(
    m: &Map<String, Value>,
    rec: &str,
    key: &str,
) -> Result<Vec<String>, InputError> {
    array(m, rec, key)?
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_str()
                .map(str::to_string)
                .ok_or_else(|| expected(rec, &format!("{key}[{i}]"), "a string", v))
        })
        .collect()
}

pub(crate) fn uint(m: &Map<String, Value>, rec: &str, key: &str) -> Result<u64, InputError> {
    let v = get(m, rec, key)?;
    v.as_u64()
        .ok_or_else(|| expected(rec, key, "a non-negative integer", v))
}

/// A boolean field that may be missing or null (then `false`).
pub(crate) fn flag(m: &Map<String, Value>, rec: &str, key: &str) -> Result<bool, InputError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => Err(expected(rec, key, "a boolean", v)),
    }
}
