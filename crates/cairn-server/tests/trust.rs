//! The findings of trying the server as an attacker and as a new user would (issue 20),
//! each as a regression test against a real server: what is accepted stays readable,
//! nothing crosses tenants, each request's work is bounded, and every error names its
//! field as a JSON path.
mod common;
use common::{admin_config, mcp, mcp_init, ok, session, start, tool, Resp, Server, ADMIN};
use serde_json::{json, Value};

const SESSIONS: &str = "/v1/spaces/{space}/sessions";
const MESSAGES: &str = "/v1/spaces/{space}/messages";
const GROUP: &str = "/v1/spaces/{space}/group-messages";
const RECALL: &str = "/v1/spaces/{space}/recall";
const EXPORT: &str = "/v1/spaces/{space}/export";
const IMPORT: &str = "/v1/spaces/{space}/import";
const MEMORY: &str = "/v1/spaces/{space}/memories/{id}";
const MEMORIES: &str = "/v1/spaces/{space}/memories";
const SESSION: &str = "/v1/spaces/{space}/sessions/{session}";
const TRAJECTORIES: &str = "/v1/spaces/{space}/trajectories";

fn server() -> Option<(tempfile::TempDir, Server)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = start(dir.path(), admin_config())?;
    Some((dir, s))
}

fn refused(r: &Resp, status: u16, code: &str, field: &str) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(r.code(), code, "{}", r.text);
    assert_eq!(r.body["field"].as_str(), Some(field), "{}", r.text);
    for internal in ["SpaceId(", "date: date:"] {
        assert!(!r.text.contains(internal), "{internal:?} in {}", r.text);
    }
}

/// Every read a space has, answering 200: what a stored record must keep possible.
fn readable(s: &Server, space: &str) {
    for (template, query) in [
        (EXPORT, ""),
        (SESSIONS, ""),
        ("/v1/spaces/{space}/stats", ""),
        (MEMORIES, "?filter=%7B%22user_id%22%3A%22u1%22%7D"),
    ] {
        let r = s.call("GET", template, &[space], query, Some(ADMIN), None);
        ok(&r);
    }
    ok(&s.get("/v1/stats", &[], ADMIN));
    let filtered = json!({"query": "anything", "filter": {"user_id": "u1"}, "as_of": "2030-01-01"});
    ok(&s.post(RECALL, &[space], ADMIN, &filtered));
}

#[test]
fn dates_without_an_rfc3339_form_are_refused_on_every_time_field() {
    let Some((_d, s)) = server() else { return };
    ok(&s.post(
        SESSIONS,
        &["alice"],
        ADMIN,
        &session("ok", "hi", "hello", json!({})),
    ));
    for bad in [
        "-0001-01-01",
        "-9999-01-01",
        "9999-12-31T23:59:59-05:00",
        "0000-01-01T00:00:00+05:00",
    ] {
        let r = s.post(
            SESSIONS,
            &["alice"],
            ADMIN,
            &json!({"id": "s", "date": bad, "messages": [{"role": "user", "text": "hi"}]}),
        );
        refused(&r, 422, "invalid_field", "date");
        let r = s.post(
            SESSIONS,
            &["alice"],
            ADMIN,
            &json!({"id": "s", "messages": [{"role": "user", "text": "hi", "occurred_at": bad}]}),
        );
        refused(&r, 422, "invalid_field", "messages[0].occurred_at");
        let r = s.post(
            GROUP,
            &["alice"],
            ADMIN,
            &json!({"messages": [{"speaker": "a", "group": "g", "time": bad, "text": "hi"}]}),
        );
        refused(&r, 422, "invalid_field", "messages[0].time");
        let r = s.post(MESSAGES, &["alice"], ADMIN, &json!({"session_id": "s", "occurred_at": bad, "messages": [{"role": "user", "text": "hi"}]}));
        refused(&r, 422, "invalid_input", "occurred_at");
        mcp_init(&s, ADMIN);
        let (is_error, v) = tool(
            &s,
            ADMIN,
            "remember",
            json!({"space": "alice", "note": "x", "occurred_at": bad}),
        );
        assert!(is_error, "{v}");
    }
    readable(&s, "alice");
}

