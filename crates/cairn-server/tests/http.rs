//! The server end to end over loopback HTTP: every route (and the spec listing exactly the
//! routes served), key isolation on every route, bad input, and deletion down to the index
//! files.
mod common;
mod inspect;
mod inspect_routes;
use common::{admin_config, mcp, mcp_init, ok, session, start, tool, Resp, ADMIN};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const SPACES: &str = "/v1/spaces";
const SPACE: &str = "/v1/spaces/{space}";
const STATS: &str = "/v1/stats";
const SPACE_STATS: &str = "/v1/spaces/{space}/stats";
const SESSIONS: &str = "/v1/spaces/{space}/sessions";
const BATCH: &str = "/v1/spaces/{space}/sessions/batch";
const SESSION: &str = "/v1/spaces/{space}/sessions/{session}";
const MESSAGE: &str = "/v1/spaces/{space}/sessions/{session}/messages/{message}";
const MESSAGES: &str = "/v1/spaces/{space}/messages";
const RECALL: &str = "/v1/spaces/{space}/recall";
const MEMORIES: &str = "/v1/spaces/{space}/memories";
const MEMORY: &str = "/v1/spaces/{space}/memories/{id}";
const EXPORT: &str = "/v1/spaces/{space}/export";
const IMPORT: &str = "/v1/spaces/{space}/import";
const GROUP: &str = "/v1/spaces/{space}/group-messages";
const TRAJECTORIES: &str = "/v1/spaces/{space}/trajectories";
const TRAJECTORY: &str = "/v1/spaces/{space}/trajectories/{id}";
const STATE: &str = "/v1/spaces/{space}/trajectories/{id}/states/{index}";
const HISTORY: &str = "/v1/spaces/{space}/history";
const SPEAKERS: &str = "/v1/spaces/{space}/speakers";
const PROFILE: &str = "/v1/spaces/{space}/profiles/{speaker}";
const ENTITIES: &str = "/v1/spaces/{space}/entities";
const ENTITY: &str = "/v1/spaces/{space}/entities/{name}";
const PARTITION: &str = "/v1/spaces/{space}/partitions/forget";

fn team_day() -> Value {
    json!({"messages": [
        {"speaker": "Maya", "group": "Atlas", "time": "2025-03-03 09:00", "text": "The budget for Project Atlas is $120,000."},
        {"speaker": "Priya", "group": "Atlas", "time": "2025-03-03 09:05", "text": "I'm the finance director, please send me the breakdown."},
        {"speaker": "Maya", "group": "Atlas", "time": "2025-03-10 14:00", "text": "Update: the Atlas budget has been cut to $100,000."}
    ]})
}

fn agent_run() -> Value {
    json!({"trajectories": [{"id": "coupon", "goal": "Create coupon SPRING10", "outcome": "failure",
    "states": [
        {"url": "http://shop/admin/coupons/new", "action": "click [63]", "accessibility_tree": "[61] textbox 'Code' value 'SPRING10'\n[63] button 'Save'"},
        {"url": "http://shop/admin/coupons/new", "accessibility_tree": "[64] alert 'The coupon code SPRING10 already exists.'"}
    ]}]})
}

