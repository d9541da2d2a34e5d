//! The requests `cairn reliability scaling` measures: one probe per route of the HTTP
//! API and per MCP tool, and how they are sent and judged.
use crate::serve::{encode, Client};
use anyhow::{bail, Result};
use serde_json::{json, Value};

/// What the probes of a dimension's space name.
#[derive(Debug, Clone)]
pub(super) struct Ctx {
    pub(super) space: String,
    pub(super) session: String,
    pub(super) speaker: String,
    pub(super) entity: String,
    pub(super) subject: String,
    pub(super) trajectory: String,
    pub(super) group: String,
    pub(super) query: String,
    pub(super) filter: Value,
}

impl Ctx {
    pub(super) fn new(space: &str) -> Self {
        Self {
            space: space.to_string(),
            session: "s0".into(),
            speaker: "user".into(),
            // Named by the baseline fact every dimension's space holds.
            entity: "Atlas".into(),
            subject: "budget for atlas".into(),
            trajectory: "t0".into(),
            group: "team".into(),
            query: "Where was the parcel shipped?".into(),
            filter: json!({"k": 1}),
        }
    }
}

/// A request: method, path (encoded), JSON or NDJSON body.
#[derive(Debug, Clone)]
pub(super) struct Req {
    method: &'static str,
    path: String,
    body: Option<(&'static str, Vec<u8>)>,
}

fn get(path: String) -> Req {
    Req {
        method: "GET",
        path,
        body: None,
    }
}

fn post(path: String, v: Value) -> Req {
    Req {
        method: "POST",
        path,
        body: Some(("application/json", v.to_string().into_bytes())),
    }
}

pub(super) fn delete(path: String) -> Req {
    Req {
        method: "DELETE",
        path,
        body: None,
    }
}

impl Req {
    /// The request with `{id}` in its path replaced by the `id` the answer `prepared`
    /// names (what a preparing request created and this one deletes).
    pub(super) fn with_id(&self, prepared: Option<&crate::serve::Resp>) -> Req {
        let id = prepared.and_then(|r| r.body["id"].as_str()).unwrap_or("");
        Req {
            path: self.path.replace("{id}", &encode(id)),
            ..self.clone()
        }
    }
}

/// One measured request, with the unmeasured ones that prepare it (what it deletes).
pub(super) struct Probe {
    pub(super) name: String,
    pub(super) prepare: Vec<Req>,
    pub(super) req: Req,
}

fn probe(name: &str, req: Req) -> Probe {
    Probe {
        name: name.to_string(),
        prepare: Vec::new(),
        req,
    }
}

pub(super) fn two_messages(id: &str, text: &str) -> Value {
    json!({"id": id, "messages": [{"role": "user", "text": text},
        {"role": "assistant", "text": "Noted."}]})
}

pub(super) fn small_run(id: &str) -> Value {
    json!({"id": id, "goal": "find the coupon", "outcome": "success", "states": [
        {"url": "http://shop/", "action": "click [4] link 'Deals'", "observation": "[4] link 'Deals'\n[5] button 'Cart'"},
        {"url": "http://shop/deals", "action": "stop", "observation": "Coupon SAVE10 applies to shoes"}]})
}

/// The HTTP route probes, `k` making the ids of what they write unique.
pub(super) fn route_probes(c: &Ctx, k: usize) -> Vec<Probe> {
    let s = format!("/v1/spaces/{}", encode(&c.space));
    let tmp = format!("probe-{k}");
    let mut v = server_probes(&s, k);
    v.extend(key_and_partition_probes(c, &s, &tmp));
    v.extend(session_probes(c, &s, &tmp, k));
    v.extend(trajectory_probes(c, &s, &tmp));
    v.extend(trajectory_reading_probes(c, &s));
    v.extend(knowledge_probes(c, &s));
    v.extend(memory_probes(c, &s, &tmp));
    v.extend(mcp_probes(c, k));
    v
}

/// The server-wide routes and the space routes that read no content.
fn server_probes(s: &str, k: usize) -> Vec<Probe> {
    vec![
        probe("GET /v1/health", get("/v1/health".into())),
        probe("GET /v1/ready", get("/v1/ready".into())),
        probe("GET /v1/openapi.json", get("/v1/openapi.json".into())),
        probe("GET /ui", get("/ui".into())),
        probe("GET /ui/", get("/ui/".into())),
        probe("GET /ui/{file}", get("/ui/app.js".into())),
        probe("GET /v1/me", get("/v1/me".into())),
        probe("GET /v1/spaces", get("/v1/spaces".into())),
        probe(
            "POST /v1/spaces",
            post(
                "/v1/spaces".into(),
                json!({ "name": format!("scale-new-{k}") }),
            ),
        ),
        Probe {
            name: "DELETE /v1/spaces/{space}".into(),
            prepare: vec![post(
                "/v1/spaces/scale-gone/sessions".into(),
                two_messages("x", "A space about to go."),
            )],
            req: delete("/v1/spaces/scale-gone".into()),
        },
        probe("GET /v1/stats", get("/v1/stats".into())),
        probe("GET /v1/spaces/{space}/stats", get(format!("{s}/stats"))),
    ]
}

/// The admin's key routes, and forgetting an end user's partition.
fn key_and_partition_probes(c: &Ctx, s: &str, tmp: &str) -> Vec<Probe> {
    let new_key = || {
        post(
            "/v1/keys".into(),
            json!({"spaces": [c.space], "label": tmp}),
        )
    };
    let mut user_session = two_messages(&format!("{tmp}-u"), "My partition goes soon.");
    user_session["metadata"] = json!({"user_id": tmp});
    vec![
        probe("GET /v1/keys", get("/v1/keys".into())),
        probe("POST /v1/keys", new_key()),
        Probe {
            name: "DELETE /v1/keys/{id}".into(),
            prepare: vec![new_key()],
            // The id the preparing answer names (see `Req::with_id`).
            req: delete("/v1/keys/{id}".into()),
        },
        Probe {
            name: "POST /v1/spaces/{space}/partitions/forget".into(),
            prepare: vec![post(format!("{s}/sessions"), user_session)],
            req: post(
                format!("{s}/partitions/forget"),
                json!({"partition": {"user_id": tmp}}),
            ),
        },
    ]
}

/// Writing, reading and forgetting sessions and messages.
fn session_probes(c: &Ctx, s: &str, tmp: &str, k: usize) -> Vec<Probe> {
    let session = encode(&c.session);
    let filter = encode(&c.filter.to_string());
    vec![
        probe(
            "POST /v1/spaces/{space}/sessions",
            post(
                format!("{s}/sessions"),
                two_messages(tmp, "I moved to Porto last spring."),
            ),
        ),
        probe(
            "GET /v1/spaces/{space}/sessions",
            get(format!("{s}/sessions?filter={filter}")),
        ),
        probe(
            "POST /v1/spaces/{space}/sessions/batch",
            post(
                format!("{s}/sessions/batch"),
                json!({"sessions": [two_messages(&format!("{tmp}-b1"), "Tea at five."),
                    two_messages(&format!("{tmp}-b2"), "Coffee at nine.")]}),
            ),
        ),
        probe(
            "GET /v1/spaces/{space}/sessions/{session}",
            get(format!("{s}/sessions/{session}")),
        ),
        Probe {
            name: "DELETE /v1/spaces/{space}/sessions/{session}".into(),
            prepare: vec![post(
                format!("{s}/sessions"),
                two_messages(&format!("{tmp}-d"), "Forget me soon."),
            )],
            req: delete(format!("{s}/sessions/{tmp}-d")),
        },
        Probe {
            name: "DELETE /v1/spaces/{space}/sessions/{session}/messages/{message}".into(),
            prepare: vec![post(
                format!("{s}/sessions"),
                two_messages(&format!("{tmp}-m"), "Forget this line."),
            )],
            req: delete(format!("{s}/sessions/{tmp}-m/messages/0")),
        },
        probe(
            "POST /v1/spaces/{space}/messages",
            post(
                format!("{s}/messages"),
                json!({"session_id": c.session, "messages": [
                    {"role": "user", "text": format!("One more thing, number {k}.")}]}),
            ),
        ),
        probe(
            "POST /v1/spaces/{space}/group-messages",
            post(
                format!("{s}/group-messages"),
                json!({"messages": [{"speaker": "Probe Person", "group": c.group,
                    "time": "2024-06-01 12:00", "text": format!("Standup note {k}.")}]}),
            ),
        ),
    ]
}

/// Writing, listing and forgetting trajectories, and reading a state.
fn trajectory_probes(c: &Ctx, s: &str, tmp: &str) -> Vec<Probe> {
    let traj = encode(&c.trajectory);
    vec![
        probe(
            "POST /v1/spaces/{space}/trajectories",
            post(
                format!("{s}/trajectories"),
                json!({"trajectories": [small_run(&format!("{tmp}-t"))]}),
            ),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories",
            get(format!("{s}/trajectories")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}",
            get(format!("{s}/trajectories/{traj}")),
        ),
        Probe {
            name: "DELETE /v1/spaces/{space}/trajectories/{id}".into(),
            prepare: vec![post(
                format!("{s}/trajectories"),
                json!({"trajectories": [small_run(&format!("{tmp}-td"))]}),
            )],
            req: delete(format!("{s}/trajectories/{tmp}-td")),
        },
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}/states/{index}",
            get(format!("{s}/trajectories/{traj}/states/0")),
        ),
    ]
}