#[test]
fn a_weekday_that_disagrees_and_nul_or_non_object_metadata_are_refused() {
    let Some((_d, s)) = server() else { return };
    let r = s.post(SESSIONS, &["alice"], ADMIN, &json!({"id": "s", "date": "2023/05/30 (Fri) 23:40", "messages": [{"role": "user", "text": "hi"}]}));
    refused(&r, 422, "invalid_field", "date");
    let r = s.post(
        SESSIONS,
        &["alice"],
        ADMIN,
        &json!({"id": "s", "messages": [{"speaker": "a\u{0}b", "text": "hi"}]}),
    );
    refused(&r, 422, "invalid_input", "messages[0].speaker");
    let r = s.post(
        SESSIONS,
        &["alice"],
        ADMIN,
        &json!({"id": "s", "metadata": "a string", "messages": [{"role": "user", "text": "hi"}]}),
    );
    refused(&r, 422, "invalid_input", "metadata");
    let r = s.post(SESSIONS, &["alice"], ADMIN, &json!({"id": "s", "metadata": {"k": ["ok", "a\u{0}b"]}, "messages": [{"role": "user", "text": "hi"}]}));
    refused(&r, 422, "invalid_input", "metadata.k[1]");
    let r = s.post(
        SESSIONS,
        &["alice"],
        ADMIN,
        &json!({"id": "s", "messages": [{"role": "user", "text": "hi", "metadata": [1]}]}),
    );
    refused(&r, 422, "invalid_input", "messages[0].metadata");
    let r = s.post(
        "/v1/spaces/{space}/sessions/batch",
        &["alice"],
        ADMIN,
        &json!({"sessions": [
        {"id": "a", "messages": [{"role": "user", "text": "fine"}]},
        {"id": "b", "messages": [{"role": "user", "text": " "}]}]}),
    );
    refused(&r, 422, "invalid_input", "sessions[1].messages[0].text");
    // The library's bound for an observation (above a message text's), not the server's.
    let big = "x".repeat(cairn::bounds::MAX_OBSERVATION_BYTES + 1);
    let body =
        json!({"trajectories": [{"id": "t", "goal": "g", "states": [{"observation": big}]}]});
    let r = s.post(TRAJECTORIES, &["alice"], ADMIN, &body);
    refused(
        &r,
        413,
        "text_too_long",
        "trajectories[0].states[0].observation",
    );
    assert_eq!(s.get("/v1/spaces", &[], ADMIN).body["spaces"], json!([]));
}

/// Host names the server does not answer to are refused on every route (DNS
/// rebinding), with keys and without.
#[test]
fn a_foreign_host_name_is_refused_on_every_route_even_without_auth() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = cairn_server::ServerConfig {
        auth: cairn_server::AuthMode::Disabled,
        ..Default::default()
    };
    let Some(s) = start(dir.path(), config) else {
        return;
    };
    ok(&s.post(
        SESSIONS,
        &["alice"],
        "",
        &session("s1", "my secret", "ok", json!({})),
    ));
    let addr = s.base.trim_start_matches("http://").to_string();
    for (path, method, body) in [
        ("/v1/spaces/alice/export", "GET", ""),
        ("/v1/spaces", "GET", ""),
        (
            "/mcp",
            "POST",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ),
    ] {
        let raw = |host: &str| {
            use std::io::{Read, Write};
            let mut c = std::net::TcpStream::connect(&addr).expect("connect");
            write!(c, "{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).expect("write");
            let mut out = String::new();
            c.read_to_string(&mut out).expect("read");
            out
        };
        let foreign = raw("attacker.example");
        assert!(foreign.starts_with("HTTP/1.1 403"), "{path}: {foreign}");
        assert!(foreign.contains("host_not_allowed") && !foreign.contains("my secret"));
        let local = raw(&addr);
        assert!(!local.starts_with("HTTP/1.1 403"), "{path}: {local}");
    }
}

#[test]
fn one_request_cannot_ask_for_unbounded_work() {
    let Some((_d, s)) = server() else { return };
    let messages: Vec<Value> = (0..10_000)
        .map(|i| json!({"role": "user", "text": format!("m {i}")}))
        .collect();
    let r = s.post(
        MESSAGES,
        &["alice"],
        ADMIN,
        &json!({"session_id": "s", "messages": messages}),
    );
    refused(&r, 413, "too_much_work", "messages");
    // Refused before any work: nothing of it was stored.
    assert_eq!(s.get(SESSION, &["alice", "s"], ADMIN).status, 404);
    let sessions: Vec<Value> = (0..20).map(|i| json!({"id": format!("s{i}"), "messages": (0..60).map(|j| json!({"role": "user", "text": format!("t {j}")})).collect::<Vec<_>>()})).collect();
    let r = s.post(
        "/v1/spaces/{space}/sessions/batch",
        &["alice"],
        ADMIN,
        &json!({"sessions": sessions}),
    );
    refused(&r, 413, "too_much_work", "sessions");
}