#[test]
fn every_route_works_and_the_spec_lists_exactly_the_routes_served() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut s) = start(dir.path(), admin_config()) else {
        return;
    };
    let k = ADMIN;
    // Service routes need no key.
    let r = s.call("GET", "/v1/health", &[], "", None, None);
    assert_eq!(r.body["status"], "ok");
    let r = s.call("GET", "/v1/ready", &[], "", None, None);
    assert_eq!(r.body["status"], "ready");
    let spec = s.call("GET", "/v1/openapi.json", &[], "", None, None);
    assert_eq!(spec.body["openapi"], "3.1.0");

    let r = s.post(SPACES, &[], k, &json!({"name": "alice"}));
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(
        s.post(SPACES, &[], k, &json!({"name": "alice"})).status,
        200
    );
    let r = s.post(
        SESSIONS,
        &["alice"],
        k,
        &session(
            "pets",
            "I adopted a grey cat and named her Luna.",
            "Luna is a lovely name.",
            json!({"user_id": "u1", "agent_id": "a1"}),
        ),
    );
    ok(&r);
    assert_eq!(r.body["messages_added"], 2);
    let r = s.post(
        BATCH,
        &["alice"],
        k,
        &json!({"sessions": [
            session("trip", "I'm planning a trip to Kyoto in October.", "Visit Kiyomizu-dera early.", json!({"user_id": "u2"})),
            session("work", "My manager is called Ingrid.", "Noted.", json!({"user_id": "u1", "score": 5})),
        ]}),
    );
    ok(&r);
    assert_eq!(r.body["sessions"], 2);
    // Mem0-style add: create, then append to the same session.
    let r = s.post(
        MESSAGES,
        &["alice"],
        k,
        &json!({"session_id": "chat", "metadata": {"user_id": "u1"},
                "messages": [{"role": "user", "text": "My bike is a red Bianchi."}]}),
    );
    ok(&r);
    let r = s.post(
        MESSAGES,
        &["alice"],
        k,
        &json!({"session_id": "chat", "messages": [{"role": "assistant", "text": "A classic bike!"}]}),
    );
    ok(&r);
    assert_eq!(r.body["messages_added"], 1);
    let chat = s.get(SESSION, &["alice", "chat"], k);
    assert_eq!(
        chat.body["session"]["messages"].as_array().unwrap().len(),
        2
    );
    assert_eq!(chat.body["session"]["messages"][1]["id"], "1");

    // Recall with every option, and the metadata filter.
    let r = s.post(
        RECALL,
        &["alice"],
        k,
        &json!({"query": "my grey cat Luna", "top_k": 2}),
    );
    ok(&r);
    assert_eq!(r.body["hits"][0]["session_id"], "pets");
    assert!(r.body["context"].as_str().unwrap().contains("Luna"));
    let r = s.post(
        RECALL,
        &["alice"],
        k,
        &json!({"query": "cat Kyoto manager bike", "top_k": 10, "token_budget": 500,
                "format": "raw", "as_of": "2030-01-01", "kinds": ["round"],
                "speakers": ["user", "assistant"], "sessions": ["pets", "trip", "work"],
                "filter": {"user_id": "u1"}, "min_relevance": -1}),
    );
    ok(&r);
    let sessions: BTreeSet<&str> = r.body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session_id"].as_str().unwrap())
        .collect();
    assert!(
        !sessions.is_empty() && !sessions.contains("trip"),
        "{sessions:?}"
    );
    assert!(!r.body["context"].as_str().unwrap().contains("Kyoto"));
    let r = s.post(
        RECALL,
        &["alice"],
        k,
        &json!({"query": "anything", "top_k": 10,
                "filter": {"or": [{"field": "metadata.score", "op": "gte", "value": 5},
                                  {"field": "session_id", "op": "eq", "value": "trip"}]}}),
    );
    let sessions: BTreeSet<&str> = r.body["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session_id"].as_str().unwrap())
        .collect();
    assert!(
        sessions.iter().all(|s| ["work", "trip"].contains(s)),
        "{sessions:?}"
    );

    // Listings.
    let r = s.get(SPACES, &[], k);
    assert_eq!(r.body["spaces"], json!(["alice"]));
    let r = s.get(STATS, &[], k);
    assert_eq!(r.body["spaces"][0]["sessions"], 4);
    let r = s.get(SPACE_STATS, &["alice"], k);
    assert_eq!(r.body["messages"], 8);
    let r = s.call("GET", SESSIONS, &["alice"], "?limit=2", Some(k), None);
    assert_eq!(r.body["total"], 4);
    assert_eq!(r.body["items"].as_array().unwrap().len(), 2);
    assert_eq!(r.body["next_offset"], 2);
    let f = "%7B%22user_id%22%3A%22u1%22%7D"; // {"user_id":"u1"}
    let r = s.call(
        "GET",
        SESSIONS,
        &["alice"],
        &format!("?filter={f}"),
        Some(k),
        None,
    );
    assert_eq!(r.body["total"], 3, "{}", r.text);
    let r = s.call(
        "GET",
        MEMORIES,
        &["alice"],
        "?kind=round&limit=1",
        Some(k),
        None,
    );
    assert_eq!(r.body["items"][0]["kind"], "round");
    let rounds = r.body["total"].as_u64().unwrap();
    assert!(rounds >= 4 && r.body["next_offset"] == 1, "{}", r.text);
    let r = s.call(
        "GET",
        MEMORIES,
        &["alice"],
        &format!("?session_id=pets&speaker=user&since=2024-01-01&until=2024-12-31&filter={f}"),
        Some(k),
        None,
    );
    ok(&r);
    let items = r.body["items"].as_array().unwrap();
    assert!(!items.is_empty());
    assert!(items
        .iter()
        .all(|u| u["provenance"]["session_id"] == "pets"));
    let r = s.get(MEMORY, &["alice", "round:pets:0"], k);
    assert_eq!(r.body["provenance"]["message_ids"], json!(["0", "1"]));

    // Group chats, fact history, speakers and profiles.
    let r = s.post(GROUP, &["team"], k, &team_day());
    ok(&r);
    assert_eq!(r.body["messages_added"], 3);
    assert_eq!(r.body["sessions"], 2, "one session per group and day");
    let r = s.call(
        "GET",
        HISTORY,
        &["team"],
        "?subject=Atlas%20budget",
        Some(k),
        None,
    );
    ok(&r);
    let values: Vec<&str> = r.body["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["$120,000", "$100,000"]);
    let r = s.call(
        "GET",
        HISTORY,
        &["team"],
        "?subject=Atlas%20budget&as_of=2025-03-05",
        Some(k),
        None,
    );
    assert_eq!(r.body["versions"].as_array().unwrap().len(), 1);
    assert_eq!(
        s.call("GET", HISTORY, &["team"], "?subject=launch", Some(k), None)
            .status,
        404
    );
    assert_eq!(
        s.call("GET", HISTORY, &["team"], "", Some(k), None).status,
        422
    );
    let r = s.get(SPEAKERS, &["team"], k);
    assert_eq!(r.body["speakers"], json!(["Maya", "Priya"]));
    let r = s.get(PROFILE, &["team", "Priya"], k);
    assert_eq!(r.body["roles"][0]["what"], "finance director");
    assert_eq!(s.get(PROFILE, &["team", "Nobody"], k).status, 404);
    // The entity graph: "Atlas" is the project's short name; people are the speakers.
    let r = s.call("GET", ENTITIES, &["team"], "?q=atlas", Some(k), None);
    assert_eq!(r.body["entities"][0]["name"], "Project Atlas", "{}", r.text);
    assert_eq!(r.body["entities"][0]["aliases"], json!(["atlas"]));
    assert_eq!(r.body["entities"].as_array().unwrap().len(), 1);
    let r = s.get(ENTITY, &["team", "atlas"], k);
    let edges: Vec<&str> = r.body["mentions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["edge"].as_str().unwrap())
        .collect();
    let named = edges.iter().filter(|e| **e == "mention").count();
    assert_eq!(named, 2, "{}", r.text);
    assert!(edges.contains(&"fact_subject"), "{}", r.text);
    assert_eq!(r.body["relations"][0]["name"], "Maya", "{}", r.text);
    let r = s.call(
        "GET",
        ENTITY,
        &["team", "Priya"],
        "?as_of=2025-03-03T09:01:00Z",
        Some(k),
        None,
    );
    assert_eq!(r.status, 404, "Priya had not spoken yet: {}", r.text);
    let r = s.get(ENTITY, &["team", "Priya"], k);
    assert_eq!(r.body["kind"], "person");
    assert_eq!(s.get(ENTITY, &["team", "Nobody"], k).status, 404);
    let r = s.call(
        "GET",
        ENTITIES,
        &["team"],
        "?as_of=yesterday-ish",
        Some(k),
        None,
    );
    assert_eq!(r.status, 422, "{}", r.text);

    // Trajectories: insert (twice: no duplicate), manifest, one, one state, recall, delete.
    let r = s.post(TRAJECTORIES, &["agent"], k, &agent_run());
    ok(&r);
    assert_eq!(r.body["trajectories"], 1);
    assert_eq!(
        s.post(TRAJECTORIES, &["agent"], k, &agent_run()).body["unchanged"],
        1
    );
    let r = s.get(TRAJECTORIES, &["agent"], k);
    assert_eq!(r.body["trajectories"][0]["succeeded"], false);
    let r = s.get(TRAJECTORY, &["agent", "coupon"], k);
    assert_eq!(r.body["trajectory"]["states"].as_array().unwrap().len(), 2);
    let r = s.get(STATE, &["agent", "coupon", "1"], k);
    assert!(r.body["observation"]
        .as_str()
        .unwrap()
        .contains("already exists"));
    assert_eq!(s.get(STATE, &["agent", "coupon", "7"], k).status, 404);
    assert_eq!(s.get(STATE, &["agent", "coupon", "x"], k).status, 422);
    let r = s.post(
        RECALL,
        &["agent"],
        k,
        &json!({"query": "coupon code already exists", "kinds": ["note"], "quotas": {"note": 1}}),
    );
    assert_eq!(r.body["hits"][0]["trajectory_id"], "coupon", "{}", r.text);
    inspect::every_route(&s, k);
    let r = s.delete(TRAJECTORY, &["agent", "coupon"], k);
    ok(&r);
    assert!(r.body["removed_units"].as_u64().unwrap() >= 3);
    assert_eq!(s.get(TRAJECTORY, &["agent", "coupon"], k).status, 404);
    // Inspection: manifest, summary, state, span, match, search, context, recall +
    // inspection, the controller (and their MCP tools).
    inspect_routes::exercise(&s, k, "inspect");

    // Export, then import into a fresh space.
    let r = s.get(EXPORT, &["alice"], k);
    assert!(r.content_type.contains("ndjson"));
    let export = r.text.clone();
    assert_eq!(export.lines().count(), 4);
    let moved: String = export
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["space"] = json!("bob");
            v.to_string() + "\n"
        })
        .collect();
    let r = s.call(
        "POST",
        IMPORT,
        &["bob"],
        "",
        Some(k),
        Some(("application/x-ndjson", &moved)),
    );
    ok(&r);
    assert_eq!(r.body["sessions"], 4);
    let r = s.post(RECALL, &["bob"], k, &json!({"query": "cat name"}));
    assert_eq!(r.body["hits"][0]["session_id"], "pets");

    // Trajectories travel through export and import too.
    ok(&s.post(TRAJECTORIES, &["runs"], k, &agent_run()));
    let moved: String = s
        .get(EXPORT, &["runs"], k)
        .text
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["space"] = json!("runs2");
            v.to_string() + "\n"
        })
        .collect();
    let r = s.call(
        "POST",
        IMPORT,
        &["runs2"],
        "",
        Some(k),
        Some(("application/x-ndjson", &moved)),
    );
    ok(&r);
    assert_eq!(r.body["trajectories"], 1);
    ok(&s.get(TRAJECTORY, &["runs2", "coupon"], k));

    // Deletes: a memory (its messages), a message, a session, a space.
    let r = s.delete(MEMORY, &["bob", "turn:trip:1"], k);
    ok(&r);
    assert_eq!(r.body["forgotten_messages"], json!(["1"]));
    let r = s.get(SESSION, &["bob", "trip"], k);
    assert_eq!(r.body["session"]["messages"].as_array().unwrap().len(), 1);
    ok(&s.delete(MESSAGE, &["bob", "chat", "0"], k));
    ok(&s.delete(SESSION, &["bob", "work"], k));
    assert_eq!(s.get(SESSION, &["bob", "work"], k).status, 404);
    ok(&s.delete(SPACE, &["bob"], k));
    assert_eq!(s.get(SPACE_STATS, &["bob"], k).code(), "space_not_found");

    // MCP over streamable HTTP: handshake, tools, remember -> recall -> forget.
    let r = mcp_init(&s, k);
    assert_eq!(
        r.body["result"]["serverInfo"]["name"], "cairn",
        "{}",
        r.text
    );
    let r = mcp(&s, k, 2, "tools/list", json!({}));
    let names: BTreeSet<&str> = r.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut expected = BTreeSet::from([
        "entities", "forget", "history", "profile", "recall", "remember", "spaces", "subjects",
    ]);
    expected.extend(inspect_routes::TOOLS);
    assert_eq!(names, expected);
    // Every tool that reads takes the whole scope, as HTTP's recall does.
    let document = s.call("GET", "/v1/openapi.json", &[], "", None, None).body;
    let recall_fields: BTreeSet<String> = document["components"]["schemas"]["RecallRequest"]
        ["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for t in r.body["result"]["tools"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        if ["recall", "history", "profile", "subjects", "entities"].contains(&name) {
            let props = t["inputSchema"]["properties"].as_object().unwrap();
            for field in [
                "as_of",
                "since",
                "sessions",
                "speakers",
                "groups",
                "kinds",
                "filter",
                "partition",
            ] {
                assert!(props.contains_key(field), "{name} lacks {field}: {t}");
                assert!(recall_fields.contains(field), "HTTP recall lacks {field}");
            }
        }
    }
    // `?tools=memory`: a chat agent's connection gets the memory tools only.
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}});
    let r = s.call(
        "POST",
        "/mcp",
        &[],
        "?tools=memory",
        Some(k),
        Some(("application/json", &list.to_string())),
    );
    let memory_only: BTreeSet<&str> = r.body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(memory_only.len(), 8, "{}", r.text);
    assert!(memory_only.iter().all(|n| !n.starts_with("trajectory")));
    let r = s.call(
        "POST",
        "/mcp",
        &[],
        "?tools=some",
        Some(k),
        Some(("application/json", &list.to_string())),
    );
    assert!(r.text.contains("unknown tool set"), "{}", r.text);
    let (err, v) = tool(
        &s,
        k,
        "history",
        json!({"space": "team", "subject": "Atlas budget"}),
    );
    assert!(!err && v["versions"][1]["value"] == "$100,000", "{v}");
    let (err, v) = tool(
        &s,
        k,
        "profile",
        json!({"space": "team", "speaker": "Priya"}),
    );
    assert!(!err && v["roles"][0]["what"] == "finance director", "{v}");
    let (err, v) = tool(
        &s,
        k,
        "entities",
        json!({"space": "team", "search": "atlas"}),
    );
    assert!(!err && v["entities"][0]["name"] == "Project Atlas", "{v}");
    let (err, v) = tool(&s, k, "entities", json!({"space": "team", "name": "Maya"}));
    assert!(!err && v["kind"] == "person", "{v}");
    let (err, _) = tool(
        &s,
        k,
        "profile",
        json!({"space": "team", "speaker": "Nobody"}),
    );
    assert!(err);
    let (err, v) = tool(
        &s,
        k,
        "remember",
        json!({"space": "alice", "note": "The user's dentist is Dr. Okafor on Elm Street."}),
    );
    assert!(!err, "{v}");
    let note_session = v["session_id"].as_str().unwrap().to_string();
    let (err, v) = tool(
        &s,
        k,
        "recall",
        json!({"space": "alice", "query": "Who is my dentist?"}),
    );
    assert!(
        !err && v["context"].as_str().unwrap().contains("Okafor"),
        "{v}"
    );
    // Hits carry their relevance; a question nothing stored bears on is answered so.
    assert_eq!(v["no_relevant_memory"], false, "{v}");
    // A standing instruction noted for the user heads every later recall's context (in
    // a space of one user: alice's holds two partitions' statements, so it has no card).
    assert_eq!(
        s.post(SPACES, &[], k, &json!({"name": "carol"})).status,
        201
    );
    for note in [
        "From now on, always answer the user in metric units.",
        "The user walks to work every morning.",
    ] {
        let (err, v) = tool(&s, k, "remember", json!({"space": "carol", "note": note}));
        assert!(!err, "{v}");
    }
    let (err, card) = tool(
        &s,
        k,
        "recall",
        json!({"space": "carol", "query": "How far is the station?"}),
    );
    assert!(
        !err && card["card"][0]["category"] == "instruction",
        "{card}"
    );
    assert!(
        card["context"]
            .as_str()
            .unwrap()
            .starts_with("About the user:"),
        "{card}"
    );
    assert!(v["hits"][0]["relevance"].as_f64().is_some(), "{v}");
    let (err, v) = tool(
        &s,
        k,
        "recall",
        // A floor above the stock 0.2, which this small space's chat passes at 0.22.
        json!({"space": "alice", "query": "What is the capital of Mongolia?", "min_relevance": 0.3}),
    );
    assert!(!err && v["no_relevant_memory"] == true, "{v}");
    assert!(
        v["hits"].as_array().unwrap().is_empty() && v["context"] == "",
        "{v}"
    );
    let (err, _) = tool(
        &s,
        k,
        "forget",
        json!({"space": "alice", "session_id": note_session}),
    );
    assert!(!err);
    let (_, v) = tool(
        &s,
        k,
        "recall",
        json!({"space": "alice", "query": "dentist Okafor"}),
    );
    assert!(
        !v["context"].as_str().unwrap_or("").contains("Okafor"),
        "{v}"
    );

    // The key admin API (tests/pinned.rs holds what a pinned key does).
    let made = s.post(
        "/v1/keys",
        &[],
        k,
        &json!({"spaces": ["alice"], "partition": {"user_id": "u1"}}),
    );
    assert_eq!(made.status, 201, "{}", made.text);
    let id = made.body["id"].as_str().unwrap().to_string();
    let listed = s.call("GET", "/v1/keys", &[], "", Some(k), None);
    assert!(listed.text.contains(&id), "{}", listed.text);
    assert_eq!(s.delete("/v1/keys/{id}", &[&id], k).status, 200);

    // An end user with nothing stored: zeros, not 404.
    let r = s.post(
        PARTITION,
        &["alice"],
        k,
        &json!({"partition": {"user_id": "nobody"}}),
    );
    assert_eq!(
        r.body,
        json!({"sessions": 0, "messages": 0, "units": 0}),
        "{}",
        r.text
    );

    // Every route of the router was exercised, and the spec lists exactly those routes.
    let served: BTreeSet<(String, String)> = cairn_server::route_table(s.state.as_ref().unwrap())
        .into_iter()
        .map(|(m, p)| (m.to_string(), p.to_string()))
        .collect();
    let hit = s.hit.lock().unwrap().clone();
    let missing: Vec<_> = served.difference(&hit).collect();
    assert!(missing.is_empty(), "routes not exercised: {missing:?}");
    let mut in_spec = BTreeSet::new();
    for (path, ops) in spec.body["paths"].as_object().unwrap() {
        for method in ops.as_object().unwrap().keys() {
            in_spec.insert((method.to_uppercase(), path.clone()));
        }
    }
    assert_eq!(in_spec, served, "openapi.json and the router disagree");
    // What is served is what the code generates, and the checked-in file (the clients'
    // source of truth) is the same document.
    assert_eq!(&spec.body, cairn_server::openapi_document());
    let file: Value = serde_json::from_str(cairn_server::OPENAPI).unwrap();
    assert_eq!(file, spec.body);
    s.stop();
}

