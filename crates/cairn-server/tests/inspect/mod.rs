//! The inspector's routes (`/ui`, `/v1/me`, fact subjects, units of a session or a
//! trajectory), recall's `explain`, the stats fields the inspector shows, and the MCP
//! tools over them; called from `http.rs`, whose spec test needs every route exercised.
use crate::common::{Resp, Server};
use serde_json::{json, Value};

const UI: &str = "/ui";
const UI_SLASH: &str = "/ui/";
const UI_FILE: &str = "/ui/{file}";
const ME: &str = "/v1/me";
const SUBJECTS: &str = "/v1/spaces/{space}/subjects";
const SESSION_UNITS: &str = "/v1/spaces/{space}/sessions/{session}/units";
const TRAJECTORY_UNITS: &str = "/v1/spaces/{space}/trajectories/{id}/units";

fn ok(r: &Resp) {
    assert!(r.status < 300, "{} {}", r.status, r.text);
}

/// Every inspector route with the admin key `k`, on the data the spec test wrote:
/// sessions in `alice`, group days in `team`, the trajectory `coupon` in `agent`.
pub fn every_route(s: &Server, k: &str) {
    let page = s.call("GET", UI, &[], "", None, None);
    assert_eq!(page.status, 200, "no key is needed for the page");
    assert!(page.content_type.starts_with("text/html"));
    assert!(page.text.contains("/ui/app.js"));
    ok(&s.call("GET", UI_SLASH, &[], "", None, None));
    let js = s.call("GET", UI_FILE, &["app.js"], "", None, None);
    assert_eq!(js.content_type, "text/javascript; charset=utf-8");
    assert_eq!(
        s.call("GET", UI_FILE, &["secrets.txt"], "", None, None)
            .status,
        404
    );

    let me = s.get(ME, &[], k);
    assert_eq!(me.body["admin"], true, "{}", me.text);
    assert_eq!(me.body["read_only"], false);
    let spaces = me.body["spaces"].as_array().unwrap();
    assert!(spaces.contains(&json!("alice")) && spaces.contains(&json!("team")));

    let r = s.get(SUBJECTS, &["team"], k);
    let budget = r.body["subjects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["subject"].as_str().unwrap().contains("budget"))
        .cloned()
        .unwrap_or_else(|| panic!("{}", r.text));
    assert_eq!(budget["versions"], 2);
    assert_eq!(budget["current_value"], "$100,000");
    let then = s.call(
        "GET",
        SUBJECTS,
        &["team"],
        "?as_of=2025-03-05",
        Some(k),
        None,
    );
    let then_budget = then.body["subjects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["subject"].as_str().unwrap().contains("budget"))
        .cloned()
        .unwrap_or_else(|| panic!("{}", then.text));
    assert_eq!(then_budget["current_value"], "$120,000", "{}", then.text);
    assert_eq!(then_budget["versions"], 1);
    assert_eq!(
        s.call("GET", SUBJECTS, &["team"], "?as_of=soon", Some(k), None)
            .body["field"],
        "as_of"
    );

    let r = s.get(SESSION_UNITS, &["alice", "pets"], k);
    let units = r.body["units"].as_array().unwrap();
    assert!(units.len() >= 3, "{}", r.text);
    assert!(units
        .iter()
        .all(|u| u["provenance"]["session_id"] == "pets"));
    assert_eq!(s.get(SESSION_UNITS, &["alice", "nope"], k).status, 404);
    let r = s.get(TRAJECTORY_UNITS, &["agent", "coupon"], k);
    let kinds: Vec<&str> = r.body["units"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"slice") && kinds.contains(&"note"),
        "{kinds:?}"
    );
    assert_eq!(s.get(TRAJECTORY_UNITS, &["agent", "nope"], k).status, 404);

    let stats = s.get("/v1/spaces/{space}/stats", &["alice"], k);
    assert!(
        stats.body["disk_bytes"].as_u64().unwrap() > 0,
        "{}",
        stats.text
    );
    assert!(stats.body["last_recorded_at"].is_string(), "{}", stats.text);

    // Recall explains itself when asked, and only then.
    let q = json!({"query": "my grey cat Luna", "top_k": 2, "explain": true});
    let r = s.post("/v1/spaces/{space}/recall", &["alice"], k, &q);
    let e = &r.body["hits"][0]["explain"];
    assert!(
        e["adjustments"].is_array() && e["fused"].is_number(),
        "{}",
        r.text
    );
    assert_eq!(r.body["explain"]["packing"]["token_budget"], 600);
    let plain = s.post(
        "/v1/spaces/{space}/recall",
        &["alice"],
        k,
        &json!({"query": "my grey cat Luna", "top_k": 2}),
    );
    assert!(!plain.text.contains("explain"), "{}", plain.text);
}

/// Inspector routes a key for `a` tries on space `b`: each must be refused.
pub fn foreign_attempts(s: &Server, a: &str) -> Vec<Resp> {
    vec![
        s.get(SUBJECTS, &["b"], a),
        s.get(SESSION_UNITS, &["b", "s"], a),
        s.get(TRAJECTORY_UNITS, &["b", "coupon"], a),
    ]
}

/// `me` and the `spaces` MCP tool name only the key's spaces.
pub fn me_is_scoped(s: &Server, a: &str, tool: impl Fn(&str, Value) -> (bool, Value)) {
    let me = s.get(ME, &[], a);
    assert_eq!(me.body["spaces"], json!(["a"]), "{}", me.text);
    assert_eq!(me.body["scope"], json!(["a"]));
    assert_eq!(me.body["admin"], false);
    let (err, v) = tool("spaces", json!({}));
    assert!(!err && v["spaces"] == json!(["a"]), "{v}");
    let (err, v) = tool("subjects", json!({"space": "b"}));
    assert!(err && !v.to_string().contains("31-7-22"), "{v}");
}
