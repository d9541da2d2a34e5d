//! A filter naming a metadata key no session carries answers `warnings` on every read
//! route and MCP tool that takes a filter (issue 53, docs/scope.md), each answer checked
//! against openapi.json by the test client.
mod common;
use cairn::{Memory, MemoryConfig};
use cairn_testkit::HashEmbedder;
use common::{mcp_init, ok, serve, session, tool, Server, ADMIN};
use serde_json::{json, Value};
use std::sync::Arc;

const MISSPELT: &str = r#"{"userid": "u1"}"#;

fn server() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let memory =
        Memory::open_with_embedder(dir.path(), MemoryConfig::default(), Arc::new(HashEmbedder))
            .expect("open");
    let s = serve(memory, common::admin_config());
    let sessions = json!({"sessions": [
        session("a1", "My cat is called Luna.", "Nice.", json!({"user_id": "u1", "source": "web"})),
        session("b1", "The Atlas budget is $100,000.", "Noted.", json!({"user_id": "u2"})),
    ]});
    ok(&s.post(
        "/v1/spaces/{space}/sessions/batch",
        &["shared"],
        ADMIN,
        &sessions,
    ));
    (dir, s)
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The one warning a misspelt `userid` gets.
fn assert_warned(body: &Value, what: &str) {
    let ws = body["warnings"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no warnings: {body}"));
    assert_eq!(ws.len(), 1, "{what}: {body}");
    assert_eq!(ws[0]["code"], "unknown_filter_key", "{what}");
    assert_eq!(ws[0]["field"], "filter.userid", "{what}");
    assert_eq!(
        ws[0]["message"],
        "no session of this space carries metadata key \"userid\" (keys seen: source, user_id)",
        "{what}"
    );
}

#[test]
fn every_read_route_that_takes_a_filter_warns_of_a_key_no_session_carries() {
    let (_dir, s) = server();
    let recall = s.post(
        "/v1/spaces/{space}/recall",
        &["shared"],
        ADMIN,
        &json!({"query": "what is my cat called?", "filter": {"userid": "u1"}}),
    );
    ok(&recall);
    assert_warned(&recall.body, "recall");
    let q = format!("?filter={}", enc(MISSPELT));
    for route in [
        "/v1/spaces/{space}/memories",
        "/v1/spaces/{space}/sessions",
        "/v1/spaces/{space}/subjects",
        "/v1/spaces/{space}/speakers",
        "/v1/spaces/{space}/entities",
    ] {
        let r = s.call("GET", route, &["shared"], &q, Some(ADMIN), None);
        ok(&r);
        assert_warned(&r.body, route);
    }
    // A read that finds nothing says why it may have found nothing.
    let r = s.call(
        "GET",
        "/v1/spaces/{space}/history",
        &["shared"],
        &format!("?subject=Atlas%20budget&filter={}", enc(MISSPELT)),
        Some(ADMIN),
        None,
    );
    assert_eq!(r.status, 404, "{}", r.text);
    let detail = r.body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("warning: no session of this space carries metadata key \"userid\""),
        "{detail}"
    );
    for route in [
        "/v1/spaces/{space}/profiles/{speaker}",
        "/v1/spaces/{space}/entities/{name}",
    ] {
        let r = s.call("GET", route, &["shared", "user"], &q, Some(ADMIN), None);
        assert_eq!(r.status, 404, "{route}: {}", r.text);
        assert!(
            r.body["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("\"userid\""),
            "{route}: {}",
            r.text
        );
    }
}

#[test]
fn a_filter_on_keys_sessions_carry_answers_no_warnings() {
    let (_dir, s) = server();
    let good = r#"{"user_id": "u1", "session_id": {"ne": "x"}}"#;
    let r = s.post(
        "/v1/spaces/{space}/recall",
        &["shared"],
        ADMIN,
        &json!({"query": "what is my cat called?", "filter": serde_json::from_str::<Value>(good).unwrap()}),
    );
    ok(&r);
    assert!(r.body.get("warnings").is_none(), "{}", r.text);
    let q = format!("?filter={}", enc(good));
    for route in [
        "/v1/spaces/{space}/memories",
        "/v1/spaces/{space}/sessions",
        "/v1/spaces/{space}/subjects",
    ] {
        let r = s.call("GET", route, &["shared"], &q, Some(ADMIN), None);
        ok(&r);
        assert!(r.body.get("warnings").is_none(), "{route}: {}", r.text);
    }
}

#[test]
fn the_mcp_tools_that_take_a_filter_answer_its_warnings() {
    let (_dir, s) = server();
    ok(&mcp_init(&s, ADMIN));
    let filter = json!({"userid": "u1"});
    let (err, v) = tool(
        &s,
        ADMIN,
        "recall",
        json!({"space": "shared", "query": "cat?", "filter": filter}),
    );
    assert!(!err, "{v}");
    assert_warned(&v, "recall tool");
    for name in ["subjects", "entities"] {
        let (err, v) = tool(
            &s,
            ADMIN,
            name,
            json!({"space": "shared", "filter": filter}),
        );
        assert!(!err, "{name}: {v}");
        assert_warned(&v, name);
    }
    let (err, v) = tool(
        &s,
        ADMIN,
        "history",
        json!({"space": "shared", "subject": "Atlas budget", "filter": filter}),
    );
    assert!(err, "{v}");
    assert!(v.as_str().unwrap_or_default().contains("\"userid\""), "{v}");
}
