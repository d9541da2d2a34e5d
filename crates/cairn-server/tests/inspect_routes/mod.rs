//! The trajectory inspection routes and MCP tools, driven from `http.rs`: every route
//! with its answers and bad input, and every route and tool refused with a foreign key.
use crate::common::{Resp, Server};
use serde_json::{json, Value};

pub const MANIFEST: &str = "/v1/spaces/{space}/trajectory-manifest";
pub const SUMMARY: &str = "/v1/spaces/{space}/trajectories/{id}/summary";
pub const VIEW: &str = "/v1/spaces/{space}/trajectories/{id}/states/{index}/view";
pub const SPAN: &str = "/v1/spaces/{space}/trajectories/{id}/span";
pub const MATCH: &str = "/v1/spaces/{space}/trajectories/{id}/match";
pub const SEARCH: &str = "/v1/spaces/{space}/trajectory-search";
pub const CONTEXT: &str = "/v1/spaces/{space}/trajectory-context";
pub const INSPECT: &str = "/v1/spaces/{space}/trajectory-inspect";
pub const AGENT: &str = "/v1/spaces/{space}/trajectory-agent";

/// The MCP tools of trajectory inspection.
pub const TOOLS: [&str; 8] = [
    "trajectory_context",
    "trajectory_manifest",
    "trajectory_match",
    "trajectory_quick_context",
    "trajectory_search",
    "trajectory_span",
    "trajectory_state",
    "trajectory_summary",
];

fn page(title: &str, extra: &str) -> String {
    format!("RootWebArea '{title}'\n[1] link 'Dashboard'\n[4] link 'Marketing'\n{extra}")
}

/// Two runs of a shop admin: a coupon that fails on a taken code, a product saved.
pub fn runs() -> Value {
    json!({"trajectories": [
        {"id": "coupon", "goal": "Create coupon SPRING10", "outcome": "failure",
         "start_url": "http://shop/admin", "states": [
            {"url": "http://shop/admin", "action": "click [4]", "thought": "coupons are under Marketing",
             "accessibility_tree": page("Dashboard", "[20] text 'Sales today: 9'")},
            {"url": "http://shop/admin/coupons/new", "action": "click [63]", "thought": "save it",
             "accessibility_tree": page("New Rule", "[61] textbox 'Code' value 'SPRING10'\n[63] button 'Save'")},
            {"url": "http://shop/admin/coupons/new", "thought": "the code is taken",
             "accessibility_tree": page("New Rule", &format!("[64] alert 'The coupon code SPRING10 already exists.'\n{}", "[70] row 'filler line of the coupon grid'\n".repeat(60)))}
        ]},
        {"id": "product", "goal": "Add the product Blue Mug", "outcome": "success", "states": [
            {"url": "http://shop/admin/products/new", "action": "click [42]",
             "accessibility_tree": page("New Product", "[40] textbox 'Name' value 'Blue Mug'\n[42] button 'Save'")},
            {"url": "http://shop/admin/products/118",
             "accessibility_tree": page("Blue Mug", "[50] alert 'You saved the product.'")}
        ]}
    ]})
}

fn ok(r: &Resp) {
    assert!(r.status < 300, "{} {}", r.status, r.text);
}

fn get(s: &Server, route: &str, args: &[&str], query: &str, key: &str) -> Resp {
    s.call("GET", route, args, query, Some(key), None)
}

/// A tool call over `/mcp`: whether it is an error, and its text.
pub fn tool(s: &Server, key: &str, name: &str, args: Value) -> (bool, String) {
    let r = s.call(
        "POST",
        "/mcp",
        &[],
        "",
        Some(key),
        Some((
            "application/json",
            &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                    "params": {"name": name, "arguments": args}})
            .to_string(),
        )),
    );
    ok(&r);
    let res = &r.body["result"];
    (
        res["isError"].as_bool().unwrap_or(false),
        res["content"][0]["text"].as_str().unwrap_or("").to_string(),
    )
}