/// The trajectory reading tools: manifest, summary, views, spans, matches and questions.
fn trajectory_reading_probes(c: &Ctx, s: &str) -> Vec<Probe> {
    let traj = encode(&c.trajectory);
    vec![
        probe(
            "GET /v1/spaces/{space}/trajectory-manifest",
            get(format!("{s}/trajectory-manifest")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}/summary",
            get(format!("{s}/trajectories/{traj}/summary")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}/states/{index}/view",
            get(format!("{s}/trajectories/{traj}/states/0/view")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}/span",
            get(format!("{s}/trajectories/{traj}/span?start=0&end=1")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}/match",
            get(format!("{s}/trajectories/{traj}/match?pattern=coupon")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectory-search",
            get(format!("{s}/trajectory-search?pattern=coupon")),
        ),
        probe(
            "POST /v1/spaces/{space}/trajectory-context",
            post(
                format!("{s}/trajectory-context"),
                json!({"note": "The coupon is on the deals page.",
                    "spans": [{"trajectory_id": c.trajectory, "start_state": 0, "end_state": 1}]}),
            ),
        ),
        probe(
            "POST /v1/spaces/{space}/trajectory-inspect",
            post(
                format!("{s}/trajectory-inspect"),
                json!({"question": "Which coupon applies to shoes?"}),
            ),
        ),
        probe(
            "POST /v1/spaces/{space}/trajectory-agent",
            post(
                format!("{s}/trajectory-agent"),
                json!({"question": "Which coupon applies to shoes?"}),
            ),
        ),
    ]
}

/// What the space knows: histories, subjects, units, entities, speakers and recall.
fn knowledge_probes(c: &Ctx, s: &str) -> Vec<Probe> {
    let session = encode(&c.session);
    let traj = encode(&c.trajectory);
    vec![
        probe(
            "GET /v1/spaces/{space}/history",
            get(format!("{s}/history?subject={}", encode(&c.subject))),
        ),
        probe(
            "GET /v1/spaces/{space}/subjects",
            get(format!("{s}/subjects")),
        ),
        probe(
            "GET /v1/spaces/{space}/sessions/{session}/units",
            get(format!("{s}/sessions/{session}/units")),
        ),
        probe(
            "GET /v1/spaces/{space}/trajectories/{id}/units",
            get(format!("{s}/trajectories/{traj}/units")),
        ),
        probe(
            "GET /v1/spaces/{space}/entities",
            get(format!("{s}/entities")),
        ),
        probe(
            "GET /v1/spaces/{space}/entities/{name}",
            get(format!("{s}/entities/{}", encode(&c.entity))),
        ),
        probe(
            "GET /v1/spaces/{space}/speakers",
            get(format!("{s}/speakers")),
        ),
        probe(
            "GET /v1/spaces/{space}/profiles/{speaker}",
            get(format!("{s}/profiles/{}", encode(&c.speaker))),
        ),
        probe(
            "POST /v1/spaces/{space}/recall",
            post(format!("{s}/recall"), json!({ "query": c.query })),
        ),
        probe(
            "POST /v1/spaces/{space}/recall (who ...)",
            post(
                format!("{s}/recall"),
                json!({"query": "Who is the best person for database migrations?"}),
            ),
        ),
        probe(
            "POST /v1/spaces/{space}/recall (filter)",
            post(
                format!("{s}/recall"),
                json!({"query": c.query, "filter": c.filter}),
            ),
        ),
    ]
}

/// Memories one by one, export and import.
fn memory_probes(c: &Ctx, s: &str, tmp: &str) -> Vec<Probe> {
    let filter = encode(&c.filter.to_string());
    vec![
        probe(
            "GET /v1/spaces/{space}/memories",
            get(format!("{s}/memories?filter={filter}")),
        ),
        probe(
            "GET /v1/spaces/{space}/memories/{id}",
            get(format!(
                "{s}/memories/{}",
                encode(&format!("turn:{}:0", c.session))
            )),
        ),
        Probe {
            name: "DELETE /v1/spaces/{space}/memories/{id}".into(),
            prepare: vec![post(
                format!("{s}/sessions"),
                two_messages(&format!("{tmp}-u"), "A memory to forget."),
            )],
            req: delete(format!(
                "{s}/memories/{}",
                encode(&format!("turn:{tmp}-u:0"))
            )),
        },
        probe("GET /v1/spaces/{space}/export", get(format!("{s}/export"))),
        probe(
            "POST /v1/spaces/{space}/import",
            Req {
                method: "POST",
                path: format!("{s}/import"),
                body: Some((
                    "application/x-ndjson",
                    json!({"space": c.space, "recorded_at": "2024-01-01T00:00:00Z",
                        "session": two_messages(&format!("{tmp}-i"), "Imported line.")})
                    .to_string()
                    .into_bytes(),
                )),
            },
        ),
    ]
}

/// Every MCP tool, called through `POST /mcp`.
fn mcp_probes(c: &Ctx, k: usize) -> Vec<Probe> {
    let tool = |name: &str, args: Value| Probe {
        name: format!("mcp {name}"),
        prepare: Vec::new(),
        req: post(
            "/mcp".into(),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": args}}),
        ),
    };
    let sp = || json!(c.space);
    vec![
        tool(
            "remember",
            json!({"space": sp(), "note": format!("Probe note number {k}.")}),
        ),
        tool("recall", json!({"space": sp(), "query": c.query})),
        Probe {
            prepare: vec![post(
                format!("/v1/spaces/{}/sessions", encode(&c.space)),
                two_messages(&format!("probe-{k}-f"), "Forget me by tool."),
            )],
            ..tool(
                "forget",
                json!({"space": sp(), "session_id": format!("probe-{k}-f")}),
            )
        },
        tool("history", json!({"space": sp(), "subject": c.subject})),
        tool("profile", json!({"space": sp(), "speaker": c.speaker})),
        tool("spaces", json!({})),
        tool("subjects", json!({"space": sp()})),
        tool("entities", json!({"space": sp()})),
        Probe {
            name: "mcp entities (name)".into(),
            ..tool("entities", json!({"space": sp(), "name": c.entity}))
        },
        tool("trajectory_manifest", json!({"space": sp()})),
        tool(
            "trajectory_summary",
            json!({"space": sp(), "trajectory_id": c.trajectory}),
        ),
        tool(
            "trajectory_state",
            json!({"space": sp(), "trajectory_id": c.trajectory, "state": 0}),
        ),
        tool(
            "trajectory_span",
            json!({"space": sp(), "trajectory_id": c.trajectory, "start": 0, "end": 1}),
        ),
        tool(
            "trajectory_match",
            json!({"space": sp(), "trajectory_id": c.trajectory, "pattern": "coupon"}),
        ),
        tool(
            "trajectory_search",
            json!({"space": sp(), "pattern": "coupon"}),
        ),
        tool(
            "trajectory_context",
            json!({"space": sp(), "note": "The coupon is on the deals page.",
                "spans": [{"trajectory_id": c.trajectory, "start_state": 0, "end_state": 1}]}),
        ),
        tool(
            "trajectory_quick_context",
            json!({"space": sp(), "question": "Which coupon applies to shoes?"}),
        ),
    ]
}

pub(super) fn send(client: &Client, r: &Req) -> Result<crate::serve::Resp, String> {
    client.request(
        r.method,
        &r.path,
        r.body.as_ref().map(|(t, b)| (*t, b.as_slice())),
        None,
    )
}

pub(super) fn answered(r: &crate::serve::Resp) -> bool {
    (200..300).contains(&r.status) && r.body["result"]["isError"] != json!(true)
}

pub(super) fn ok(r: Result<crate::serve::Resp, String>, what: &str) -> Result<crate::serve::Resp> {
    match r {
        Ok(r) if (200..300).contains(&r.status) => Ok(r),
        Ok(r) => bail!(
            "{what}: HTTP {}: {}",
            r.status,
            r.text.chars().take(300).collect::<String>()
        ),
        Err(e) => bail!("{what}: {e}"),
    }
}
