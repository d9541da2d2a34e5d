//! Metadata filters: a small boolean expression over a JSON document, as clients of memory
//! APIs know them (Mem0's `filters`, Zep's metadata queries).
//!
//! Two shapes are accepted and may be mixed:
//!
//! - explicit: `{"field": "metadata.user_id", "op": "eq", "value": "u1"}`, combined with
//!   `{"and": [...]}`, `{"or": [...]}`, `{"not": {...}}` (keys in any case: `AND` works);
//! - shorthand: `{"user_id": "u1", "metadata.score": {"gte": 3, "lt": 9}}`: every key is a
//!   field, a plain value means `eq`, an object of operators applies each; keys are ANDed.
//!
//! Operators: `eq ne gt gte lt lte in nin contains`. Fields are dotted paths into the
//! document. A name whose first segment is not one of the document's own fields (given to
//! [`Filter::parse`]) is read as `metadata.<name>`, so Mem0's `{"user_id": "u1"}` works on
//! metadata written as `{"user_id": "u1"}`.
//!
//! Semantics, chosen to be unsurprising rather than clever: a missing field matches only
//! `ne` and `nin`; on an array field, `eq`, `in` and `contains` match when any element
//! does, and `ne`, `nin` when none does; `gt gte lt lte` compare numbers as numbers,
//! strings that both read as dates (see [`crate::time::parse_timestamp`]) as instants, and
//! other strings lexicographically; values of different types never compare.
use crate::time::parse_timestamp;
use crate::InputError;
use serde_json::Value;
use std::cmp::Ordering;

use crate::bounds::{MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, MAX_FILTER_LIST_VALUES};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Nin,
    Contains,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::Eq,
        Op::Ne,
        Op::Gt,
        Op::Gte,
        Op::Lt,
        Op::Lte,
        Op::In,
        Op::Nin,
        Op::Contains,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::In => "in",
            Op::Nin => "nin",
            Op::Contains => "contains",
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        // Mongo-style `$eq` is common in client code; accept it.
        let s = s.strip_prefix('$').unwrap_or(s);
        Self::ALL
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(s))
    }
}

/// A parsed filter expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
    Cond {
        /// Dotted path into the document.
        field: String,
        op: Op,
        value: Value,
        /// `in` and `nin`: the list's values by [`ValueKey`], so that matching costs one
        /// look-up per value of the document, whatever the list's length.
        list: Option<ValueList>,
    },
}

/// A value as equality sees it ([`equal`]): a number by its value as `f64`, a string as
/// itself, anything else by its JSON with object keys in order (whatever order a map
/// keeps them in, equal values have one key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ValueKey {
    Number(u64),
    String(String),
    Other(String),
}

impl ValueKey {
    fn of(v: &Value) -> Self {
        match v {
            // `+ 0.0` makes -0 and 0 one key, as `==` on f64 does.
            Value::Number(n) => ValueKey::Number((n.as_f64().unwrap_or(f64::NAN) + 0.0).to_bits()),
            Value::String(s) => ValueKey::String(s.clone()),
            other => ValueKey::Other(canonical(other)),
        }
    }
}

fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// The values of an `in` or `nin` list, hashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueList(std::collections::HashSet<ValueKey>);

impl ValueList {
    fn holds(&self, v: &Value) -> bool {
        self.0.contains(&ValueKey::of(v))
    }
}

fn err(path: &str, problem: impl Into<String>) -> InputError {
    InputError::new(path.to_string(), problem).at(path)
}

/// The fields of the document a filter sees for a session; any other name is read under
/// `metadata`.
pub const SESSION_FIELDS: &[&str] = &[
    "session_id",
    "group",
    "occurred_at",
    "recorded_at",
    "metadata",
];

/// The document a filter is evaluated on: one per session (its header, never its
/// messages), the same for recall, listings and every surface.
pub fn session_document(h: &crate::SessionHeader) -> Value {
    serde_json::json!({
        "session_id": h.id,
        "group": h.group,
        "occurred_at": h.occurred_at.map(|t| t.to_rfc3339()),
        "recorded_at": h.recorded_at.to_rfc3339(),
        "metadata": h.metadata,
    })
}

