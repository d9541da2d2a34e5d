//! Bad requests that ask rather than carry for the bad-input corpus: recall options,
//! filters, query parameters, and the space names, ids and keys a request names.
use super::cases::{accepted, case, msgs, post_json, Case, Routes};
use super::spaces::OTHER;
use crate::serve::{encode, encode_bytes, ADMIN_KEY};
use serde_json::{json, Value};

/// Recall options of the wrong type or out of range.
pub(super) fn recall_option_cases() -> Vec<Case> {
    let Routes { recall, .. } = Routes::new();
    let mut c = Vec::new();
    // Recall options.
    for (n, v) in [
        ("no query", json!({})),
        ("query is a number", json!({"query": 5})),
        ("empty query", json!({"query": ""})),
        ("query over the limit", json!({"query": "q".repeat(70_000)})),
        ("top_k is a string", json!({"query": "q", "top_k": "five"})),
        ("top_k negative", json!({"query": "q", "top_k": -1})),
        (
            "top_k huge",
            json!({"query": "q", "top_k": 1_000_000_000u64}),
        ),
        ("top_k zero", json!({"query": "q", "top_k": 0})),
        (
            "token_budget huge",
            json!({"query": "q", "token_budget": u64::MAX}),
        ),
        ("format unknown", json!({"query": "q", "format": "xml"})),
        (
            "as_of garbage",
            json!({"query": "q", "as_of": "the day after tomorrow"}),
        ),
        (
            "since after as_of",
            json!({"query": "q", "as_of": "2020-01-01", "since": "2024-01-01"}),
        ),
        ("kinds unknown", json!({"query": "q", "kinds": ["secret"]})),
        (
            "quota negative",
            json!({"query": "q", "quotas": {"note": -2}}),
        ),
        (
            "sessions is a string",
            json!({"query": "q", "sessions": "canary"}),
        ),
        ("unknown option", json!({"query": "q", "space": OTHER})),
    ] {
        c.push(post_json(format!("recall: {n}"), &recall, v));
    }
    c
}

/// Injection attempts in filters, and well-formed Mongo-style ones that must leak nothing.
pub(super) fn filter_cases() -> Vec<Case> {
    let Routes {
        sessions, recall, ..
    } = Routes::new();
    let mut c = Vec::new();
    // Injection attempts in filters.
    for (n, f) in [
        (
            "SQL in the op",
            json!({"field": "session_id", "op": "eq'; DROP TABLE sessions; --", "value": "x"}),
        ),
        (
            "operator smuggling",
            json!({"field": "session_id", "op": "$where", "value": "1==1"}),
        ),
        (
            "field is an object",
            json!({"field": {"$ne": null}, "op": "eq", "value": 1}),
        ),
        (
            "in without a list",
            json!({"field": "group", "op": "in", "value": "g"}),
        ),
        ("nested 100 deep", nest_filter(100)),
        (
            "300 conditions",
            json!({"or": (0..300).map(|i| json!({"field": "group", "op": "eq", "value": i})).collect::<Vec<_>>()}),
        ),
        ("filter is a string", json!("session_id = 'x' OR 1=1")),
    ] {
        c.push(post_json(
            format!("filter: {n}"),
            &recall,
            json!({"query": "q", "filter": f}),
        ));
        c.push(case(
            format!("listing filter: {n}"),
            "GET",
            format!("{sessions}?filter={}", encode(&f.to_string())),
            None,
        ));
    }
    c.push(post_json(
        "filter: gt on an object",
        &recall,
        json!({"query": "canary", "filter": {"field": "occurred_at", "op": "gt", "value": {"a": 1}}}),
    ));
    c.push(post_json(
        "filter: unknown $-operator",
        &recall,
        json!({"query": "canary", "filter": {"$where": "1 == 1"}}),
    ));
    // Well-formed Mongo-style filters: answered, and they leak nothing.
    for (n, f) in [
        (
            "Mongo-style $or",
            json!({"$or": [{"field": "group", "op": "eq", "value": "g"}]}),
        ),
        (
            "$ne null on every field",
            json!({"session_id": {"$ne": null}, "metadata.k": {"ne": "zzz"}}),
        ),
    ] {
        c.push(accepted(post_json(
            format!("filter (well-formed): {n}"),
            &recall,
            json!({"query": "canary", "filter": f}),
        )));
    }
    c
}