/// The checked-in `openapi.json` is, byte for byte, what the wire types and route
/// attributes generate; after changing them, write it again with
/// `cargo run --release -p cairn-server --example openapi > crates/cairn-server/openapi.json`.
#[test]
fn the_checked_in_spec_is_the_generated_one() {
    assert!(
        cairn_server::OPENAPI == cairn_server::openapi_text(),
        "crates/cairn-server/openapi.json differs from what the code generates; run \
         `cargo run --release -p cairn-server --example openapi > crates/cairn-server/openapi.json`"
    );
}

#[test]
fn a_key_sees_only_its_spaces_on_every_route() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s) = start(dir.path(), admin_config()) else {
        return;
    };
    let keys = &s.state.as_ref().unwrap().keys;
    let a = keys.create(&["a".into()], false, None, None).unwrap().token;
    let a_ro = keys.create(&["a".into()], true, None, None).unwrap().token;
    let b = keys.create(&["b".into()], false, None, None).unwrap().token;
    let secret = "The vault combination is 31-7-22.";
    ok(&s.post(
        SESSIONS,
        &["b"],
        &b,
        &session("s", secret, "Stored.", json!({})),
    ));
    ok(&s.post(
        SESSIONS,
        &["a"],
        &a,
        &session("s", "My favourite tea is oolong.", "Nice.", json!({})),
    ));

    // Key `a` on space `b`, through every route that names a space: always 403, never data.
    let sess = session("x", "hello there", "hi", json!({}));
    let attempts: Vec<Resp> = vec![
        s.post(SPACES, &[], &a, &json!({"name": "b"})),
        s.delete(SPACE, &["b"], &a),
        s.get(SPACE_STATS, &["b"], &a),
        s.post(SESSIONS, &["b"], &a, &sess),
        s.get(SESSIONS, &["b"], &a),
        s.post(BATCH, &["b"], &a, &json!({"sessions": [sess]})),
        s.get(SESSION, &["b", "s"], &a),
        s.delete(SESSION, &["b", "s"], &a),
        s.delete(MESSAGE, &["b", "s", "0"], &a),
        s.post(
            PARTITION,
            &["b"],
            &a,
            &json!({"partition": {"user_id": "u1"}}),
        ),
        s.post(
            MESSAGES,
            &["b"],
            &a,
            &json!({"session_id": "s", "messages": [{"role": "user", "text": "x"}]}),
        ),
        s.post(RECALL, &["b"], &a, &json!({"query": "vault combination"})),
        s.get(MEMORIES, &["b"], &a),
        s.get(MEMORY, &["b", "round:s:0"], &a),
        s.delete(MEMORY, &["b", "round:s:0"], &a),
        s.get(EXPORT, &["b"], &a),
        s.call(
            "POST",
            IMPORT,
            &["b"],
            "",
            Some(&a),
            Some(("application/x-ndjson", "")),
        ),
        s.post(GROUP, &["b"], &a, &team_day()),
        s.post(TRAJECTORIES, &["b"], &a, &agent_run()),
        s.get(TRAJECTORIES, &["b"], &a),
        s.get(TRAJECTORY, &["b", "coupon"], &a),
        s.get(STATE, &["b", "coupon", "0"], &a),
        s.delete(TRAJECTORY, &["b", "coupon"], &a),
        s.call("GET", HISTORY, &["b"], "?subject=vault", Some(&a), None),
        s.get(SPEAKERS, &["b"], &a),
        s.get(PROFILE, &["b", "user"], &a),
        s.get(ENTITIES, &["b"], &a),
        s.get(ENTITY, &["b", "user"], &a),
        // A space that does not exist is refused the same way: no probing for names.
        s.get(SPACE_STATS, &["nobody"], &a),
    ];
    let mut attempts: Vec<Resp> = attempts
        .into_iter()
        .chain(inspect::foreign_attempts(&s, &a))
        .collect();
    attempts.extend(inspect_routes::foreign(&s, &a));
    for r in &attempts {
        assert_eq!(r.status, 403, "{}", r.text);
        assert_eq!(r.code(), "forbidden");
        assert!(!r.text.contains("31-7-22"));
    }
    // Listings show only the key's spaces.
    assert_eq!(s.get(SPACES, &[], &a).body["spaces"], json!(["a"]));
    let stats = s.get(STATS, &[], &a);
    assert_eq!(stats.body["spaces"].as_array().unwrap().len(), 1);
    assert_eq!(stats.body["spaces"][0]["space"], "a");
    // MCP tools obey the same scope.
    ok(&mcp_init(&s, &a));
    let (err, v) = tool(
        &s,
        &a,
        "recall",
        json!({"space": "b", "query": "vault combination"}),
    );
    assert!(err && !v.to_string().contains("31-7-22"), "{v}");
    let (err, _) = tool(&s, &a, "remember", json!({"space": "b", "note": "planted"}));
    assert!(err);
    let (err, _) = tool(&s, &a, "forget", json!({"space": "b", "session_id": "s"}));
    assert!(err);
    let (err, v) = tool(&s, &a, "profile", json!({"space": "b", "speaker": "user"}));
    assert!(err && !v.to_string().contains("31-7-22"), "{v}");
    let (err, _) = tool(&s, &a, "history", json!({"space": "b", "subject": "vault"}));
    assert!(err);
    let (err, _) = tool(&s, &a, "entities", json!({"space": "b"}));
    assert!(err);
    inspect::me_is_scoped(&s, &a, |name, args| tool(&s, &a, name, args));
    inspect_routes::foreign_tools(&s, &a, "31-7-22");
    // Read-only keys read but never write.
    ok(&s.post(RECALL, &["a"], &a_ro, &json!({"query": "tea"})));
    let r = s.post(SESSIONS, &["a"], &a_ro, &sess);
    assert_eq!((r.status, r.code()), (403, "read_only_key"));
    assert_eq!(
        s.delete(SESSION, &["a", "s"], &a_ro).code(),
        "read_only_key"
    );
    let r = s.post(
        PARTITION,
        &["a"],
        &a_ro,
        &json!({"partition": {"user_id": "u1"}}),
    );
    assert_eq!(r.code(), "read_only_key");
    // No key, a forged key, a revoked key: 401 on every guarded route.
    assert_eq!(s.call("GET", SPACES, &[], "", None, None).status, 401);
    // Change the last character (to one it is not: the key is random).
    let last = if a.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &a[..a.len() - 1]);
    assert_eq!(s.get(SPACES, &[], &forged).status, 401);
    let id = a.split('_').nth(1).unwrap();
    assert!(keys.revoke(id).unwrap());
    assert_eq!(s.get(SPACES, &[], &a).code(), "unauthorized");
    let r = s.call(
        "POST",
        "/mcp",
        &[],
        "",
        None,
        Some(("application/json", "{}")),
    );
    assert_eq!(r.status, 401);
    // Nothing of b leaked: b still holds its secret, untouched.
    let r = s.post(RECALL, &["b"], &b, &json!({"query": "vault combination"}));
    assert!(r.body["context"].as_str().unwrap().contains("31-7-22"));
}