struct Parser<'a> {
    fields: &'a [&'a str],
    conditions: usize,
    list_values: usize,
    /// Each condition's metadata field, as [`Filter::metadata_fields`] gives them.
    named: Vec<MetadataField>,
}

/// A metadata key a filter names: where in the filter (`filter.and[1].field`,
/// `filter.userid`) and its path under `metadata` (`["userid"]`, `["profile", "tier"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataField {
    pub at: String,
    pub key: Vec<String>,
}

impl Filter {
    /// Parses a filter. `fields` are the document's own top-level fields; any other name
    /// is read under `metadata`. Errors name the offending path, e.g. `filter.and[1].op`.
    /// A filter over sessions (see [`session_document`]).
    pub fn parse_sessions(v: &Value) -> Result<Filter, InputError> {
        Self::parse(v, SESSION_FIELDS)
    }

    pub fn parse(v: &Value, fields: &[&str]) -> Result<Filter, InputError> {
        Parser::new(fields).node(v, "filter", 0)
    }

    /// The metadata keys a session filter names, each once, in the order written (none
    /// for the document's own fields, or for `metadata` compared whole). Read again from
    /// the filter's JSON by the parser itself, so it names exactly the keys the filter
    /// reads; a filter that does not parse names none.
    pub fn metadata_fields(v: &Value) -> Vec<MetadataField> {
        let mut p = Parser::new(SESSION_FIELDS);
        if p.node(v, "filter", 0).is_err() {
            return Vec::new();
        }
        let mut out: Vec<MetadataField> = Vec::new();
        for f in p.named {
            if !out.iter().any(|o| o.key == f.key && o.at == f.at) {
                out.push(f);
            }
        }
        out
    }

    /// True if the document satisfies the filter.
    pub fn matches(&self, doc: &Value) -> bool {
        match self {
            Filter::And(fs) => fs.iter().all(|f| f.matches(doc)),
            Filter::Or(fs) => fs.iter().any(|f| f.matches(doc)),
            Filter::Not(f) => !f.matches(doc),
            Filter::Cond {
                field,
                op,
                value,
                list,
            } => cond(lookup(doc, field), *op, value, list.as_ref()),
        }
    }
}

