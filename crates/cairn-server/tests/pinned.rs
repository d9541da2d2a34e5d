//! Keys pinned to an end user's partition (issue 53): what the canary test does not show
//! by content. The admin alone makes keys; a pinned key's writes are tagged with its
//! partition and cannot name another; records of other partitions are absent to it on
//! every route that takes one (by id too, forgets included); every route that reads or
//! writes the whole space refuses it; import tags and export holds its partition only.
mod common;
use cairn::{Memory, MemoryConfig};
use cairn_testkit::HashEmbedder;
use common::{serve, tool, Server, ADMIN};
use serde_json::{json, Value};
use std::sync::Arc;

fn session(id: &str, user: Option<&str>, text: &str) -> Value {
    let mut s = json!({"id": id, "date": "2024-03-01",
                       "messages": [{"role": "user", "text": text}]});
    if let Some(u) = user {
        s["metadata"] = json!({"user_id": u});
    }
    s
}

fn get(s: &Server, route: &str, args: &[&str], q: &str, key: &str) -> common::Resp {
    s.call("GET", route, args, q, Some(key), None)
}

/// The session `id` of `app` (read with the admin key) is tagged with user u1.
fn assert_tagged_u1(s: &Server, id: &str) {
    let stored = get(
        s,
        "/v1/spaces/{space}/sessions/{session}",
        &["app", id],
        "",
        ADMIN,
    );
    assert_eq!(
        stored.body["session"]["metadata"],
        json!({"user_id": "u1"}),
        "{}",
        stored.text
    );
}

/// One export line imported into `app` through `key`.
fn import(s: &Server, key: &str, line: &Value) -> common::Resp {
    s.call(
        "POST",
        "/v1/spaces/{space}/import",
        &["app"],
        "",
        Some(key),
        Some(("application/x-ndjson", &format!("{line}\n"))),
    )
}

fn pinned_key(s: &Server, user: &str) -> String {
    let r = s.post(
        "/v1/keys",
        &[],
        ADMIN,
        &json!({"spaces": ["app"], "partition": {"user_id": user}, "label": user}),
    );
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["partition"], json!({"user_id": user}));
    r.body["token"].as_str().unwrap().to_string()
}

fn server() -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let memory =
        Memory::open_with_embedder(dir.path(), MemoryConfig::default(), Arc::new(HashEmbedder))
            .unwrap();
    let s = serve(memory, common::admin_config());
    let batch = json!({"sessions": [
        session("a1", Some("u1"), "My locker code is zqone."),
        session("b1", Some("u2"), "My locker code is zqtwo."),
        session("n1", None, "My locker code is zqnone."),
    ]});
    let r = s.post("/v1/spaces/{space}/sessions/batch", &["app"], ADMIN, &batch);
    assert!(r.status < 300, "{}", r.text);
    (dir, s)
}

#[test]
fn only_the_admin_key_manages_keys() {
    let (_dir, s) = server();
    let k = pinned_key(&s, "u1");
    let whole = s.post("/v1/keys", &[], ADMIN, &json!({"spaces": ["app"]}));
    assert_eq!(whole.status, 201, "{}", whole.text);
    let whole = whole.body["token"].as_str().unwrap().to_string();
    for key in [k.as_str(), whole.as_str()] {
        let r = s.post("/v1/keys", &[], key, &json!({"spaces": ["app"]}));
        assert_eq!((r.status, r.code()), (403, "admin_only"), "{}", r.text);
        assert_eq!(get(&s, "/v1/keys", &[], "", key).status, 403);
    }
    let bad = s.post(
        "/v1/keys",
        &[],
        ADMIN,
        &json!({"spaces": ["app"], "partition": {"userid": "u1"}}),
    );
    assert_eq!(bad.status, 422, "{}", bad.text);
    assert_eq!(bad.body["field"], "partition", "{}", bad.text);
    let listed = get(&s, "/v1/keys", &[], "", ADMIN);
    let id = listed.body[0]["id"].as_str().unwrap().to_string();
    assert_eq!(listed.body[0]["partition"], json!({"user_id": "u1"}));
    assert_eq!(listed.body[1]["partition"], json!(null));
    assert!(!listed.text.contains(&k), "a listing never holds a token");
    assert_eq!(s.delete("/v1/keys/{id}", &[&id], ADMIN).status, 200);
    assert_eq!(get(&s, "/v1/me", &[], "", &k).status, 401, "revoked");
    assert_eq!(s.delete("/v1/keys/{id}", &[&id], ADMIN).status, 404);
}

