//! Bad input through the API: a corpus of malformed and adversarial requests (wrong types,
//! huge bodies, deep nesting, invalid UTF-8, control characters, injection attempts in
//! filters and space names, path traversal in ids, broken HTTP, metadata nested past what
//! reads back, bodies a web page can send cross-site, names URL clients rewrite) and slow
//! or idle clients. Every request must get a 4xx problem document
//! (`application/problem+json` with a `code` and a `detail`), every slow client must be
//! cut off, the server must stay up, nothing refused may be stored, and a canary session
//! must read back unchanged afterwards.
use crate::serve::{encode, encode_bytes, Cairn, Resp, ADMIN_KEY};
use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

pub const SPACE: &str = "bad";
const OTHER: &str = "bystander";

/// One request of the corpus.
pub struct Case {
    pub name: String,
    pub method: &'static str,
    /// Already percent-encoded where it needs to be.
    pub path: String,
    pub content_type: &'static str,
    pub body: Option<Vec<u8>>,
    /// `None`: the admin key; `Some(v)`: this Authorization header value ("" for none).
    pub auth: Option<String>,
    /// Adversarial but well-formed: must be answered 2xx, stored (if a write) as exactly
    /// what was sent under its literal id, and touch nothing else.
    pub accept: bool,
}

fn case(
    name: impl Into<String>,
    method: &'static str,
    path: impl Into<String>,
    body: Option<Vec<u8>>,
) -> Case {
    Case {
        name: name.into(),
        method,
        path: path.into(),
        content_type: "application/json",
        body,
        auth: None,
        accept: false,
    }
}

fn accepted(mut c: Case) -> Case {
    c.accept = true;
    c
}

fn post_json(name: impl Into<String>, path: impl Into<String>, v: Value) -> Case {
    case(name, "POST", path, Some(v.to_string().into_bytes()))
}

fn post_raw(name: impl Into<String>, path: impl Into<String>, b: impl Into<Vec<u8>>) -> Case {
    case(name, "POST", path, Some(b.into()))
}

fn msgs() -> Value {
    json!([{"role": "user", "text": "hello"}])
}

