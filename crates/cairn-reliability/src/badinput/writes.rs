//! Bad bodies of writes for the bad-input corpus: sessions, times, metadata, cross-site
//! bodies, imports, batches, group messages and trajectories.
use super::cases::{accepted, case, msgs, post_json, post_raw, Case, Routes};
use super::spaces::SPACE;
use serde_json::{json, Value};

/// Wrong types and missing fields in sessions: ids, messages, roles and dates.
pub(super) fn session_type_cases() -> Vec<Case> {
    let Routes { sessions, .. } = Routes::new();
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
    ] {
        c.push(post_json(format!("session: {n}"), &sessions, v));
    }
    c
}

/// Sessions with values out of bounds: ids, text, metadata and bodies of the wrong shape.
pub(super) fn session_value_cases() -> Vec<Case> {
    let Routes { sessions, .. } = Routes::new();
    let mut c = Vec::new();
    for (n, v) in [
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
    c
}

/// Years outside what RFC 3339 can write, in every time field.
pub(super) fn year_cases() -> Vec<Case> {
    let Routes { s, sessions, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// Metadata nested past what reads back, on every entry point.
pub(super) fn deep_metadata_cases() -> Vec<Case> {
    let Routes { s, sessions, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// Bodies a page on another origin can send without a preflight.
pub(super) fn cross_site_cases() -> Vec<Case> {
    let Routes { s, recall, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// A half-refused import, names URL clients rewrite, offsets past the end and work past
/// the bounds.
pub(super) fn rewrite_and_bound_cases() -> Vec<Case> {
    let Routes { s, sessions, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// Sessions with misspelt fields, path-like ids, control characters, and bytes that are
/// not JSON.
pub(super) fn malformed_session_cases() -> Vec<Case> {
    let Routes { sessions, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// Batches over the limit or of the wrong shape, wrong content types, methods and routes.
pub(super) fn batch_and_method_cases() -> Vec<Case> {
    let Routes { sessions, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// Group messages, trajectories and appended messages of the wrong shape.
pub(super) fn group_and_trajectory_cases() -> Vec<Case> {
    let Routes { s, .. } = Routes::new();
    let mut c = Vec::new();
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
    c
}

/// `[[...[1]...]]`, `depth` deep, built without `json!` (which recurses).
fn nest_arrays(depth: usize) -> Value {
    (1..depth).fold(json!(1), |v, _| Value::Array(vec![v]))
}

fn nest(depth: usize) -> Value {
    (0..depth).fold(json!(1), |v, _| json!({ "a": v }))
}