/// Limits bound cost, not what a memory keeps: a reply of hundreds of KB (pasted code) is
/// stored verbatim and recalled.
#[test]
fn a_long_pasted_reply_is_kept_verbatim() {
    let Some((_d, s)) = server() else { return };
    let code: String = (0..12_000)
        .map(|i| format!("fn step_{i}() -> u32 {{ {i} }}\n"))
        .collect();
    assert!(code.len() > 300_000);
    let body = json!({"id": "paste", "messages": [
        {"role": "user", "text": "Here is the parser for the zorblax format."},
        {"role": "assistant", "text": code}]});
    ok(&s.post(SESSIONS, &["alice"], ADMIN, &body));
    let r = s.get(SESSION, &["alice", "paste"], ADMIN);
    assert_eq!(
        r.body["session"]["messages"][1]["text"]
            .as_str()
            .map(str::len),
        Some(code.len())
    );
    let r = s.post(
        RECALL,
        &["alice"],
        ADMIN,
        &json!({"query": "zorblax parser"}),
    );
    ok(&r);
    assert!(r.body["context_tokens"].as_u64().is_some_and(|n| n <= 600));
    assert_eq!(r.body["hits"][0]["session_id"], json!("paste"));
}

#[test]
fn as_of_hides_undated_sessions_recorded_later() {
    let Some((_d, s)) = server() else { return };
    let undated =
        json!({"id": "later", "messages": [{"role": "user", "text": "My locker code is 4471."}]});
    ok(&s.post(SESSIONS, &["alice"], ADMIN, &undated));
    let r = s.post(
        RECALL,
        &["alice"],
        ADMIN,
        &json!({"query": "locker code", "as_of": "2020-01-01"}),
    );
    ok(&r);
    assert_eq!(r.body["hits"], json!([]), "{}", r.text);
    assert!(!r.body["context"].as_str().unwrap_or("").contains("4471"));
    let r = s.post(RECALL, &["alice"], ADMIN, &json!({"query": "locker code"}));
    assert_eq!(r.body["hits"][0]["session_id"], json!("later"));
    // `relevance` is the cosine of hit and query: the same scale for every query.
    let rel = r.body["hits"][0]["relevance"].as_f64().expect("relevance");
    assert!((0.0..=1.0).contains(&rel), "{rel}");
}

#[test]
fn a_retried_append_is_stored_once_and_a_changed_message_is_a_conflict() {
    let Some((_d, s)) = server() else { return };
    let post = |body: &Value, key: &str| {
        s.call_with(
            "POST",
            MESSAGES,
            &["alice"],
            "",
            Some(ADMIN),
            Some(("application/json", &body.to_string())),
            &[("Idempotency-Key", key)],
        )
    };
    let append =
        json!({"session_id": "chat", "messages": [{"role": "user", "text": "I moved to Lisbon."}]});
    let first = post(&append, "k-1");
    ok(&first);
    assert!(!first.replayed);
    let again = post(&append, "k-1");
    ok(&again);
    assert!(again.replayed);
    assert_eq!(again.body, first.body);
    let r = s.get(SESSION, &["alice", "chat"], ADMIN);
    assert_eq!(
        r.body["session"]["messages"].as_array().map(Vec::len),
        Some(1)
    );
    let other =
        json!({"session_id": "chat", "messages": [{"role": "user", "text": "Something else."}]});
    refused(
        &post(&other, "k-1"),
        422,
        "idempotency_key_reused",
        "Idempotency-Key",
    );
    // Message ids are the other way to retry safely: the same message again is harmless,
    // a different one under a stored id is a conflict.
    let with_id = json!({"session_id": "chat", "messages": [{"id": "0", "role": "user", "text": "I moved to Lisbon."}]});
    let r = s.post(MESSAGES, &["alice"], ADMIN, &with_id);
    ok(&r);
    assert_eq!(r.body["messages_added"], json!(0));
    let changed = json!({"session_id": "chat", "messages": [{"id": "0", "role": "user", "text": "I moved to Porto."}]});
    refused(
        &s.post(MESSAGES, &["alice"], ADMIN, &changed),
        409,
        "conflict",
        "messages[0]",
    );
    let header = json!({"session_id": "chat", "group": "other", "messages": [{"role": "user", "text": "x"}]});
    refused(
        &s.post(MESSAGES, &["alice"], ADMIN, &header),
        409,
        "conflict",
        "group",
    );
}