#[test]
fn bad_input_gets_problem_details_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = admin_config();
    config.limits.max_body_bytes = 64 * 1024;
    config.limits.max_batch_sessions = 3;
    config.limits.max_text_bytes = 1000;
    let Some(s) = start(dir.path(), config) else {
        return;
    };
    let k = ADMIN;
    ok(&s.post(
        SESSIONS,
        &["a"],
        k,
        &session("s1", "hello", "hi", json!({})),
    ));
    let raw = |template: &str, args: &[&str], ctype: &str, body: &str| {
        s.call("POST", template, args, "", Some(k), Some((ctype, body)))
    };
    let check = |r: Resp, status: u16, code: &str, field: Option<&str>| {
        assert_eq!(r.status, status, "{}", r.text);
        assert_eq!(r.code(), code, "{}", r.text);
        assert!(
            r.content_type.starts_with("application/problem+json"),
            "{}",
            r.content_type
        );
        assert_eq!(r.body["status"], status);
        if let Some(f) = field {
            assert_eq!(r.body["field"], f, "{}", r.text);
        }
    };
    check(
        raw(RECALL, &["a"], "application/json", "{\"query\": "),
        400,
        "malformed_json",
        None,
    );
    check(
        raw(RECALL, &["a"], "application/json", "{\"query\": \"x\"} {}"),
        400,
        "malformed_json",
        None,
    );
    check(
        raw(RECALL, &["a"], "text/plain", "{\"query\": \"x\"}"),
        415,
        "unsupported_media_type",
        None,
    );
    check(
        s.post(RECALL, &["a"], k, &json!({"query": "x", "top_k": "five"})),
        422,
        "invalid_field",
        Some("top_k"),
    );
    check(
        s.post(RECALL, &["a"], k, &json!({"query": "x", "topk": 5})),
        422,
        "invalid_field",
        None,
    );
    check(
        s.post(RECALL, &["a"], k, &json!({"top_k": 5})),
        422,
        "invalid_field",
        None,
    );
    // A body without a scope names an unknown field as unknown, whatever its name.
    let r = s.post(SPACES, &[], k, &json!({"name": "x", "sessions": 5}));
    assert!(r.text.contains("unknown field `sessions`"), "{}", r.text);
    check(r, 422, "invalid_field", None);
    // The scope's fields are flattened into the request and still named when wrong.
    check(
        s.post(RECALL, &["a"], k, &json!({"query": "x", "sessions": 5})),
        422,
        "invalid_field",
        Some("sessions"),
    );
    check(
        s.post(
            RECALL,
            &["a"],
            k,
            &json!({"query": "x", "kinds": ["nonsense"]}),
        ),
        422,
        "invalid_field",
        Some("kinds[0]"),
    );
    check(
        s.post(RECALL, &["a"], k, &json!({"query": "x", "top_k": 0})),
        422,
        "invalid_input",
        Some("top_k"),
    );
    check(
        s.post(
            RECALL,
            &["a"],
            k,
            &json!({"query": "x", "as_of": "someday"}),
        ),
        422,
        "invalid_input",
        Some("as_of"),
    );
    check(
        s.post(
            RECALL,
            &["a"],
            k,
            &json!({"query": "x", "filter": {"score": {"near": 1}}}),
        ),
        422,
        "invalid_input",
        Some("filter.score.near"),
    );
    check(
        s.post(RECALL, &["a"], k, &json!({"query": "  "})),
        422,
        "invalid_input",
        None,
    );
    check(
        s.post(RECALL, &["nobody"], k, &json!({"query": "x"})),
        404,
        "space_not_found",
        None,
    );
    check(
        s.get(SPACE_STATS, &["nobody"], k),
        404,
        "space_not_found",
        None,
    );
    check(s.get(SESSION, &["a", "nope"], k), 404, "not_found", None);
    check(
        s.get(MEMORY, &["a", "round:nope:0"], k),
        404,
        "memory_not_found",
        None,
    );
    check(s.delete(SESSION, &["a", "nope"], k), 404, "not_found", None);
    check(
        s.post(SPACES, &[], k, &json!({"name": "no spaces!"})),
        422,
        "invalid_input",
        Some("name"),
    );
    check(
        s.post(
            SESSIONS,
            &["a"],
            k,
            &json!({"id": "s2", "messages": [{"role": "user", "text": 42}]}),
        ),
        422,
        "invalid_field",
        Some("messages[0].text"),
    );
    check(
        s.post(
            SESSIONS,
            &["a"],
            k,
            &json!({"id": "s2", "messages": [{"role": "user", "text": " "}]}),
        ),
        422,
        "invalid_input",
        None,
    );
    // Changing a stored session is a conflict, not a silent rewrite.
    check(
        s.post(
            SESSIONS,
            &["a"],
            k,
            &session("s1", "goodbye", "bye", json!({})),
        ),
        409,
        "conflict",
        None,
    );
    check(
        s.post(
            SESSIONS,
            &["a"],
            k,
            &session("s3", &"x".repeat(1001), "ok", json!({})),
        ),
        413,
        "text_too_long",
        Some("messages[0].text"),
    );
    let many: Vec<Value> = (0..4)
        .map(|i| session(&format!("m{i}"), "hi", "ho", json!({})))
        .collect();
    check(
        s.post(BATCH, &["a"], k, &json!({"sessions": many})),
        413,
        "batch_too_large",
        Some("sessions"),
    );
    let huge = json!({"query": "y".repeat(70 * 1024)});
    check(
        s.post(RECALL, &["a"], k, &huge),
        413,
        "payload_too_large",
        None,
    );
    check(
        raw(
            IMPORT,
            &["a"],
            "application/x-ndjson",
            "{\"not\": \"a record\"}\n",
        ),
        422,
        "invalid_input",
        Some("lines[0]"),
    );
    check(
        s.call("GET", MEMORIES, &["a"], "?limit=abc", Some(k), None),
        422,
        "invalid_query",
        None,
    );
    check(
        s.call("GET", MEMORIES, &["a"], "?kind=dragon", Some(k), None),
        422,
        "invalid_input",
        Some("kind"),
    );
    check(
        s.call("GET", MEMORIES, &["a"], "?filter=%7Bnope", Some(k), None),
        422,
        "invalid_input",
        Some("filter"),
    );
    check(
        s.call("GET", "/v1/nowhere", &[], "", Some(k), None),
        404,
        "route_not_found",
        None,
    );
    check(
        s.call("PUT", SPACES, &[], "", Some(k), None),
        405,
        "method_not_allowed",
        None,
    );
    // After all that, the store is intact.
    let r = s.get(SPACE_STATS, &["a"], k);
    assert_eq!(r.body["sessions"], 1);
}