/// Query parameters of listings and histories that must be refused.
pub(super) fn query_parameter_cases() -> Vec<Case> {
    let Routes { s, sessions, .. } = Routes::new();
    let mut c = Vec::new();
    c.push(post_json(
        "group named like a parent folder",
        format!("{s}/group-messages"),
        json!({"messages": [{"speaker": "a", "group": "../g", "time": "2024-01-01", "text": "hi"}]}),
    ));
    c.push(case(
        "listing filter is not JSON",
        "GET",
        format!("{sessions}?filter=%7Bnope"),
        None,
    ));
    c.push(case(
        "limit is a word",
        "GET",
        format!("{sessions}?limit=abc"),
        None,
    ));
    c.push(case(
        "limit negative",
        "GET",
        format!("{s}/memories?limit=-5"),
        None,
    ));
    c.push(case(
        "offset overflows",
        "GET",
        format!("{s}/memories?offset=99999999999999999999999"),
        None,
    ));
    c.push(case(
        "unknown query parameter",
        "GET",
        format!("{s}/memories?space={OTHER}"),
        None,
    ));
    c.push(case(
        "since garbage",
        "GET",
        format!("{s}/memories?since=never"),
        None,
    ));
    c.push(case(
        "history without subject",
        "GET",
        format!("{s}/history"),
        None,
    ));
    c.push(case(
        "history as_of garbage",
        "GET",
        format!("{s}/history?subject=x&as_of=%00"),
        None,
    ));
    c
}

/// Space names: control characters, injection, traversal, size, bad UTF-8.
pub(super) fn space_name_cases() -> Vec<Case> {
    let mut c = Vec::new();
    // Space names: control characters, injection, traversal, size, bad UTF-8.
    for name in [
        "a\u{1}b",
        "a b",
        "a/b",
        "..%2F..",
        "space'; DROP TABLE spaces; --",
        "*",
        "%",
        "\u{202e}evil",
        "",
    ] {
        c.push(post_json(
            format!("create space {name:?}"),
            "/v1/spaces",
            json!({"name": name}),
        ));
        if !name.is_empty() {
            c.push(case(
                format!("stats of space {name:?}"),
                "GET",
                format!("/v1/spaces/{}/stats", encode(name)),
                None,
            ));
        }
    }
    c.push(post_json(
        "create space: 10 KB name",
        "/v1/spaces",
        json!({"name": "s".repeat(10_000)}),
    ));
    c.push(post_json(
        "create space: name is a list",
        "/v1/spaces",
        json!({"name": ["a"]}),
    ));
    c.push(case(
        "space name of invalid UTF-8",
        "GET",
        format!("/v1/spaces/{}/stats", encode_bytes(b"\xff\xfe")),
        None,
    ));
    c.push(case(
        "space name with NUL",
        "GET",
        "/v1/spaces/a%00b/stats",
        None,
    ));
    c.push(case(
        "space name 10 KB in the path",
        "GET",
        format!("/v1/spaces/{}/stats", "s".repeat(10_000)),
        None,
    ));
    c.push(case(
        "space that does not exist",
        "GET",
        "/v1/spaces/nowhere/stats",
        None,
    ));
    c
}

/// Path traversal in ids (the canary must survive every one).
pub(super) fn id_traversal_cases() -> Vec<Case> {
    let Routes { s, sessions, .. } = Routes::new();
    let mut c = Vec::new();
    // Path traversal in ids (the canary must survive every one).
    for id in [
        "../canary",
        "..%2Fcanary",
        "canary/../canary",
        "./canary",
        "canary%00",
        "%2e%2e%2fkeys.sqlite3",
        "../../keys.sqlite3",
    ] {
        c.push(case(
            format!("get session {id:?}"),
            "GET",
            format!("{sessions}/{}", encode(id)),
            None,
        ));
        c.push(case(
            format!("delete session {id:?}"),
            "DELETE",
            format!("{sessions}/{}", encode(id)),
            None,
        ));
    }
    c.push(case(
        "delete a message of the canary that does not exist",
        "DELETE",
        format!("{sessions}/canary/messages/{}", encode("../0")),
        None,
    ));
    c.push(case(
        "memory id traversal",
        "GET",
        format!("{s}/memories/{}", encode("../../round:canary:1")),
        None,
    ));
    c.push(case(
        "profile of a control-character speaker",
        "GET",
        format!("{s}/profiles/{}", encode("\u{7}")),
        None,
    ));
    c.push(case(
        "trajectory id traversal",
        "DELETE",
        format!("{s}/trajectories/{}", encode("../../t")),
        None,
    ));
    c
}

/// Authentication: missing, wrong and malformed keys.
pub(super) fn auth_cases() -> Vec<Case> {
    let Routes { s, sessions, .. } = Routes::new();
    let mut c = Vec::new();
    // Authentication.
    for (n, h) in [
        ("no key", ""),
        ("wrong key", "Bearer nope"),
        ("basic auth", "Basic YWRtaW46YWRtaW4="),
        ("key with a NUL escape", "Bearer reliability%00"),
        ("10 KB key", &format!("Bearer {}", "k".repeat(10_000))),
        ("admin key prefix", &format!("Bearer {}", &ADMIN_KEY[..20])),
    ] {
        let mut k = post_json(
            format!("auth: {n}"),
            &sessions,
            json!({"id": "auth", "messages": msgs()}),
        );
        k.auth = Some(h.to_string());
        c.push(k);
        let mut d = case(format!("auth: {n}, delete the space"), "DELETE", &s, None);
        d.auth = Some(h.to_string());
        c.push(d);
    }
    c
}

fn nest_filter(depth: usize) -> Value {
    (0..depth).fold(
        json!({"field": "group", "op": "eq", "value": "g"}),
        |v, _| json!({ "not": v }),
    )
}