#[test]
fn forgetting_a_memory_says_what_it_forgot() {
    let Some((_d, s)) = server() else { return };
    let day = json!({"messages": [
        {"speaker": "Maya", "group": "Atlas", "time": "2025-03-10 14:00", "text": "Update: the Atlas budget has been cut to $100,000."}]});
    ok(&s.post(GROUP, &["team"], ADMIN, &day));
    let r = s.call(
        "GET",
        MEMORIES,
        &["team"],
        "?kind=profile",
        Some(ADMIN),
        None,
    );
    let profile = r.body["items"][0]["id"]
        .as_str()
        .expect("a profile unit")
        .to_string();
    let r = s.delete(MEMORY, &["team", &profile], ADMIN);
    assert_eq!((r.status, r.code()), (422, "not_deletable"), "{}", r.text);
    let r = s.delete(MEMORY, &["team", "profile:Maya"], ADMIN);
    assert_eq!((r.status, r.code()), (422, "not_deletable"), "{}", r.text);
    let r = s.call("GET", MEMORIES, &["team"], "?kind=fact", Some(ADMIN), None);
    let fact = r.body["items"][0]["id"]
        .as_str()
        .expect("a fact unit")
        .to_string();
    let r = s.delete(MEMORY, &["team", &fact], ADMIN);
    ok(&r);
    assert_eq!(r.body["forgotten_session"], json!(true), "{}", r.text);
    assert_eq!(
        s.get(SESSION, &["team", "Atlas/2025-03-10"], ADMIN).status,
        404
    );
}

#[test]
fn an_export_restores_into_another_space_as_is() {
    let Some((_d, s)) = server() else { return };
    ok(&s.post(
        SESSIONS,
        &["alice"],
        ADMIN,
        &session(
            "s1",
            "I adopted a cat named Luna.",
            "Congrats!",
            json!({"user_id": "u1"}),
        ),
    ));
    let export = s.get(EXPORT, &["alice"], ADMIN).text;
    let r = s.call(
        "POST",
        IMPORT,
        &["copy"],
        "",
        Some(ADMIN),
        Some(("application/x-ndjson", &export)),
    );
    ok(&r);
    let copy = s.get(EXPORT, &["copy"], ADMIN).text;
    assert_eq!(
        copy.replace("\"space\":\"copy\"", "\"space\":\"alice\""),
        export
    );
}

/// MCP over HTTP, as an agent holding a key for one space meets it.
#[test]
fn mcp_serves_a_single_space_key_and_answers_bad_json_rpc_in_kind() {
    let Some((_d, s)) = server() else { return };
    let key = {
        let state = s.state.as_ref().expect("state");
        state
            .keys
            .create(&["solo".to_string()], false, None, None)
            .expect("key")
            .token
    };
    mcp_init(&s, &key);
    let (is_error, v) = tool(&s, &key, "spaces", json!({}));
    assert!(!is_error, "{v}");
    assert_eq!(v["spaces"], json!([]));
    assert_eq!(v["default"], json!("solo"));
    let (is_error, v) = tool(
        &s,
        &key,
        "remember",
        json!({"note": "The user is allergic to peanuts."}),
    );
    assert!(!is_error, "{v}");
    assert_eq!(v["space"], json!("solo"));
    let (_, v) = tool(&s, &key, "recall", json!({"query": "allergies?"}));
    assert!(
        v["context"].as_str().unwrap_or("").contains("peanuts"),
        "{v}"
    );
    let tools = mcp(&s, &key, 3, "tools/list", json!({}));
    let recall = tools.body["result"]["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "recall"))
        .expect("recall tool")
        .clone();
    for field in ["top_k", "token_budget"] {
        let min = &recall["inputSchema"]["properties"][field]["minimum"];
        assert_eq!(min.as_f64(), Some(1.0), "{field}: {recall}");
    }
    let raw = s.call(
        "POST",
        "/mcp",
        &[],
        "",
        Some(&key),
        Some(("application/json", "{not json")),
    );
    assert_eq!(raw.body["error"]["code"], json!(-32700), "{}", raw.text);
    let bad = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "recall", "arguments": "query"}});
    let raw = s.call(
        "POST",
        "/mcp",
        &[],
        "",
        Some(&key),
        Some(("application/json", &bad.to_string())),
    );
    assert_eq!(raw.body["error"]["code"], json!(-32602), "{}", raw.text);
    assert_eq!(raw.body["id"], json!(9));
}