#[test]
fn forgetting_leaves_nothing_in_the_index_files() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut s) = start(dir.path(), admin_config()) else {
        return;
    };
    let k = ADMIN;
    let secret = "My passport number is QX4417-ZEBRA, keep it safe.";
    ok(&s.post(
        SESSIONS,
        &["a"],
        k,
        &session("secret", secret, "I will remember QX4417-ZEBRA.", json!({})),
    ));
    ok(&s.post(
        SESSIONS,
        &["a"],
        k,
        &session("keep", "I like green tea.", "Green tea is nice.", json!({})),
    ));
    let units: Vec<String> = s
        .call(
            "GET",
            MEMORIES,
            &["a"],
            "?session_id=secret&kind=all",
            Some(k),
            None,
        )
        .body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["id"].as_str().unwrap().to_string())
        .collect();
    assert!(units.len() >= 3, "{units:?}");
    // By default the listing shows memories as a user thinks of them: one per message
    // (and fact), not the rounds and episodes derived for recall.
    let memories = s.call("GET", MEMORIES, &["a"], "?session_id=secret", Some(k), None);
    let kinds: Vec<&str> = memories.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "turn").count(),
        2,
        "{kinds:?}"
    );
    assert!(
        kinds.iter().all(|k| ["turn", "fact", "note"].contains(k)),
        "{kinds:?}"
    );
    assert!(kinds.len() < units.len());
    let embed_texts: Vec<String> = units
        .iter()
        .filter_map(|id| {
            s.get(MEMORY, &["a", id], k).body["embed_text"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert!(!embed_texts.is_empty());
    let memory = s.state.as_ref().unwrap().memory.clone();
    let model = memory.embedder().model_id().to_string();
    let probe = memory.embedder().embed(&[secret]).unwrap().remove(0);
    drop(memory);

    let r = s.delete(SESSION, &["a", "secret"], k);
    assert_eq!(
        r.body["removed_units"].as_u64().unwrap() as usize,
        units.len()
    );
    let r = s.post(
        RECALL,
        &["a"],
        k,
        &json!({"query": "passport number QX4417-ZEBRA", "top_k": 20}),
    );
    assert!(!r.text.contains("QX4417"), "{}", r.text);
    s.stop();

    // Open the files directly: no index returns anything of the forgotten session.
    use cairn_core_traits::*;
    let store = cairn_store::EmbeddedStore::open(dir.path(), &model).unwrap();
    let space = cairn::SpaceId::new("a").unwrap();
    let lexical = store
        .text
        .search(&TextQuery {
            space: &space,
            text: "passport QX4417 ZEBRA",
            kinds: None,
            sessions: None,
            text_weight: 1.0,
            limit: 100,
        })
        .unwrap();
    assert!(
        lexical.iter().all(|(id, _)| !units.contains(id)),
        "{lexical:?}"
    );
    let dense = store.vectors.search(&space, &probe, 100).unwrap();
    assert!(!dense.is_empty(), "the kept session is still searchable");
    assert!(dense.iter().all(|(id, _)| !units.contains(id)), "{dense:?}");
    assert!(store.records.units(&space, &units).unwrap().is_empty());
    assert!(store
        .records
        .get_session(&space, "secret")
        .unwrap()
        .is_none());
    let cache = cairn_store::SqliteEmbeddingCache::open(
        &cairn_store::EmbeddedStore::default_cache_path(dir.path()),
    )
    .unwrap();
    let keys: Vec<[u8; 32]> = embed_texts
        .iter()
        .map(|t| cairn_engine::cache_key_in(Some(&space), t))
        .collect();
    assert!(
        cache
            .get(&model, &keys)
            .unwrap()
            .iter()
            .all(Option::is_none),
        "cached vectors of the forgotten text remain"
    );
    let record_file = std::fs::read(dir.path().join("records.sqlite3")).unwrap();
    assert!(
        !String::from_utf8_lossy(&record_file).contains("QX4417"),
        "the record file still holds the text"
    );
}

/// The traits the store implements, for the direct reads above.
mod cairn_core_traits {
    pub use cairn_core::{EmbeddingCache, RecordStore, TextIndex, TextQuery, VectorIndex};
}

#[test]
fn concurrent_writes_and_reads_of_different_spaces_all_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s) = start(dir.path(), admin_config()) else {
        return;
    };
    let k = ADMIN;
    ok(&s.post(
        SESSIONS,
        &["r"],
        k,
        &session("s", "The boat is named Albatross.", "Nice.", json!({})),
    ));
    std::thread::scope(|scope| {
        for w in 0..4 {
            let s = &s;
            scope.spawn(move || {
                for i in 0..5 {
                    let id = format!("w{w}-{i}");
                    let r = s.post(
                        MESSAGES,
                        &[&format!("w{w}")],
                        k,
                        &json!({"session_id": "log", "messages": [{"role": "user", "text": format!("entry {id}")}]}),
                    );
                    ok(&r);
                }
            });
        }
        for _ in 0..4 {
            let s = &s;
            scope.spawn(move || {
                for _ in 0..5 {
                    let r = s.post(RECALL, &["r"], k, &json!({"query": "boat name"}));
                    assert!(r.body["context"].as_str().unwrap().contains("Albatross"));
                }
            });
        }
    });
    for w in 0..4 {
        let r = s.get(SESSION, &[&format!("w{w}"), "log"], k);
        assert_eq!(
            r.body["session"]["messages"].as_array().unwrap().len(),
            5,
            "{}",
            r.text
        );
    }
}