impl<'a> Parser<'a> {
    fn new(fields: &'a [&'a str]) -> Self {
        Parser {
            fields,
            conditions: 0,
            list_values: 0,
            named: Vec::new(),
        }
    }

    fn node(&mut self, v: &Value, path: &str, depth: usize) -> Result<Filter, InputError> {
        if depth > MAX_FILTER_DEPTH {
            return Err(err(
                path,
                format!("nested deeper than {MAX_FILTER_DEPTH} levels"),
            ));
        }
        let Value::Object(map) = v else {
            return Err(err(path, "must be an object"));
        };
        if map.contains_key("field") && map.contains_key("op") {
            return self.explicit(map, path);
        }
        let mut all = Vec::new();
        for (key, val) in map {
            let sub = format!("{path}.{key}");
            // Mongo-style `$and`/`$or`/`$not` are common in client code, as `$eq` is.
            let lower = key.to_ascii_lowercase();
            match lower.strip_prefix('$').unwrap_or(&lower) {
                k @ ("and" | "or") => {
                    let Value::Array(items) = val else {
                        return Err(err(&sub, "must be an array of filters"));
                    };
                    let fs = items
                        .iter()
                        .enumerate()
                        .map(|(i, it)| self.node(it, &format!("{sub}[{i}]"), depth + 1))
                        .collect::<Result<Vec<_>, _>>()?;
                    all.push(if k == "and" {
                        Filter::And(fs)
                    } else {
                        Filter::Or(fs)
                    });
                }
                "not" => all.push(Filter::Not(Box::new(self.node(val, &sub, depth + 1)?))),
                _ if key.starts_with('$') => {
                    return Err(err(
                        &sub,
                        "unknown operator (and or not; in a condition: eq ne gt gte lt lte in nin contains)",
                    ))
                }
                _ => self.shorthand(key, val, &sub, &mut all)?,
            }
        }
        Ok(if all.len() == 1 {
            all.remove(0)
        } else {
            Filter::And(all)
        })
    }

    fn explicit(
        &mut self,
        map: &serde_json::Map<String, Value>,
        path: &str,
    ) -> Result<Filter, InputError> {
        if let Some(extra) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "field" | "op" | "value"))
        {
            return Err(err(
                path,
                format!("unexpected key {extra:?} in a condition (field, op, value)"),
            ));
        }
        let Some(Value::String(field)) = map.get("field") else {
            return Err(err(&format!("{path}.field"), "must be a string"));
        };
        let op = match map.get("op") {
            Some(Value::String(o)) => Op::parse(o).ok_or_else(|| {
                err(
                    &format!("{path}.op"),
                    format!("unknown operator {o:?} (eq ne gt gte lt lte in nin contains)"),
                )
            })?,
            _ => return Err(err(&format!("{path}.op"), "must be a string")),
        };
        let value = map.get("value").cloned().unwrap_or(Value::Null);
        let named_at = format!("{path}.field");
        self.cond(field, op, value, &format!("{path}.value"), &named_at)
    }

    fn shorthand(
        &mut self,
        field: &str,
        val: &Value,
        path: &str,
        out: &mut Vec<Filter>,
    ) -> Result<(), InputError> {
        match val {
            Value::Object(ops) if !ops.is_empty() && ops.keys().all(|k| Op::parse(k).is_some()) => {
                for (o, v) in ops {
                    let op = Op::parse(o).expect("checked above");
                    out.push(self.cond(field, op, v.clone(), &format!("{path}.{o}"), path)?);
                }
                Ok(())
            }
            Value::Object(ops) => match ops.keys().find(|k| Op::parse(k).is_none()) {
                Some(bad) => Err(err(
                    &format!("{path}.{bad}"),
                    "unknown operator (eq ne gt gte lt lte in nin contains)",
                )),
                None => Err(err(path, "operator object is empty")),
            },
            v => {
                out.push(self.cond(field, Op::Eq, v.clone(), path, path)?);
                Ok(())
            }
        }
    }

    /// A condition; `path` is where its value is (errors name it), `named_at` where its
    /// field is named.
    fn cond(
        &mut self,
        field: &str,
        op: Op,
        value: Value,
        path: &str,
        named_at: &str,
    ) -> Result<Filter, InputError> {
        self.conditions += 1;
        if self.conditions > MAX_FILTER_CONDITIONS {
            return Err(err(
                path,
                format!("more than {MAX_FILTER_CONDITIONS} conditions"),
            ));
        }
        let field = field.trim();
        if field.is_empty() || field.split('.').any(str::is_empty) {
            return Err(err(path, format!("bad field name {field:?}")));
        }
        if value.is_object() {
            return Err(err(
                path,
                "compares with an object (values are strings, numbers, booleans, null or arrays)",
            ));
        }
        let list = match (op, &value) {
            (Op::In | Op::Nin, Value::Array(items)) => {
                self.list_values += items.len();
                if self.list_values > MAX_FILTER_LIST_VALUES {
                    return Err(err(
                        path,
                        format!("more than {MAX_FILTER_LIST_VALUES} values in the filter's `in` and `nin` lists"),
                    ));
                }
                Some(ValueList(items.iter().map(ValueKey::of).collect()))
            }
            (Op::In | Op::Nin, _) => {
                return Err(err(path, format!("`{}` needs an array", op.as_str())));
            }
            _ => None,
        };
        let first = field.split('.').next().unwrap_or(field);
        let field = if self.fields.contains(&first) {
            field.to_string()
        } else {
            format!("metadata.{field}")
        };
        if let Some(key) = field.strip_prefix("metadata.") {
            self.named.push(MetadataField {
                at: named_at.to_string(),
                key: key.split('.').map(str::to_string).collect(),
            });
        }
        Ok(Filter::Cond {
            field,
            op,
            value,
            list,
        })
    }
}

fn lookup<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(doc, |v, seg| v.as_object().and_then(|m| m.get(seg)))
        .filter(|v| !v.is_null())
}