#[test]
fn a_pinned_key_reads_its_partition_whatever_the_request_says() {
    let (_dir, s) = server();
    let k = pinned_key(&s, "u1");
    let me = get(&s, "/v1/me", &[], "", &k);
    assert_eq!(
        me.body["partition"],
        json!({"user_id": "u1"}),
        "{}",
        me.text
    );
    let recall = |body: Value| s.post("/v1/spaces/{space}/recall", &["app"], &k, &body);
    for filter in [json!(null), json!({}), json!({"user_id": "u2"})] {
        let r = recall(
            json!({"query": "locker code", "top_k": 20, "min_relevance": -1,
                              "filter": filter}),
        );
        assert_eq!(r.status, 200, "{}", r.text);
        assert!(
            !r.text.contains("zqtwo") && !r.text.contains("zqnone"),
            "{}",
            r.text
        );
        assert_eq!(r.text.contains("zqone"), filter != json!({"user_id": "u2"}));
    }
    let r = recall(json!({"query": "locker code", "partition": {"user_id": "u2"}}));
    assert_eq!(
        (r.status, r.code()),
        (403, "outside_partition"),
        "{}",
        r.text
    );
    // Listings and records by id.
    let m = get(&s, "/v1/spaces/{space}/memories", &["app"], "", &k);
    assert_eq!(m.body["total"], 1, "{}", m.text);
    for (route, args) in [
        ("/v1/spaces/{space}/sessions/{session}", vec!["app", "b1"]),
        (
            "/v1/spaces/{space}/sessions/{session}/units",
            vec!["app", "n1"],
        ),
        ("/v1/spaces/{space}/memories/{id}", vec!["app", "turn:b1:0"]),
    ] {
        let r = get(&s, route, &args, "", &k);
        assert_eq!(r.status, 404, "{route}: {}", r.text);
    }
    let export = get(&s, "/v1/spaces/{space}/export", &["app"], "", &k);
    assert!(export.text.contains("zqone") && !export.text.contains("zqtwo"));
    // Over MCP (HTTP, the same key).
    let (err, v) = tool(
        &s,
        &k,
        "recall",
        json!({"space": "app", "query": "locker code", "top_k": 20, "min_relevance": -1}),
    );
    assert!(!err && !v.to_string().contains("zqtwo"), "{v}");
    assert!(v.to_string().contains("zqone"), "{v}");
    // Routes of the whole space refuse it.
    for (route, args) in [
        ("/v1/spaces/{space}/stats", vec!["app"]),
        ("/v1/spaces/{space}/trajectories", vec!["app"]),
    ] {
        let r = get(&s, route, &args, "", &k);
        assert_eq!(
            (r.status, r.code()),
            (403, "pinned_key"),
            "{route}: {}",
            r.text
        );
    }
    let r = s.delete("/v1/spaces/{space}", &["app"], &k);
    assert_eq!((r.status, r.code()), (403, "pinned_key"), "{}", r.text);
}