/// Issue 53 over HTTP: forgetting an end user answers what went (zeros for a user with
/// nothing, not 404), leaves nothing of theirs in any answer, and refuses a bad partition
/// naming the field; forgetting a message with `exchange=true` takes its reply.
#[test]
fn forgetting_a_user_and_an_exchange_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let Some(s) = start(dir.path(), admin_config()) else {
        return;
    };
    let k = ADMIN;
    for (id, user, text, reply) in [
        ("a1", "u1", "My locker code is zuvefadi.", "Noted zuvefadi."),
        ("a2", "u1", "I moved to Zorvantha.", "Welcome to Zorvantha!"),
        ("b1", "u2", "My locker code is zobakilu.", "Noted."),
    ] {
        ok(&s.post(
            SESSIONS,
            &["p"],
            k,
            &session(id, text, reply, json!({"user_id": user})),
        ));
    }
    let r = s.post(
        PARTITION,
        &["p"],
        k,
        &json!({"partition": {"user_id": "u1"}}),
    );
    ok(&r);
    assert_eq!(
        r.body,
        json!({"sessions": 2, "messages": 4, "units": r.body["units"]})
    );
    assert!(r.body["units"].as_u64().unwrap() > 0, "{}", r.text);
    let r = s.post(
        PARTITION,
        &["p"],
        k,
        &json!({"partition": {"user_id": "u1"}}),
    );
    assert_eq!(
        (r.status, r.body.clone()),
        (200, json!({"sessions": 0, "messages": 0, "units": 0}))
    );
    let shown = [
        s.post(
            RECALL,
            &["p"],
            k,
            &json!({"query": "locker code Zorvantha", "top_k": 20}),
        )
        .text,
        s.call("GET", MEMORIES, &["p"], "?kind=all", Some(k), None)
            .text,
        s.get(EXPORT, &["p"], k).text,
        s.get(ENTITIES, &["p"], k).text,
    ]
    .concat();
    assert!(
        !shown.contains("zuvefadi") && !shown.contains("Zorvantha"),
        "{shown}"
    );
    assert!(shown.contains("zobakilu"));
    for body in [
        json!({"partition": {"email": "x"}}),
        json!({"partition": {}}),
        json!({"partition": "u1"}),
    ] {
        let r = s.post(PARTITION, &["p"], k, &body);
        assert_eq!(r.status, 422, "{body}: {}", r.text);
        assert_eq!(r.body["field"], "partition", "{body}: {}", r.text);
    }
    assert_eq!(s.post(PARTITION, &["p"], k, &json!({})).status, 422);
    assert_eq!(
        s.post(
            PARTITION,
            &["nobody"],
            k,
            &json!({"partition": {"user_id": "u1"}})
        )
        .status,
        404
    );
    // An exchange: the message and the reply to it.
    ok(&s.post(
        SESSIONS,
        &["p"],
        k,
        &json!({"id": "move", "messages": [
        {"role": "user", "text": "I moved to Lisbon."},
        {"role": "assistant", "text": "Congratulations on the move to Lisbon!"},
        {"role": "user", "text": "Thanks."}]}),
    ));
    let r = s.call(
        "DELETE",
        MESSAGE,
        &["p", "move", "0"],
        "?exchange=true",
        Some(k),
        None,
    );
    ok(&r);
    assert_eq!(
        r.body["forgotten_messages"],
        json!(["0", "1"]),
        "{}",
        r.text
    );
    assert_eq!(r.body["forgotten_session"], false);
    let shown = [
        s.get(EXPORT, &["p"], k).text,
        s.get(ENTITIES, &["p"], k).text,
    ]
    .concat();
    assert!(!shown.contains("Lisbon"), "{shown}");
    let r = s.delete(MESSAGE, &["p", "move", "2"], k);
    assert_eq!(r.body["forgotten_messages"], json!(["2"]), "{}", r.text);
    assert_eq!(r.body["forgotten_session"], true);
    // The MCP tool forgets an exchange too, and refuses `exchange` without a message.
    ok(&s.post(
        SESSIONS,
        &["p"],
        k,
        &session(
            "pet",
            "My cat is Pixelwhisk.",
            "Pixelwhisk is cute!",
            json!({}),
        ),
    ));
    ok(&mcp_init(&s, k));
    let args = json!({"space": "p", "session_id": "pet", "message_id": "0", "exchange": true});
    let (err, v) = tool(&s, k, "forget", args);
    assert!(!err && v["forgotten_messages"] == json!(["0", "1"]), "{v}");
    assert!(!s.get(EXPORT, &["p"], k).text.contains("Pixelwhisk"));
    let (err, _) = tool(
        &s,
        k,
        "forget",
        json!({"space": "p", "session_id": "b1", "exchange": true}),
    );
    assert!(err);
}