/// The corpus: every route that takes input, fed what it must refuse.
pub fn corpus() -> Vec<Case> {
    let s = format!("/v1/spaces/{SPACE}");
    let sessions = format!("{s}/sessions");
    let recall = format!("{s}/recall");
    let mut c = Vec::new();

    // Wrong types and missing fields in sessions.
    for (n, v) in [
        (
            "session id is a number",
            json!({"id": 7, "messages": msgs()}),
        ),
        (
            "session id is null",
            json!({"id": null, "messages": msgs()}),
        ),
        (
            "messages is a string",
            json!({"id": "x", "messages": "hello"}),
        ),
        ("messages is empty", json!({"id": "x", "messages": []})),
        (
            "message text is an object",
            json!({"id": "x", "messages": [{"role": "user", "text": {"a": 1}}]}),
        ),
        (
            "message without text",
            json!({"id": "x", "messages": [{"role": "user"}]}),
        ),
        (
            "unknown role",
            json!({"id": "x", "messages": [{"role": "wizard", "text": "hi"}]}),
        ),
        (
            "impossible date",
            json!({"id": "x", "date": "31/31/2020", "messages": msgs()}),
        ),
        (
            "date is a number",
            json!({"id": "x", "date": 20240101, "messages": msgs()}),
        ),
        (
            "year 99999",
            json!({"id": "x", "date": "99999-01-01", "messages": msgs()}),
        ),
        ("empty id", json!({"id": "", "messages": msgs()})),
        ("id with NUL", json!({"id": "a\u{0}b", "messages": msgs()})),
        ("id with newline", json!({"id": "a\nb", "messages": msgs()})),
        (
            "id is 100 KB",
            json!({"id": "x".repeat(100_000), "messages": msgs()}),
        ),
        (
            "message id repeated",
            json!({"id": "x", "messages": [{"id": "m", "role": "user", "text": "a"}, {"id": "m", "role": "user", "text": "b"}]}),
        ),
        (
            "empty text",
            json!({"id": "x", "messages": [{"role": "user", "text": ""}]}),
        ),
        (
            "text over the limit",
            json!({"id": "x", "messages": [{"role": "user", "text": "a".repeat(1_100_000)}]}),
        ),
        (
            "metadata is a string",
            json!({"id": "x", "metadata": "user=u1", "messages": msgs()}),
        ),
        (
            "metadata is an array",
            json!({"id": "x", "metadata": [1, 2], "messages": msgs()}),
        ),
        (
            "NUL in metadata",
            json!({"id": "x", "metadata": {"k": "a\u{0}b"}, "messages": msgs()}),
        ),
        (
            "NUL in speaker",
            json!({"id": "x", "messages": [{"speaker": "a\u{0}b", "text": "hi"}]}),
        ),
        (
            "weekday that is not the date's",
            json!({"id": "x", "date": "2023/05/30 (Fri) 23:40", "messages": msgs()}),
        ),
        ("body is an array", json!([{"id": "x", "messages": msgs()}])),
        ("body is a string", json!("session")),
        ("body is null", Value::Null),
        (
            "metadata nested 200 deep",
            json!({"id": "x", "messages": msgs(), "metadata": nest(200)}),
        ),
    ] {
        c.push(post_json(format!("session: {n}"), &sessions, v));
    }
    // Years outside 0001-9999 in UTC have no RFC 3339 form: accepted once, they made the
    // space unreadable. Every time field, every entry point.
    for bad in [
        "-0001-01-01",
        "-9999-01-01",
        "9999-12-31T23:59:59-05:00",
        "0000-01-01T00:00:00+05:00",
    ] {
        c.push(post_json(
            format!("session date {bad}"),
            &sessions,
            json!({"id": "d", "date": bad, "messages": msgs()}),
        ));
        c.push(post_json(
            format!("message occurred_at {bad}"),
            &sessions,
            json!({"id": "d", "messages": [{"role": "user", "text": "hi", "occurred_at": bad}]}),
        ));
        c.push(post_json(
            format!("appended occurred_at {bad}"),
            format!("{s}/messages"),
            json!({"session_id": "d", "occurred_at": bad, "messages": msgs()}),
        ));
        c.push(post_json(
            format!("group time {bad}"),
            format!("{s}/group-messages"),
            json!({"messages": [{"speaker": "a", "group": "g", "time": bad, "text": "hi"}]}),
        ));
        c.push(post_raw(
            format!("import recorded_at {bad}"),
            format!("{s}/import"),
            json!({"space": SPACE, "recorded_at": bad, "session": {"id": "d", "messages": msgs()}})
                .to_string(),
        ));
    }
    // Metadata nested past what reads back (issue 38: a body 125 levels deep, message
    // metadata of 121, was accepted, then every read of the space, and the admin's
    // stats, failed), on every entry point; a trajectory's outcome too. Each body stays
    // within the JSON parser's 128 levels: validation must refuse it.
    let deep = || json!({ "a": nest_arrays(120) });
    for (n, path, v) in [
        (
            "message metadata nested 121 deep",
            format!("{s}/messages"),
            json!({"session_id": "deep", "messages": [{"role": "user", "text": "hi", "metadata": deep()}]}),
        ),
        (
            "appended session metadata nested 121 deep",
            format!("{s}/messages"),
            json!({"session_id": "deep", "metadata": deep(), "messages": msgs()}),
        ),
        (
            "session message metadata nested 121 deep",
            sessions.clone(),
            json!({"id": "deep", "messages": [{"role": "user", "text": "hi", "metadata": deep()}]}),
        ),
        (
            "group message metadata nested 121 deep",
            format!("{s}/group-messages"),
            json!({"messages": [{"speaker": "a", "group": "g", "time": "2024-01-01", "text": "hi", "metadata": deep()}]}),
        ),
        (
            "trajectory metadata nested 121 deep",
            format!("{s}/trajectories"),
            json!({"trajectories": [{"id": "t", "goal": "g", "metadata": deep(), "states": [{"url": "u"}]}]}),
        ),
        (
            "trajectory outcome nested 121 deep",
            format!("{s}/trajectories"),
            json!({"trajectories": [{"id": "t", "goal": "g", "outcome": deep(), "states": [{"url": "u"}]}]}),
        ),
        (
            "metadata of 100 KB",
            sessions.clone(),
            json!({"id": "big", "metadata": {"k": "x".repeat(100_000)}, "messages": msgs()}),
        ),
    ] {
        c.push(post_json(n, path, v));
    }
    c.push(post_raw(
        "import line with metadata nested 121 deep",
        format!("{s}/import"),
        json!({"space": SPACE, "recorded_at": "2024-01-01T00:00:00Z",
            "session": {"id": "deep", "metadata": deep(), "messages": msgs()}})
        .to_string(),
    ));
    // Writes a page on another origin can send without a preflight (a CORS simple
    // request): refused on every route that takes a body, import and MCP included.
    for (route, body) in [
        (
            format!("{s}/import"),
            json!({"space": SPACE, "recorded_at": "2024-01-01T00:00:00Z",
                "session": {"id": "evil", "messages": [{"role": "user", "text": "EVIL-IBAN"}]}})
            .to_string(),
        ),
        (
            "/mcp".to_string(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        ),
        (recall.clone(), json!({"query": "canary"}).to_string()),
    ] {
        for ctype in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            let mut k = post_raw(format!("{ctype} body to {route}"), &route, body.clone());
            k.content_type = ctype;
            c.push(k);
        }
    }
    // A refused line refuses the whole import: the session before it is not written.
    c.push(post_raw(
        "import: a good line, then a bad one",
        format!("{s}/import"),
        format!(
            "{}\n{}\n",
            json!({"space": SPACE, "recorded_at": "2024-01-01T00:00:00Z",
                "session": {"id": "half", "messages": msgs()}}),
            json!({"space": SPACE, "recorded_at": "2024-01-01T00:00:00Z",
                "session": {"id": "canary", "messages": [{"role": "user", "text": "overwritten"}]}})
        ),
    ));
    // Names that URL clients rewrite (`/v1/spaces/../stats` reaches `/v1/stats`).
    for name in [".", ".."] {
        c.push(post_json(
            format!("create space {name:?}"),
            "/v1/spaces",
            json!({ "name": name }),
        ));
    }
    for (n, v) in [
        ("session id `.`", json!({"id": ".", "messages": msgs()})),
        ("session id `a/.`", json!({"id": "a/.", "messages": msgs()})),
        (
            "message id `.`",
            json!({"id": "dots", "messages": [{"id": ".", "role": "user", "text": "hi"}]}),
        ),
    ] {
        c.push(post_json(format!("session: {n}"), &sessions, v));
    }
    // An offset past every row is an empty page, not the first one (it wrapped).
    c.push(accepted(case(
        "offset 2^64-1",
        "GET",
        format!("{s}/memories?offset=18446744073709551615"),
        None,
    )));
    // Work per request is bounded (10,000 short messages cost a minute of CPU).
    c.push(post_json(
        "10,000 messages in one append",
        format!("{s}/messages"),
        json!({"session_id": "many", "messages": (0..10_000).map(|i| json!({"role": "user", "text": format!("m{i}")})).collect::<Vec<_>>()}),
    ));
    c.push(post_json(
        "trajectory observation past the library's bound",
        format!("{s}/trajectories"),
        json!({"trajectories": [{"id": "t", "goal": "g", "states": [{"observation": "o".repeat(cairn::bounds::MAX_OBSERVATION_BYTES + 1)}]}]}),
    ));
    c.push(post_json(
        "profile deleted as a memory",
        format!("{s}/memories/profile:user"),
        Value::Null,
    ));
    if let Some(last) = c.last_mut() {
        last.method = "DELETE";
        last.body = None;
    }
    // Misspelt fields, ids that look like paths, text of control characters: refused.
    for (n, id, text) in [
        ("unknown top-level field", "extra", "hello"),
        ("id with path traversal", "../../etc/passwd", "hello"),
        ("id of slashes and dots", "/..", "hello"),
        ("id naming the key file", "../keys.sqlite3", "hello"),
        ("text of control characters only", "ctl", "\u{1}\u{2}\u{7f}"),
    ] {
        c.push(post_json(
            format!("session: {n}"),
            &sessions,
            if id == "extra" {
                json!({"id": id, "messages": [{"role": "user", "text": text}], "sneaky": true})
            } else {
                json!({"id": id, "messages": [{"role": "user", "text": text}]})
            },
        ));
    }
    // Bytes that are not JSON.
    for (n, b) in [
        ("empty body", b"".to_vec()),
        ("not JSON", b"hello".to_vec()),
        (
            "truncated JSON",
            br#"{"id": "x", "messages": [{"role": "us"#.to_vec(),
        ),
        (
            "invalid UTF-8",
            b"{\"id\": \"\xff\xfe\", \"messages\": []}".to_vec(),
        ),
        (
            "lone surrogate escape",
            br#"{"id": "\ud800", "messages": [{"role": "user", "text": "a"}]}"#.to_vec(),
        ),
        ("NUL bytes", b"\0\0\0\0".to_vec()),
        ("UTF-16 BOM", b"\xff\xfe{\0}\0".to_vec()),
        (
            "trailing garbage",
            br#"{"id": "x", "messages": [{"role": "user", "text": "a"}]} trailing"#.to_vec(),
        ),
        (
            "deeply nested arrays",
            [b"[".repeat(100_000), b"]".repeat(100_000)].concat(),
        ),
        ("deeply nested objects", {
            let mut v = b"{\"a\":".repeat(50_000);
            v.extend(b"1");
            v.extend(b"}".repeat(50_000));
            v
        }),
        (
            "number with 10^6 digits",
            format!("{{\"id\": {}}}", "9".repeat(1_000_000)).into_bytes(),
        ),
    ] {
        c.push(post_raw(format!("session bytes: {n}"), &sessions, b));
    }
    // Huge bodies.
    c.push(post_json(
        "batch over the session limit",
        format!("{sessions}/batch"),
        json!({"sessions": (0..1001).map(|i| json!({"id": format!("b{i}"), "messages": msgs()})).collect::<Vec<_>>()}),
    ));
    c.push(post_json(
        "batch: sessions is an object",
        format!("{sessions}/batch"),
        json!({"sessions": {"id": "x"}}),
    ));
    c.push(post_json(
        "batch: one bad session among good ones",
        format!("{sessions}/batch"),
        json!({"sessions": [{"id": "good-1", "messages": msgs()}, {"id": "bad", "messages": []}]}),
    ));
    // Wrong content type, methods and routes.
    let mut wrong_type = post_json(
        "text/plain body",
        &sessions,
        json!({"id": "x", "messages": msgs()}),
    );
    wrong_type.content_type = "text/plain";
    c.push(wrong_type);
    let mut form = post_raw("form-encoded body", &sessions, b"id=x&messages=hi".to_vec());
    form.content_type = "application/x-www-form-urlencoded";
    c.push(form);
    c.push(case(
        "PUT on a POST route",
        "PUT",
        &sessions,
        Some(b"{}".to_vec()),
    ));
    c.push(case("PATCH on spaces", "PATCH", "/v1/spaces", None));
    c.push(case("unknown route", "GET", "/v1/nothing-here", None));
    c.push(case("unknown version", "GET", "/v2/spaces", None));
    // Group messages and trajectories.
    for (n, v) in [
        (
            "no time",
            json!({"messages": [{"speaker": "a", "group": "g", "text": "hi"}]}),
        ),
        (
            "time is garbage",
            json!({"messages": [{"speaker": "a", "group": "g", "time": "yesterday-ish", "text": "hi"}]}),
        ),
        (
            "empty speaker",
            json!({"messages": [{"speaker": "", "group": "g", "time": "2024-01-01", "text": "hi"}]}),
        ),
        ("messages is null", json!({"messages": null})),
    ] {
        c.push(post_json(
            format!("group messages: {n}"),
            format!("{s}/group-messages"),
            v,
        ));
    }
    for (n, v) in [
        (
            "states empty",
            json!({"trajectories": [{"id": "t", "goal": "g", "states": []}]}),
        ),
        (
            "goal missing",
            json!({"trajectories": [{"id": "t", "states": [{"url": "u"}]}]}),
        ),
        (
            "state is a number",
            json!({"trajectories": [{"id": "t", "goal": "g", "states": [5]}]}),
        ),
    ] {
        c.push(post_json(
            format!("trajectory: {n}"),
            format!("{s}/trajectories"),
            v,
        ));
    }
    c.push(case(
        "trajectory state index overflows",
        "GET",
        format!("{s}/trajectories/t/states/99999999999999999999999"),
        None,
    ));
    c.push(case(
        "trajectory state index negative",
        "GET",
        format!("{s}/trajectories/t/states/-1"),
        None,
    ));
    // Messages appended to a session.
    c.push(post_json(
        "messages: no session id",
        format!("{s}/messages"),
        json!({"messages": msgs()}),
    ));
    c.push(post_json(
        "messages: rewrite the canary",
        format!("{s}/messages"),
        json!({"session_id": "canary", "messages": [{"id": "0", "role": "user", "text": "overwritten"}]}),
    ));
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

/// `[[...[1]...]]`, `depth` deep, built without `json!` (which recurses).
fn nest_arrays(depth: usize) -> Value {
    (1..depth).fold(json!(1), |v, _| Value::Array(vec![v]))
}

fn nest(depth: usize) -> Value {
    (0..depth).fold(json!(1), |v, _| json!({ "a": v }))
}

fn nest_filter(depth: usize) -> Value {
    (0..depth).fold(
        json!({"field": "group", "op": "eq", "value": "g"}),
        |v, _| json!({ "not": v }),
    )
}

/// Requests that are not well-formed HTTP, sent over a raw socket.
pub fn raw_corpus() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("garbage request line", b"HELLO\r\n\r\n".to_vec()),
        ("HTTP/0.9", b"GET /v1/health\r\n\r\n".to_vec()),
        ("header without colon", b"GET /v1/health HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n".to_vec()),
        ("content-length lies (short body, then close)", b"POST /v1/spaces/bad/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"id\":".to_vec()),
        ("two content-lengths", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}".to_vec()),
        ("huge content-length", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n".to_vec()),
        ("bad chunked encoding", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec()),
        ("1 MiB header", [b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec(), vec![b'a'; 1 << 20], b"\r\n\r\n".to_vec()].concat()),
        ("body over the limit (9 MiB declared, 1 MiB sent)", [format!("POST /v1/spaces/bad/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", 9 << 20).into_bytes(), vec![b' '; 1 << 20]].concat()),
        ("NUL in the path", b"GET /v1/\0health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("request smuggling attempt", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/spaces HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
    ]
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct BadInputReport {
    pub requests: usize,
    pub raw_requests: usize,
    /// Answered 4xx with a problem document.
    pub refused_4xx: usize,
    /// Adversarial but well-formed requests answered 2xx, stored exactly as sent (writes),
    /// nothing else touched.
    pub accepted_as_data: usize,
    /// Anything else: a 2xx, a 5xx, or a 4xx without a problem document (must be 0).
    pub wrong_answers: usize,
    pub server_down_after: usize,
    pub canary_changed: usize,
    /// Slow or idle clients the server did not cut off (must be empty).
    pub slow_clients_left_open: Vec<String>,
    pub failures: Vec<String>,
    /// code -> how many requests got it.
    pub codes: std::collections::BTreeMap<String, usize>,
}

impl BadInputReport {
    pub fn passed(&self) -> bool {
        self.wrong_answers == 0
            && self.server_down_after == 0
            && self.canary_changed == 0
            && self.slow_clients_left_open.is_empty()
    }
}

fn problem_ok(r: &Resp) -> bool {
    (400..500).contains(&r.status)
        && r.content_type.starts_with("application/problem+json")
        && r.body["code"].as_str().is_some_and(|c| !c.is_empty())
        && r.body["detail"].as_str().is_some_and(|d| !d.is_empty())
        && r.body["status"].as_u64() == Some(r.status as u64)
}

/// What slow and idle clients are given by the server under test: short, so the probes
/// finish quickly.
const HEADER_TIMEOUT_MS: u64 = 1000;
const BODY_TIMEOUT_MS: u64 = 2000;

/// Clients that send half a request head, nothing, or a body a byte at a time (issue 38:
/// 150 of them stayed open 30-35 s, exhausted file descriptors and stalled a shutdown).
/// Each must be cut off by the server within a few timeouts while `/v1/health` keeps
/// answering; the names of those left open.
fn slow_clients(client: &cairn_load::client::Client) -> Vec<String> {
    let addr = client.base.trim_start_matches("http://").to_string();
    let drip = format!(
        "POST /v1/spaces/{SPACE}/sessions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    let probes: Vec<(String, Vec<u8>, bool)> = (0..10)
        .flat_map(|i| {
            [
                (
                    format!("half-sent head {i}"),
                    b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n".to_vec(),
                    false,
                ),
                (format!("idle connection {i}"), Vec::new(), false),
                (
                    format!("dripping body {i}"),
                    drip.clone().into_bytes(),
                    true,
                ),
            ]
        })
        .collect();
    let handles: Vec<_> = probes
        .into_iter()
        .map(|(name, first, dripping)| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(&addr) else {
                    return None;
                };
                let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                let _ = s.write_all(&first);
                let start = std::time::Instant::now();
                let limit = Duration::from_millis(5 * (HEADER_TIMEOUT_MS + BODY_TIMEOUT_MS));
                let mut buf = [0u8; 1024];
                while start.elapsed() < limit {
                    if dripping && s.write_all(b" ").is_err() {
                        return None;
                    }
                    match s.read(&mut buf) {
                        Ok(0) => return None,
                        Err(e)
                            if !matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) =>
                        {
                            return None
                        }
                        _ => {}
                    }
                }
                Some(name)
            })
        })
        .collect();
    let mut open = Vec::new();
    if !matches!(client.get("/v1/health"), Ok(r) if r.status == 200) {
        open.push("/v1/health did not answer while slow clients were connected".to_string());
    }
    open.extend(handles.into_iter().filter_map(|h| h.join().ok().flatten()));
    open
}