fn cond(found: Option<&Value>, op: Op, want: &Value, list: Option<&ValueList>) -> bool {
    let Some(have) = found else {
        return matches!(op, Op::Ne | Op::Nin);
    };
    let any = |pred: &dyn Fn(&Value) -> bool| match have {
        Value::Array(items) => items.iter().any(pred),
        v => pred(v),
    };
    let in_list = |v: &Value| list.is_some_and(|l| l.holds(v));
    match op {
        Op::Eq => any(&|v| equal(v, want)),
        Op::Ne => !any(&|v| equal(v, want)),
        Op::In => any(&in_list),
        Op::Nin => !any(&in_list),
        Op::Contains => match (have, want) {
            (Value::String(h), Value::String(w)) => h.contains(w.as_str()),
            (Value::Array(items), w) => items.iter().any(|v| equal(v, w)),
            _ => false,
        },
        Op::Gt => compare(have, want) == Some(Ordering::Greater),
        Op::Gte => matches!(
            compare(have, want),
            Some(Ordering::Greater | Ordering::Equal)
        ),
        Op::Lt => compare(have, want) == Some(Ordering::Less),
        Op::Lte => matches!(compare(have, want), Some(Ordering::Less | Ordering::Equal)),
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => match (parse_timestamp(x), parse_timestamp(y)) {
            (Ok(tx), Ok(ty)) => Some(tx.cmp(&ty)),
            _ => Some(x.as_str().cmp(y.as_str())),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const FIELDS: &[&str] = &["session_id", "metadata", "occurred_at", "speakers"];

    fn f(v: Value) -> Filter {
        Filter::parse(&v, FIELDS).unwrap()
    }

    #[test]
    fn lists_match_by_value_and_are_bounded() {
        let doc = json!({"session_id": "s1", "metadata": {"n": 3, "z": -0.0, "tags": ["x", 2.0, {"b": 1, "a": [1]}]}});
        let big: Vec<Value> = (0..MAX_FILTER_LIST_VALUES - 3)
            .map(|i| json!(format!("v{i}")))
            .collect();
        assert!(f(json!({"session_id": {"in": big}})).matches(&json!({"session_id": "v17"})));
        assert!(
            f(json!({"n": {"in": [3.0, "q"]}})).matches(&doc),
            "3 and 3.0 are equal"
        );
        assert!(
            f(json!({"z": {"in": [0]}})).matches(&doc),
            "-0 and 0 are equal"
        );
        assert!(f(json!({"tags": {"in": [2]}})).matches(&doc), "any element");
        assert!(f(json!({"tags": {"in": [{"a": [1], "b": 1}]}})).matches(&doc));
        assert!(!f(json!({"tags": {"in": [{"a": [1.5], "b": 1}]}})).matches(&doc));
        assert!(f(json!({"tags": {"nin": ["y", 3]}})).matches(&doc));
        assert!(!f(json!({"tags": {"nin": ["x"]}})).matches(&doc));
        assert!(
            !f(json!({"n": {"in": ["3"]}})).matches(&doc),
            "types never compare"
        );
        // The bound counts every list of the filter.
        let half: Vec<Value> = (0..MAX_FILTER_LIST_VALUES / 2 + 1)
            .map(Value::from)
            .collect();
        let e = Filter::parse(
            &json!({"and": [{"a": {"in": half.clone()}}, {"b": {"nin": half}}]}),
            FIELDS,
        )
        .unwrap_err();
        assert!(e.to_string().contains("values in the filter's"), "{e}");
        assert!(e.to_string().contains("filter.and[1]"), "{e}");
    }

    #[test]
    fn shorthand_and_explicit_agree() {
        let doc = json!({"session_id": "s1", "metadata": {"user_id": "u1", "score": 7, "tags": ["a", "b"]}});
        assert!(f(json!({"user_id": "u1"})).matches(&doc));
        assert!(f(json!({"field": "metadata.user_id", "op": "eq", "value": "u1"})).matches(&doc));
        assert!(!f(json!({"user_id": "u2"})).matches(&doc));
        assert!(f(json!({"metadata.score": {"gte": 7, "lt": 8}})).matches(&doc));
        assert!(!f(json!({"score": {"gt": 7}})).matches(&doc));
        assert!(
            f(json!({"tags": "a"})).matches(&doc),
            "eq on an array: any element"
        );
        assert!(f(json!({"tags": {"contains": "b"}})).matches(&doc));
        assert!(f(json!({"tags": {"nin": ["c"]}})).matches(&doc));
        assert!(f(json!({"missing": {"ne": 1}})).matches(&doc));
        assert!(!f(json!({"missing": 1})).matches(&doc));
        assert!(
            f(json!({"OR": [{"user_id": "zz"}, {"session_id": {"in": ["s0", "s1"]}}]}))
                .matches(&doc)
        );
        assert!(!f(json!({"not": {"session_id": "s1"}})).matches(&doc));
        assert!(
            f(json!({})).matches(&doc),
            "an empty filter matches everything"
        );
        assert!(
            f(json!({"score": 7.0})).matches(&doc),
            "numbers compare as numbers"
        );
    }

    #[test]
    fn dates_compare_as_instants() {
        let doc = json!({"occurred_at": "2024-03-01T09:30:00Z"});
        assert!(
            f(json!({"occurred_at": {"gte": "2024-03-01", "lt": "2024/03/02 00:00"}}))
                .matches(&doc)
        );
        assert!(!f(json!({"occurred_at": {"gt": "2024-03-01 10:00"}})).matches(&doc));
    }

    #[test]
    fn mongo_style_combinators_and_strict_values() {
        let or = f(json!({"$or": [{"user_id": "u1"}, {"$not": {"score": {"$lt": 5}}}]}));
        assert_eq!(
            or,
            f(json!({"or": [{"user_id": "u1"}, {"not": {"score": {"lt": 5}}}]}))
        );
        let e = Filter::parse(&json!({"$where": "1 == 1"}), FIELDS).unwrap_err();
        assert_eq!(e.record, "filter.$where", "{e}");
        let e = Filter::parse(
            &json!({"field": "occurred_at", "op": "gt", "value": {"a": 1}}),
            FIELDS,
        )
        .unwrap_err();
        assert!(e.to_string().contains("compares with an object"), "{e}");
    }

    #[test]
    fn metadata_fields_are_named_where_the_filter_names_them() {
        let v = json!({
            "userid": "u1",
            "session_id": "s1",
            "metadata": {"ne": null},
            "metadata.profile.tier": {"gte": 2, "lt": 5},
            "$or": [{"field": "source", "op": "eq", "value": "x"}, {"not": {"userid": 2}}],
        });
        let named: Vec<(String, String)> = Filter::metadata_fields(&v)
            .into_iter()
            .map(|f| (f.at, f.key.join(".")))
            .collect();
        let want = [
            ("filter.$or[0].field", "source"),
            ("filter.$or[1].not.userid", "userid"),
            ("filter.metadata.profile.tier", "profile.tier"),
            ("filter.userid", "userid"),
        ];
        let mut named_sorted = named.clone();
        named_sorted.sort();
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, k)| (a.to_string(), k.to_string()))
            .collect();
        assert_eq!(named_sorted, want, "{named:?}");
        assert!(Filter::metadata_fields(&json!({"a": {"near": 1}})).is_empty());
    }

    #[test]
    fn errors_name_the_path() {
        let e = Filter::parse(
            &json!({"and": [{"a": 1}, {"field": "x", "op": "near"}]}),
            FIELDS,
        )
        .unwrap_err();
        assert_eq!(e.record, "filter.and[1].op", "{e}");
        let e = Filter::parse(&json!({"a": {"in": 3}}), FIELDS).unwrap_err();
        assert!(e.to_string().contains("filter.a.in"), "{e}");
        let e = Filter::parse(&json!({"a": {"gt": 1, "bogus": 2}}), FIELDS).unwrap_err();
        assert!(e.to_string().contains("filter.a.bogus"), "{e}");
        assert!(Filter::parse(&json!([1]), FIELDS).is_err());
        let mut deep = json!({"a": 1});
        for _ in 0..40 {
            deep = json!({ "not": deep });
        }
        assert!(Filter::parse(&deep, FIELDS).is_err());
    }
}