/// Every inspection route on space `sp`, with the answers and the bad input they refuse.
pub fn exercise(s: &Server, k: &str, sp: &str) {
    ok(&s.post("/v1/spaces/{space}/trajectories", &[sp], k, &runs()));
    let r = get(s, MANIFEST, &[sp], "?form=full&limit=1", k);
    ok(&r);
    assert_eq!(
        (r.body["total"].as_u64(), r.body["next_offset"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(r.body["entries"][0]["steps"][0]["title"], "Dashboard");
    assert!(r.body["truncated"].as_str().unwrap().contains("offset=1"));
    assert_eq!(get(s, MANIFEST, &[sp], "?form=wide", k).status, 422);
    assert_eq!(
        get(s, MANIFEST, &[sp], "?limit=0", k).body["field"],
        "limit"
    );

    let r = get(s, SUMMARY, &[sp, "coupon"], "", k);
    ok(&r);
    assert_eq!(
        r.body["steps"][1]["action"],
        "click [63]  # [63] button 'Save'"
    );
    assert_eq!(get(s, SUMMARY, &[sp, "nope"], "", k).status, 404);

    let r = get(s, VIEW, &[sp, "coupon", "2"], "?max_chars=300", k);
    ok(&r);
    assert!(
        r.body["truncated"].as_str().unwrap().contains("max_chars="),
        "{}",
        r.text
    );
    assert!(r.body["observation"]
        .as_str()
        .unwrap()
        .contains("already exists"));
    assert_eq!(get(s, VIEW, &[sp, "coupon", "3"], "", k).status, 404);
    assert_eq!(
        get(s, VIEW, &[sp, "coupon", "x"], "", k).body["field"],
        "index"
    );

    let r = get(s, SPAN, &[sp, "coupon"], "?start=1&end=2", k);
    ok(&r);
    assert_eq!(r.body["states"].as_array().unwrap().len(), 2);
    assert_eq!(
        get(s, SPAN, &[sp, "coupon"], "?start=2&end=1", k).body["field"],
        "end"
    );
    assert_eq!(get(s, SPAN, &[sp, "coupon"], "?start=1", k).status, 422);

    let r = get(s, MATCH, &[sp, "coupon"], "?pattern=already%20exists", k);
    ok(&r);
    assert_eq!(r.body["states"][0]["state"], 2);
    assert_eq!(
        get(s, MATCH, &[sp, "coupon"], "?pattern=(", k).body["field"],
        "pattern"
    );
    // A pattern over its bound is refused like every text over its bound: 413, the field.
    let long = format!(
        "?pattern={}",
        "a".repeat(cairn::bounds::MAX_PATTERN_BYTES + 1)
    );
    let r = get(s, SEARCH, &[sp], &long, k);
    assert_eq!(
        (r.status, r.body["code"].as_str(), r.body["field"].as_str()),
        (413, Some("text_too_long"), Some("pattern"))
    );
    let r = get(s, SEARCH, &[sp], "?pattern=saved%20product&limit=1", k);
    ok(&r);
    assert_eq!(r.body["states"][0]["trajectory_id"], "product");
    assert_eq!(r.body["trajectories_searched"], 2);

    let r = s.post(
        CONTEXT,
        &[sp],
        k,
        &json!({"note": "SPRING10 is taken.", "token_budget": 60,
                "spans": [{"trajectory_id": "coupon", "start_state_index": 1, "end_state_index": 2}],
                "query": "does the coupon code already exist"}),
    );
    ok(&r);
    assert!(r.body["tokens"].as_u64().unwrap() <= 60, "{}", r.text);
    assert!(r.body["context"]
        .as_str()
        .unwrap()
        .starts_with("## Memory note"));
    let r = s.post(
        CONTEXT,
        &[sp],
        k,
        &json!({"spans": [{"trajectory_id": "coupon", "start_state": 0, "end_state": 9}]}),
    );
    assert_eq!(
        (r.status, r.body["field"].as_str()),
        (422, Some("spans[0].end_state"))
    );
    let r = s.post(CONTEXT, &[sp], k, &json!({"spans": [], "colour": 1}));
    assert_eq!(r.status, 422);

    let r = s.post(
        INSPECT,
        &[sp],
        k,
        &json!({"question": "coupon code already exists?"}),
    );
    ok(&r);
    assert_eq!(r.body["shortlist"][0], "coupon", "{}", r.text);
    assert_eq!(
        s.post(INSPECT, &[sp], k, &json!({"question": "x", "top_k": 0}))
            .body["field"],
        "top_k"
    );

    // No LLM on this server: the controller answers with its fallback, and says so.
    let r = s.post(
        AGENT,
        &[sp],
        k,
        &json!({"question": "Why did SPRING10 fail?"}),
    );
    ok(&r);
    assert_eq!(
        (r.body["mode"].as_str(), r.body["fallback_reason"].as_str()),
        (Some("fallback"), Some("no LLM configured"))
    );
    assert!(r.body["context"].as_str().unwrap().contains("SPRING10"));
    let r = s.post(
        AGENT,
        &[sp],
        k,
        &json!({"question": "x", "time_budget_ms": 0}),
    );
    assert_eq!(r.body["field"], "time_budget_ms");
    // One bound, the engine's: ten minutes.
    let r = s.post(
        AGENT,
        &[sp],
        k,
        &json!({"question": "x", "time_budget_ms": 600_001}),
    );
    assert_eq!(r.body["field"], "time_budget_ms", "{}", r.text);

    same_json_as_the_library(s, k, sp);

    // The MCP tools answer the same, as text.
    let (err, t) = tool(s, k, "trajectory_manifest", json!({"space": sp}));
    assert!(!err && t.contains("coupon: Create coupon SPRING10"), "{t}");
    let (err, t) = tool(
        s,
        k,
        "trajectory_match",
        json!({"space": sp, "trajectory_id": "coupon", "pattern": "already exists"}),
    );
    assert!(!err && t.contains("state 2"), "{t}");
    let (err, t) = tool(
        s,
        k,
        "trajectory_state",
        json!({"space": sp, "trajectory_id": "coupon", "state": 7}),
    );
    assert!(err && t.contains("0-2"), "{t}");
}

/// `v` without the fields that hold wall time (`*_ms`), which differ from call to call.
fn timeless(mut v: Value) -> Value {
    match &mut v {
        Value::Object(map) => {
            map.retain(|k, _| !k.ends_with("_ms"));
            for x in map.values_mut() {
                *x = timeless(x.take());
            }
        }
        Value::Array(items) => {
            for x in items.iter_mut() {
                *x = timeless(x.take());
            }
        }
        _ => {}
    }
    v
}

/// Each route answers with its own wire type, and that type writes exactly the JSON the
/// library's answer serialises to (wall times aside): the wire mirrors change no byte.
fn same_json_as_the_library(s: &Server, k: &str, sp: &str) {
    use cairn::{ContextRequest, ContextSpan, ManifestForm, PatternMode};
    let Some(state) = &s.state else { return };
    let m = &state.memory;
    let same = |r: Resp, lib: Value| {
        ok(&r);
        assert_eq!(timeless(r.body), timeless(lib), "{}", r.text);
    };
    fn json<T: serde::Serialize>(v: &T) -> Value {
        serde_json::to_value(v).expect("the library's answers serialise")
    }
    let lib = m
        .trajectories()
        .manifest_page(sp, ManifestForm::Full, 0, Some(1));
    same(
        get(s, MANIFEST, &[sp], "?form=full&limit=1", k),
        json(&lib.unwrap()),
    );
    let lib = m.trajectories().summary(sp, "coupon").unwrap();
    same(get(s, SUMMARY, &[sp, "coupon"], "", k), json(&lib));
    let lib = m.trajectories().state(sp, "coupon", 2, Some(300)).unwrap();
    same(
        get(s, VIEW, &[sp, "coupon", "2"], "?max_chars=300", k),
        json(&lib),
    );
    let lib = m.trajectories().span(sp, "coupon", 1, 2, None).unwrap();
    same(
        get(s, SPAN, &[sp, "coupon"], "?start=1&end=2", k),
        json(&lib),
    );
    let lib = m
        .trajectories()
        .find(sp, "coupon", "already exists", PatternMode::Regex, None);
    let r = get(s, MATCH, &[sp, "coupon"], "?pattern=already%20exists", k);
    same(r, json(&lib.unwrap()));
    let lib = m
        .trajectories()
        .search(sp, "saved product", PatternMode::Words, Some(1));
    let r = get(s, SEARCH, &[sp], "?pattern=saved%20product&limit=1", k);
    same(r, json(&lib.unwrap()));
    let req = ContextRequest {
        note: "SPRING10 is taken.".into(),
        spans: vec![ContextSpan {
            trajectory_id: "coupon".into(),
            start_state: 1,
            end_state: 2,
        }],
        token_budget: 60,
        query: Some("does the coupon code already exist".into()),
    };
    let lib = m.trajectories().context(sp, &req).unwrap();
    same(
        s.post(CONTEXT, &[sp], k, &serde_json::to_value(&req).unwrap()),
        json(&lib),
    );
    let question = "coupon code already exists?";
    let lib = m
        .trajectories()
        .recall_inspect(sp, question, &Default::default());
    let r = s.post(INSPECT, &[sp], k, &json!({ "question": question }));
    same(r, json(&lib.unwrap()));
    let lib = m
        .trajectories()
        .agent(sp, question, &Default::default(), None);
    let r = s.post(AGENT, &[sp], k, &json!({ "question": question }));
    same(r, json(&lib.unwrap()));
}

/// Key `a` on space `b` through every inspection route: each must be refused.
pub fn foreign(s: &Server, a: &str) -> Vec<Resp> {
    vec![
        get(s, MANIFEST, &["b"], "", a),
        get(s, SUMMARY, &["b", "coupon"], "", a),
        get(s, VIEW, &["b", "coupon", "0"], "", a),
        get(s, SPAN, &["b", "coupon"], "?start=0&end=1", a),
        get(s, MATCH, &["b", "coupon"], "?pattern=vault", a),
        get(s, SEARCH, &["b"], "?pattern=vault", a),
        s.post(
            CONTEXT,
            &["b"],
            a,
            &json!({"spans": [{"trajectory_id": "coupon", "start_state": 0, "end_state": 0}]}),
        ),
        s.post(
            INSPECT,
            &["b"],
            a,
            &json!({"question": "vault combination"}),
        ),
        s.post(AGENT, &["b"], a, &json!({"question": "vault combination"})),
    ]
}

/// Key `a` on space `b` through every inspection tool: each an error without `secret`.
pub fn foreign_tools(s: &Server, a: &str, secret: &str) {
    for (name, args) in [
        ("trajectory_manifest", json!({"space": "b"})),
        (
            "trajectory_summary",
            json!({"space": "b", "trajectory_id": "coupon"}),
        ),
        (
            "trajectory_state",
            json!({"space": "b", "trajectory_id": "coupon", "state": 0}),
        ),
        (
            "trajectory_span",
            json!({"space": "b", "trajectory_id": "coupon", "start": 0, "end": 1}),
        ),
        (
            "trajectory_match",
            json!({"space": "b", "trajectory_id": "coupon", "pattern": "vault"}),
        ),
        (
            "trajectory_search",
            json!({"space": "b", "pattern": "vault"}),
        ),
        (
            "trajectory_context",
            json!({"space": "b", "spans": [{"trajectory_id": "coupon", "start_state": 0, "end_state": 0}]}),
        ),
        (
            "trajectory_quick_context",
            json!({"space": "b", "question": "vault combination"}),
        ),
    ] {
        let (err, t) = tool(s, a, name, args);
        assert!(
            err && t.contains("forbidden") && !t.contains(secret),
            "{name}: {t}"
        );
    }
}