pub fn run(cairn: &Cairn, mut progress: impl FnMut(&str)) -> Result<BadInputReport> {
    let server = cairn.serve(&[
        "--header-timeout-ms",
        &HEADER_TIMEOUT_MS.to_string(),
        "--body-timeout-ms",
        &BODY_TIMEOUT_MS.to_string(),
    ])?;
    let client = server.client.clone();
    for space in [SPACE, OTHER] {
        let canary = json!({"id": "canary", "date": "2024-05-01 10:00", "metadata": {"k": "v"}, "messages": [
            {"role": "user", "text": format!("The canary of {space} sings at dawn; vault code 4417.")},
            {"role": "assistant", "text": "Noted, the canary sings at dawn."}]});
        let r = client
            .post(&format!("/v1/spaces/{space}/sessions"), &canary)
            .map_err(anyhow::Error::msg)?;
        if r.status != 200 {
            bail!("canary: {} {}", r.status, r.text);
        }
    }
    let read_canaries = || -> Result<Vec<Value>, String> {
        [SPACE, OTHER]
            .iter()
            .map(|s| {
                client
                    .get(&format!("/v1/spaces/{s}/sessions/canary"))
                    .map(|r| r.body)
            })
            .collect()
    };
    let before = read_canaries().map_err(anyhow::Error::msg)?;
    let bystander = || {
        client
            .get(&format!("/v1/spaces/{OTHER}/stats"))
            .map(|r| r.body)
    };
    let stats_before = bystander().map_err(anyhow::Error::msg)?;
    let mut report = BadInputReport::default();
    let corpus = corpus();
    let n = corpus.len();
    for (i, c) in corpus.into_iter().enumerate() {
        report.requests += 1;
        let resp = match (&c.auth, &c.body) {
            (Some(h), body) if !h.is_empty() => {
                // A custom Authorization header: through ureq with the raw value.
                let url = format!("{}{}", client.base, c.path);
                let agent = cairn_load::client::agent(std::time::Duration::from_secs(120));
                let body = body.as_deref().map(|b| (c.content_type, b));
                cairn_load::client::send(&agent, c.method, &url, &[("Authorization", h)], body).map(
                    |r| Resp {
                        status: r.status,
                        content_type: r.header("content-type").unwrap_or("").to_string(),
                        body: serde_json::from_str(&r.text).unwrap_or(Value::Null),
                        text: r.text,
                    },
                )
            }
            _ => client.request(
                c.method,
                &c.path,
                c.body.as_deref().map(|b| (c.content_type, b)),
                if c.auth.is_some() { Some("") } else { None },
            ),
        };
        match resp {
            Ok(r) if c.accept => {
                let id = c
                    .body
                    .as_deref()
                    .and_then(|b| serde_json::from_slice::<Value>(b).ok())
                    .and_then(|v| v["id"].as_str().map(str::to_string));
                let stored = match (&id, c.path.ends_with("/sessions")) {
                    (Some(id), true) => client
                        .get(&format!("/v1/spaces/{SPACE}/sessions/{}", encode(id)))
                        .is_ok_and(|g| {
                            g.status == 200 && g.body["session"]["id"].as_str() == Some(id)
                        }),
                    _ => true,
                };
                let leaked = r.text.contains(&format!("canary of {OTHER}"));
                if (200..300).contains(&r.status) && stored && !leaked {
                    report.accepted_as_data += 1;
                } else {
                    report.wrong_answers += 1;
                    let text: String = r.text.chars().take(300).collect();
                    report.failures.push(format!(
                        "{} (well-formed): {} stored={stored} leaked={leaked} {text}",
                        c.name, r.status
                    ));
                }
            }
            Ok(r) if problem_ok(&r) => {
                report.refused_4xx += 1;
                *report
                    .codes
                    .entry(r.body["code"].as_str().unwrap_or("").to_string())
                    .or_default() += 1;
            }
            Ok(r) => {
                report.wrong_answers += 1;
                let text: String = r.text.chars().take(300).collect();
                report.failures.push(format!(
                    "{}: {} {} -> {} {text}",
                    c.name,
                    c.method,
                    trunc(&c.path),
                    r.status
                ));
            }
            Err(e) => {
                report.wrong_answers += 1;
                report
                    .failures
                    .push(format!("{}: no answer: {}", c.name, trunc(&e)));
            }
        }
        match client.get("/v1/health") {
            Ok(r) if r.status == 200 => {}
            _ => {
                report.server_down_after += 1;
                report
                    .failures
                    .push(format!("server down after {}", c.name));
                break;
            }
        }
        if (i + 1) % 50 == 0 {
            progress(&format!("{}/{n} requests", i + 1));
        }
    }
    for (name, bytes) in raw_corpus() {
        report.raw_requests += 1;
        let addr = client.base.trim_start_matches("http://").to_string();
        if let Ok(mut s) = TcpStream::connect(&addr) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.write_all(&bytes);
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut answer = Vec::new();
            let _ = s.take(1 << 20).read_to_end(&mut answer);
            let head = String::from_utf8_lossy(&answer[..answer.len().min(12)]).to_string();
            // Either a 4xx or the connection closed without an answer; never a 2xx/5xx.
            if head.starts_with("HTTP/1.1 2") || head.starts_with("HTTP/1.1 5") {
                // The smuggled second request may be answered 2xx only if the first was refused.
                if !(name == "request smuggling attempt"
                    && String::from_utf8_lossy(&answer).contains(" 4"))
                {
                    report.wrong_answers += 1;
                    report.failures.push(format!("raw {name}: {head}"));
                }
            }
        }
        match client.get("/v1/health") {
            Ok(r) if r.status == 200 => {}
            _ => {
                report.server_down_after += 1;
                report
                    .failures
                    .push(format!("server down after raw {name}"));
            }
        }
    }
    progress("slow and idle clients");
    report.slow_clients_left_open = slow_clients(&client);
    report.failures.extend(
        report
            .slow_clients_left_open
            .iter()
            .map(|n| format!("slow client not cut off: {n}")),
    );
    // Refused writes left nothing: not the session before a refused import line, not
    // what a cross-site body or too-deep metadata carried.
    for id in ["half", "evil", "deep", "big", "dots"] {
        match client.get(&format!("/v1/spaces/{SPACE}/sessions/{id}")) {
            Ok(r) if r.status == 404 => {}
            Ok(r) => {
                report.canary_changed += 1;
                report.failures.push(format!(
                    "a refused write left session {id:?}: {} {}",
                    r.status,
                    trunc(&r.text)
                ));
            }
            Err(e) => bail!("session {id}: {e}"),
        }
    }
    match client.get(&format!(
        "/v1/spaces/{SPACE}/memories?offset=18446744073709551615"
    )) {
        Ok(r) if r.status == 200 && r.body["items"] == json!([]) => {}
        Ok(r) => {
            report.wrong_answers += 1;
            report.failures.push(format!(
                "an offset past every row answered {} {}",
                r.status,
                trunc(&r.text)
            ));
        }
        Err(e) => bail!("offset: {e}"),
    }
    let after = read_canaries().map_err(anyhow::Error::msg)?;
    if after != before {
        report.canary_changed += 1;
        report
            .failures
            .push(format!("canary changed: {before:?} -> {after:?}"));
    }
    let stats_after = bystander().map_err(anyhow::Error::msg)?;
    if stats_after != stats_before {
        report.canary_changed += 1;
        report
            .failures
            .push(format!("stats changed: {stats_before} -> {stats_after}"));
    }
    // Whatever was accepted stays readable: every read of both spaces answers 200.
    for path in [
        format!("/v1/spaces/{SPACE}/export"),
        format!("/v1/spaces/{SPACE}/sessions"),
        format!("/v1/spaces/{SPACE}/stats"),
        format!(
            "/v1/spaces/{SPACE}/memories?filter={}",
            encode("{\"k\": \"v\"}")
        ),
        "/v1/stats".to_string(),
    ] {
        match client.get(&path) {
            Ok(r) if r.status == 200 => {}
            Ok(r) => {
                report.canary_changed += 1;
                report.failures.push(format!(
                    "{path} unreadable: {} {}",
                    r.status,
                    trunc(&r.text)
                ));
            }
            Err(e) => bail!("{path}: {e}"),
        }
    }
    let r = client
        .post(
            &format!("/v1/spaces/{SPACE}/recall"),
            &json!({"query": "When does the canary sing?", "filter": {"k": "v"}, "as_of": "2030-01-01"}),
        )
        .map_err(anyhow::Error::msg)?;
    if !r.text.contains("dawn") {
        report.canary_changed += 1;
        report
            .failures
            .push(format!("canary not recalled: {}", trunc(&r.text)));
    }
    server.stop()?;
    Ok(report)
}

fn trunc(s: &str) -> String {
    if s.len() > 200 {
        format!("{}...", &s[..s.floor_char_boundary_compat(200)])
    } else {
        s.to_string()
    }
}

trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}
impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}