#[test]
fn a_pinned_key_writes_into_its_partition_and_forgets_only_there() {
    let (_dir, s) = server();
    let k = pinned_key(&s, "u1");
    let r = s.post(
        "/v1/spaces/{space}/messages",
        &["app"],
        &k,
        &json!({"session_id": "p1", "messages": [{"role": "user", "text": "I moved to Oslo."}]}),
    );
    assert!(r.status < 300, "{}", r.text);
    assert_tagged_u1(&s, "p1");
    let r = s.post(
        "/v1/spaces/{space}/sessions",
        &["app"],
        &k,
        &session("p2", Some("u2"), "I am someone else."),
    );
    assert_eq!(r.status, 422, "{}", r.text);
    assert_eq!(r.body["field"], "metadata.user_id", "{}", r.text);
    // Appending to another partition's session is refused (its metadata is not the key's).
    let r = s.post(
        "/v1/spaces/{space}/messages",
        &["app"],
        &k,
        &json!({"session_id": "b1", "messages": [{"role": "user", "text": "mine now"}]}),
    );
    assert!(r.status >= 400, "{}", r.text);
    assert!(!r.text.contains("zqtwo"), "{}", r.text);
    // Forgets of another partition's records are absent, and leave them be.
    assert_eq!(
        s.delete("/v1/spaces/{space}/sessions/{session}", &["app", "b1"], &k)
            .status,
        404
    );
    assert_eq!(
        s.delete(
            "/v1/spaces/{space}/memories/{id}",
            &["app", "turn:b1:0"],
            &k
        )
        .status,
        404
    );
    let (err, _) = tool(
        &s,
        &k,
        "forget",
        json!({"space": "app", "session_id": "n1"}),
    );
    assert!(err);
    let b1 = get(
        &s,
        "/v1/spaces/{space}/sessions/{session}",
        &["app", "b1"],
        "",
        ADMIN,
    );
    assert_eq!(b1.status, 200);
    assert_eq!(
        s.delete("/v1/spaces/{space}/sessions/{session}", &["app", "a1"], &k)
            .status,
        200
    );
    // Forgetting a user: its own partition only.
    let forget = |user: &str| {
        s.post(
            "/v1/spaces/{space}/partitions/forget",
            &["app"],
            &k,
            &json!({"partition": {"user_id": user}}),
        )
    };
    let r = forget("u2");
    assert_eq!(
        (r.status, r.code()),
        (403, "outside_partition"),
        "{}",
        r.text
    );
    let (err, v) = tool(
        &s,
        &k,
        "forget",
        json!({"space": "app", "partition": {"user_id": "u2"}}),
    );
    assert!(err && v.to_string().contains("outside_partition"), "{v}");
    let r = forget("u1");
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["sessions"], 1, "p1 (a1 went above): {}", r.text);
    // MCP remember through the key is tagged too, and cannot name another user.
    let (err, v) = tool(
        &s,
        &k,
        "remember",
        json!({"space": "app", "note": "I like tea."}),
    );
    assert!(!err, "{v}");
    let note = v["session_id"].as_str().unwrap().to_string();
    assert_tagged_u1(&s, &note);
    let (err, _) = tool(
        &s,
        &k,
        "remember",
        json!({"space": "app", "note": "x", "metadata": {"user_id": "u2"}}),
    );
    assert!(err);
    // Over MCP, a user forgets themself whole.
    let (err, v) = tool(
        &s,
        &k,
        "forget",
        json!({"space": "app", "partition": {"user_id": "u1"}}),
    );
    assert!(!err && v["sessions"] == 1, "the note above: {v}");
    // Import: sessions tagged, a trajectory line refused.
    let line = json!({"space": "elsewhere", "recorded_at": "2024-03-01T00:00:00Z",
                      "session": {"id": "imp", "messages": [{"role": "user", "text": "imported"}]}});
    let r = import(&s, &k, &line);
    assert!(r.status < 300, "{}", r.text);
    assert_tagged_u1(&s, "imp");
    let traj = json!({"space": "x", "recorded_at": "2024-03-01T00:00:00Z",
                      "trajectory": {"id": "t", "goal": "g", "states": []}});
    let r = import(&s, &k, &traj);
    assert_eq!(r.status, 422, "{}", r.text);
}
