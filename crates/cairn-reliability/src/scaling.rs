//! Cost scaling (`cairn reliability scaling`): does any request's cost grow faster than
//! its input? For each dimension a request can depend on (speakers, names, sessions,
//! messages per session, versions of one subject, subjects, trajectories, states per
//! trajectory, spaces, filter conditions), one space is grown by doubling N, and at each N
//! every route of the HTTP API and every MCP tool is sent once per repetition against it
//! and the CPU time the server spent on it is measured: the sum over the server
//! process's threads of their time on a CPU (`/proc/<pid>/task/*/schedstat`), not wall
//! time, so other load on the machine does not count.
//!
//! Each measurement is cold: right before it, a session written to the measured space and
//! removed again moves that space's generation (so no cache of derived state, such as an
//! entity graph or a fact index, answers for free) and a recall in a scratch space commits
//! the text index; then the probe waits until the server is idle (see [`settle`]), so the
//! background work those set off (the text index's segment merges) is not counted against
//! it. A write probe's own
//! deferred text commit (`text_commit_ms` later) falls after its window, as before the
//! wait: the commit's cost is measured by the write benchmarks, not here. The repetitions
//! go round the probes of one size, and the median of a probe's repetitions counts. A row's growth per doubling
//! is 2 to the slope of log(CPU) over log(N), fitted over the sizes whose CPU is above the
//! floor; a row whose CPU stays below the floor at every N is reported as flat.
//!
//! Every route of the server's `/v1/openapi.json` must have a probe here: a route added
//! without one is reported (`unprobed_routes`), so the table cannot silently miss it.
use crate::corpus::nonce;
use crate::fuzz::Rng;
use crate::serve::{encode, Cairn, Client, Server};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Rows whose CPU at every N is below this many milliseconds are flat.
pub const FLOOR_MS: f64 = 5.0;
/// Growth per doubling above this is superlinear (2.0 is linear).
pub const LINEAR: f64 = 2.2;

#[derive(Debug, Clone)]
pub struct ScalingOptions {
    /// N at the first size of each dimension (filter conditions start at `base / 16`,
    /// capped by the filter language's 256 conditions).
    pub base: usize,
    /// Doublings after the first size.
    pub doublings: usize,
    /// Cold measurements per probe and size; their median counts. Five by default: at
    /// three, a row moved by 0.2-0.4x between runs of the same binary (docs/reliability.md).
    pub reps: usize,
    /// Only the dimensions named (all when empty).
    pub only: Vec<String>,
    pub seed: u64,
}

impl Default for ScalingOptions {
    fn default() -> Self {
        Self {
            base: 250,
            doublings: 3,
            reps: 5,
            only: Vec::new(),
            seed: 1,
        }
    }
}

/// One probe of one dimension: its CPU at each N.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub dimension: String,
    /// `METHOD /route/{template}`, or `mcp <tool>`.
    pub probe: String,
    pub sizes: Vec<usize>,
    /// Median CPU milliseconds at each size.
    pub cpu_ms: Vec<f64>,
    /// CPU growth per doubling of N (`None`: below the floor at every size).
    pub growth: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ScalingReport {
    pub base: usize,
    pub doublings: usize,
    pub reps: usize,
    pub rows: Vec<Row>,
    /// Rows growing faster than [`LINEAR`] per doubling.
    pub superlinear: Vec<String>,
    /// Routes of the served spec that no probe covers.
    pub unprobed_routes: Vec<String>,
    /// Probes that did not answer 2xx (each must).
    pub errors: Vec<String>,
    /// Seconds spent, seeding included.
    pub seconds: f64,
}

impl ScalingReport {
    pub fn passed(&self) -> bool {
        self.superlinear.is_empty() && self.unprobed_routes.is_empty() && self.errors.is_empty()
    }

    /// The report as markdown: the rows above the floor, then how many were flat.
    pub fn markdown(&self) -> String {
        let mut out = String::from(
            "| dimension | probe | CPU ms at each N | growth per doubling |\n|---|---|---|---|\n",
        );
        let mut flat = 0;
        for r in &self.rows {
            let Some(g) = r.growth else {
                flat += 1;
                continue;
            };
            let cells: Vec<String> = r
                .sizes
                .iter()
                .zip(&r.cpu_ms)
                .map(|(n, ms)| format!("{n}: {ms:.1}"))
                .collect();
            let mark = if g > LINEAR { " **superlinear**" } else { "" };
            out += &format!(
                "| {} | `{}` | {} | {g:.2}x{mark} |\n",
                r.dimension,
                r.probe,
                cells.join(", ")
            );
        }
        out += &format!("\n{flat} more rows stayed below {FLOOR_MS} ms of CPU at every N.\n");
        out
    }
}

/// What the probes of a dimension's space name.
#[derive(Debug, Clone)]
struct Ctx {
    space: String,
    session: String,
    speaker: String,
    entity: String,
    subject: String,
    trajectory: String,
    group: String,
    query: String,
    filter: Value,
}

impl Ctx {
    fn new(space: &str) -> Self {
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
struct Req {
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

fn delete(path: String) -> Req {
    Req {
        method: "DELETE",
        path,
        body: None,
    }
}

/// One measured request, with the unmeasured ones that prepare it (what it deletes).
struct Probe {
    name: String,
    prepare: Vec<Req>,
    req: Req,
}

fn probe(name: &str, req: Req) -> Probe {
    Probe {
        name: name.to_string(),
        prepare: Vec::new(),
        req,
    }
}

fn two_messages(id: &str, text: &str) -> Value {
    json!({"id": id, "messages": [{"role": "user", "text": text},
        {"role": "assistant", "text": "Noted."}]})
}

fn small_run(id: &str) -> Value {
    json!({"id": id, "goal": "find the coupon", "outcome": "success", "states": [
        {"url": "http://shop/", "action": "click [4] link 'Deals'", "observation": "[4] link 'Deals'\n[5] button 'Cart'"},
        {"url": "http://shop/deals", "action": "stop", "observation": "Coupon SAVE10 applies to shoes"}]})
}

/// The HTTP route probes, `k` making the ids of what they write unique.
fn route_probes(c: &Ctx, k: usize) -> Vec<Probe> {
    let s = format!("/v1/spaces/{}", encode(&c.space));
    let session = encode(&c.session);
    let traj = encode(&c.trajectory);
    let filter = encode(&c.filter.to_string());
    let tmp = format!("probe-{k}");
    let mut v = vec![
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
        probe(
            "POST /v1/spaces/{space}/sessions",
            post(
                format!("{s}/sessions"),
                two_messages(&tmp, "I moved to Porto last spring."),
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
    ];
    v.extend(mcp_probes(c, k));
    v
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

/// The CPU time, in nanoseconds, the process's threads have spent on a CPU.
fn cpu_ns(pid: u32) -> Result<u64> {
    let mut total = 0;
    let dir = format!("/proc/{pid}/task");
    for task in std::fs::read_dir(&dir).with_context(|| format!("reading {dir}"))? {
        let path = task?.path().join("schedstat");
        // A thread that just exited has no file any more: its time is lost to this sum,
        // which the median over repetitions absorbs.
        if let Ok(text) = std::fs::read_to_string(&path) {
            total += text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Ok(total)
}

/// Waits until the server spends less than a tenth of a core (over 10 ms), at most
/// 10 s. Before a probe, so that background work an earlier request set off (the text
/// index's commit and segment merges, which grow with the index) is not counted
/// against it: that work grows with the index, and before this wait it made routes of
/// a few milliseconds grow 2.2-2.9x per doubling (docs/reliability.md).
fn settle(pid: u32) -> Result<()> {
    const WINDOW: std::time::Duration = std::time::Duration::from_millis(10);
    const IDLE_NS: u64 = 1_000_000;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut last = cpu_ns(pid)?;
    loop {
        std::thread::sleep(WINDOW);
        let now = cpu_ns(pid)?;
        if now.saturating_sub(last) < IDLE_NS || std::time::Instant::now() > deadline {
            return Ok(());
        }
        last = now;
    }
}

/// What every probe reads besides the dimension's own data (the trajectory `t0` and a
/// fact about the budget for Atlas), where the dimension does not grow it itself: a
/// probe of a missing thing would measure a 404.
fn baseline(client: &Client, dim: &Dimension, c: &Ctx) -> Result<()> {
    let space = encode(&c.space);
    if !matches!(dim.name, "trajectories" | "states per trajectory") {
        ok(
            client.post(
                &format!("/v1/spaces/{space}/trajectories"),
                &json!({"trajectories": [small_run("t0")]}),
            ),
            "seeding the baseline trajectory",
        )?;
    }
    if dim.name != "versions of one subject" {
        ok(
            client.post(
                &format!("/v1/spaces/{space}/sessions"),
                &two_messages("baseline", "The budget for Atlas is $100k."),
            ),
            "seeding the baseline fact",
        )?;
    }
    Ok(())
}

fn send(client: &Client, r: &Req) -> Result<crate::serve::Resp, String> {
    client.request(
        r.method,
        &r.path,
        r.body.as_ref().map(|(t, b)| (*t, b.as_slice())),
        None,
    )
}

fn answered(r: &crate::serve::Resp) -> bool {
    (200..300).contains(&r.status) && r.body["result"]["isError"] != json!(true)
}

/// How a dimension grows its space from the first N to the second.
#[derive(Clone, Copy)]
enum Grow {
    /// Sessions `from..to`, session `i` made by the function, sent in batches.
    Sessions(fn(usize, &mut Rng) -> Value),
    /// Anything else.
    With(fn(&Client, &Ctx, usize, usize, &mut Rng) -> Result<()>),
}

/// One dimension, a row of [`DIMENSIONS`]: what its N counts, the space grown to N, what
/// the probes name there, and the probes measured.
struct Dimension {
    name: &'static str,
    space: &'static str,
    /// What the probes name in the space, where it is not [`Ctx::new`]'s.
    ctx: fn(&mut Ctx),
    grow: Grow,
    /// N counts the conditions of the probes' filter (from `base / 16`, at most the
    /// filter language's limit), not records.
    conditions: bool,
    /// Probes measured (all when `None`).
    probes: Option<&'static [&'static str]>,
}

/// What a row of [`DIMENSIONS`] leaves out.
const DIMENSION: Dimension = Dimension {
    name: "",
    space: "",
    ctx: |_| {},
    grow: Grow::With(|_, _, _, _, _| Ok(())),
    conditions: false,
    probes: None,
};

/// Every dimension a request can depend on, in the order they are measured.
const DIMENSIONS: &[Dimension] = &[
    // Group messages, each from a new speaker who says their role and skill.
    Dimension {
        name: "speakers",
        space: "scale-speakers",
        ctx: |c| {
            c.speaker = format!("{} Lee", name(0));
            c.entity = c.speaker.clone();
            c.session = "team/2024-01-01".into();
        },
        grow: Grow::With(grow_speakers),
        ..DIMENSION
    },
    // Sessions each naming a new person and place.
    Dimension {
        name: "names",
        space: "scale-names",
        ctx: |c| {
            c.entity = name(0);
            c.query = format!("What did I do with {}?", name(0));
        },
        grow: Grow::Sessions(|i, _| {
            two_messages(
                &format!("s{i}"),
                &format!(
                    "Yesterday I had lunch with {} at the {} Cafe in {}.",
                    name(i),
                    name(i + 1_000_000),
                    cairn_load::corpus::PLACES[i % cairn_load::corpus::PLACES.len()]
                ),
            )
        }),
        ..DIMENSION
    },
    // Many small sessions.
    Dimension {
        name: "sessions",
        space: "scale-sessions",
        grow: Grow::Sessions(|i, rng| {
            let n = nonce(rng);
            let mut v = crate::corpus::session(&format!("s{i}"), &n, rng).0;
            v["metadata"] = json!({ "k": i % 4 });
            v
        }),
        ..DIMENSION
    },
    // One session, appended to.
    Dimension {
        name: "messages per session",
        space: "scale-messages",
        ctx: |c| c.session = "long".into(),
        grow: Grow::With(grow_messages),
        ..DIMENSION
    },
    // One subject stated again and again, a day apart.
    Dimension {
        name: "versions of one subject",
        space: "scale-versions",
        ctx: |c| c.query = "What is the budget for Atlas now?".into(),
        grow: Grow::Sessions(|i, _| {
            let mut v = two_messages(
                &format!("s{i}"),
                &format!("The budget for Atlas is now ${}k.", 100 + i),
            );
            v["date"] = json!(format!("{}-01-01 09:00", 1900 + i / 365));
            v["messages"][0]["occurred_at"] = json!(format!(
                "{}-{:02}-{:02} 09:00",
                1900 + i / 365,
                1 + i % 365 / 31 % 12,
                1 + i % 28
            ));
            v
        }),
        ..DIMENSION
    },
    // Many subjects, one statement each.
    Dimension {
        name: "subjects",
        space: "scale-subjects",
        ctx: |c| c.subject = format!("budget for {}", name(0).to_lowercase()),
        grow: Grow::Sessions(|i, _| {
            two_messages(
                &format!("s{i}"),
                &format!("The budget for {} is ${}k.", name(i), 50 + i % 500),
            )
        }),
        ..DIMENSION
    },
    // Many small runs; no session of their own (the probes read the baseline's).
    Dimension {
        name: "trajectories",
        space: "scale-trajectories",
        ctx: |c| c.session = "baseline".into(),
        grow: Grow::With(grow_trajectories),
        ..DIMENSION
    },
    // The probed run has N states (a new run per size).
    Dimension {
        name: "states per trajectory",
        space: "scale-states",
        ctx: |c| c.session = "baseline".into(),
        grow: Grow::With(grow_states),
        ..DIMENSION
    },
    // N spaces of one session each; the probes use the first.
    Dimension {
        name: "spaces",
        space: "scale-spaces-0",
        grow: Grow::With(grow_spaces),
        ..DIMENSION
    },
    // The same space, asked with filters of N conditions.
    Dimension {
        name: "filter conditions",
        space: "scale-filters",
        grow: Grow::With(grow_filtered),
        conditions: true,
        probes: Some(&[
            "GET /v1/spaces/{space}/sessions",
            "POST /v1/spaces/{space}/recall (filter)",
            "GET /v1/spaces/{space}/memories",
        ]),
        ..DIMENSION
    },
];

impl Dimension {
    /// What the probes name in this dimension's space.
    fn ctx(&self) -> Ctx {
        let mut c = Ctx::new(self.space);
        (self.ctx)(&mut c);
        c
    }

    /// N at each size.
    fn sizes(&self, o: &ScalingOptions) -> Vec<usize> {
        let base = o.base.max(2);
        let doubled = |first: usize| (0..=o.doublings).map(move |d| first << d);
        match self.conditions {
            false => doubled(base).collect(),
            true => doubled((base / 16).max(2))
                .take_while(|&n| n <= cairn_core::bounds::MAX_FILTER_CONDITIONS)
                .collect(),
        }
    }

    fn grow(&self, client: &Client, c: &Ctx, from: usize, to: usize, rng: &mut Rng) -> Result<()> {
        match self.grow {
            Grow::Sessions(make) => batches(client, &c.space, from, to, |i| make(i, rng)),
            Grow::With(grow) => grow(client, c, from, to, rng),
        }
    }
}

fn ok(r: Result<crate::serve::Resp, String>, what: &str) -> Result<()> {
    match r {
        Ok(r) if (200..300).contains(&r.status) => Ok(()),
        Ok(r) => bail!(
            "{what}: HTTP {}: {}",
            r.status,
            r.text.chars().take(300).collect::<String>()
        ),
        Err(e) => bail!("{what}: {e}"),
    }
}

/// Sessions `from..to` (each from `make(i)`, in order), in batches.
fn batches(
    client: &Client,
    space: &str,
    from: usize,
    to: usize,
    mut make: impl FnMut(usize) -> Value,
) -> Result<()> {
    let path = format!("/v1/spaces/{}/sessions/batch", encode(space));
    let ids: Vec<usize> = (from..to).collect();
    for chunk in ids.chunks(500) {
        let sessions: Vec<Value> = chunk.iter().map(|&i| make(i)).collect();
        ok(
            client.post(&path, &json!({ "sessions": sessions })),
            "seeding",
        )?;
    }
    Ok(())
}

const ROLES: &[&str] = &[
    "database engineer",
    "QA lead",
    "product designer",
    "data analyst",
    "support manager",
    "security architect",
];
const SKILLS: &[&str] = &[
    "database migrations",
    "load testing",
    "pricing",
    "onboarding flows",
    "incident response",
    "tax rules",
    "billing",
    "search tuning",
];

/// A distinct, capitalized name for every `i`.
fn name(i: usize) -> String {
    let mut r = Rng(i as u64 * 7919 + 17);
    let n = nonce(&mut r);
    let mut c = n.chars();
    c.next();
    let rest: String = c.collect();
    format!("{}{}{i}", rest[..1].to_uppercase(), &rest[1..])
}

/// Group messages `from..to`, each from a new speaker stating a role and a skill.
fn grow_speakers(client: &Client, c: &Ctx, from: usize, to: usize, _: &mut Rng) -> Result<()> {
    let path = format!("/v1/spaces/{}/group-messages", encode(&c.space));
    let ids: Vec<usize> = (from..to).collect();
    for chunk in ids.chunks(1000) {
        let messages: Vec<Value> = chunk
            .iter()
            .map(|&i| {
                json!({"speaker": format!("{} Lee", name(i)), "group": "team",
                    "time": format!("2024-01-{:02} {:02}:{:02}", 1 + i / 1000 % 28, i / 60 % 17 + 6, i % 60),
                    "text": format!("I'm the {} here and I specialize in {}.",
                        ROLES[i % ROLES.len()], SKILLS[i % SKILLS.len()])})
            })
            .collect();
        ok(
            client.post(&path, &json!({ "messages": messages })),
            "seeding speakers",
        )?;
    }
    Ok(())
}

/// Messages `from..to` appended to the session `long`.
fn grow_messages(client: &Client, c: &Ctx, from: usize, to: usize, rng: &mut Rng) -> Result<()> {
    let path = format!("/v1/spaces/{}/messages", encode(&c.space));
    let ids: Vec<usize> = (from..to).collect();
    for chunk in ids.chunks(500) {
        let messages: Vec<Value> = chunk
            .iter()
            .map(|&i| {
                json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                    "text": format!("Note {i}: parcel {} is at pier {}.", nonce(rng), i % 97)})
            })
            .collect();
        ok(
            client.post(&path, &json!({"session_id": "long", "messages": messages})),
            "seeding messages",
        )?;
    }
    Ok(())
}

/// Small runs `t{from}..t{to}`.
fn grow_trajectories(client: &Client, c: &Ctx, from: usize, to: usize, _: &mut Rng) -> Result<()> {
    let path = format!("/v1/spaces/{}/trajectories", encode(&c.space));
    let ids: Vec<usize> = (from..to).collect();
    for chunk in ids.chunks(300) {
        let runs: Vec<Value> = chunk.iter().map(|&i| small_run(&format!("t{i}"))).collect();
        ok(
            client.post(&path, &json!({ "trajectories": runs })),
            "seeding trajectories",
        )?;
    }
    Ok(())
}

/// The run `t0`, the probes' own, replaced by one of `to` states.
fn grow_states(client: &Client, c: &Ctx, _from: usize, to: usize, rng: &mut Rng) -> Result<()> {
    let states: Vec<Value> = (0..to)
        .map(|i| {
            json!({"url": format!("http://shop/p/{i}"), "action": format!("click [{i}] link 'Next'"),
                "observation": format!("[{i}] link 'Next'\nItem {} costs ${}", nonce(rng), i % 300)})
        })
        .collect();
    let _ = client.delete(&format!("/v1/spaces/{}/trajectories/t0", encode(&c.space)));
    ok(
        client.post(
            &format!("/v1/spaces/{}/trajectories", encode(&c.space)),
            &json!({"trajectories": [{"id": "t0", "goal": "find the coupon", "states": states}]}),
        ),
        "seeding states",
    )
}

/// Spaces `scale-spaces-{from}..` of one session each.
fn grow_spaces(client: &Client, _c: &Ctx, from: usize, to: usize, rng: &mut Rng) -> Result<()> {
    for i in from..to {
        let n = nonce(rng);
        let (v, _) = crate::corpus::session("s0", &n, rng);
        ok(
            client.post(&format!("/v1/spaces/scale-spaces-{i}/sessions"), &v),
            "seeding spaces",
        )?;
    }
    Ok(())
}

/// Once, 200 sessions whose metadata `k` the filters ask for.
fn grow_filtered(client: &Client, c: &Ctx, from: usize, _to: usize, rng: &mut Rng) -> Result<()> {
    if from > 0 {
        return Ok(());
    }
    batches(client, &c.space, 0, 200, |i| {
        let n = nonce(rng);
        let mut v = crate::corpus::session(&format!("s{i}"), &n, rng).0;
        v["metadata"] = json!({ "k": i });
        v
    })
}

/// A filter of `n` conditions on the metadata field `k`.
fn filter_of(n: usize) -> Value {
    json!({ "or": (0..n).map(|i| json!({"field": "metadata.k", "op": "eq", "value": i})).collect::<Vec<_>>() })
}

/// Every (method, route) the served spec lists, as probes name them.
fn spec_routes(client: &Client) -> Result<BTreeSet<String>> {
    let spec = client
        .get("/v1/openapi.json")
        .map_err(anyhow::Error::msg)?
        .body;
    let mut out = BTreeSet::new();
    for (path, ops) in spec["paths"].as_object().into_iter().flatten() {
        for method in ops.as_object().into_iter().flatten().map(|(m, _)| m) {
            if ["get", "post", "delete", "put", "patch"].contains(&method.as_str()) {
                out.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    Ok(out)
}

/// Median of the values (of an odd count, the middle one).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// 2 to the least-squares slope of log(CPU) over log(N), over the sizes above the floor.
fn growth(sizes: &[usize], cpu_ms: &[f64]) -> Option<f64> {
    let points: Vec<(f64, f64)> = sizes
        .iter()
        .zip(cpu_ms)
        .filter(|(_, &ms)| ms >= FLOOR_MS)
        .map(|(&n, &ms)| ((n as f64).log2(), ms.log2()))
        .collect();
    if points.is_empty() {
        return None;
    }
    if points.len() == 1 {
        return Some(1.0);
    }
    let k = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / k,
        points.iter().map(|p| p.1).sum::<f64>() / k,
    );
    let cov: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let var: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    Some(2f64.powf(cov / var))
}

/// Makes the next measurement cold: a session written to the measured space and removed
/// again moves that space's generation (caches of derived state are kept per space, so a
/// write anywhere else would leave them warm) and leaves its content as the dimension
/// grew it; a recall commits the text index. None of it is measured.
fn cold(client: &Client, space: &str, k: usize) -> Result<()> {
    let s = format!("/v1/spaces/{}", encode(space));
    let id = format!("scaling-cold-{k}");
    // The same text every time: its vectors are cached, so this embeds nothing.
    ok(
        client.post(
            &format!("{s}/sessions"),
            &two_messages(&id, "Scratch write."),
        ),
        "cold write",
    )?;
    ok(
        send(client, &delete(format!("{s}/sessions/{id}"))),
        "cold removal",
    )?;
    ok(
        client.post(
            "/v1/spaces/scale-scratch/recall",
            &json!({"query": "Scratch write."}),
        ),
        "scratch recall",
    )
}

/// One cold measurement of a probe (see [`cold`] and [`settle`]): the server's CPU
/// milliseconds on it, and what was wrong with its answer, if anything.
fn measure(
    client: &Client,
    pid: u32,
    space: &str,
    p: &Probe,
    k: usize,
) -> Result<(f64, Option<String>)> {
    for r in &p.prepare {
        ok(send(client, r), &format!("preparing {}", p.name))?;
    }
    cold(client, space, k)?;
    settle(pid)?;
    let before = cpu_ns(pid)?;
    let answer = send(client, &p.req);
    let spent = cpu_ns(pid)?.saturating_sub(before);
    let wrong = match answer {
        Ok(r) if answered(&r) => None,
        Ok(r) => Some(format!(
            "HTTP {} {}",
            r.status,
            r.text.chars().take(200).collect::<String>()
        )),
        Err(e) => bail!("{}: {e}", p.name),
    };
    Ok((spent as f64 / 1e6, wrong))
}

pub fn run(
    cairn: &Cairn,
    opts: &ScalingOptions,
    mut progress: impl FnMut(&str),
) -> Result<ScalingReport> {
    let t0 = std::time::Instant::now();
    // Limits off: seeding sends large requests, and every request must run to the end
    // to be measured (the work deadline would cut the very rows this looks for).
    let server: Server = cairn.serve(&[
        "--max-request-ms",
        "0",
        "--max-body-bytes",
        "268435456",
        "--max-request-messages",
        "1000000",
        "--max-batch-sessions",
        "1000000",
    ])?;
    let client = server.client.clone();
    let mut report = ScalingReport {
        base: opts.base,
        doublings: opts.doublings,
        reps: opts.reps,
        ..Default::default()
    };
    let probed: BTreeSet<String> = route_probes(&Ctx::new("x"), 0)
        .into_iter()
        .map(|p| match p.name.strip_prefix("mcp ") {
            Some(_) => "POST /mcp".to_string(),
            None => p.name.split(" (").next().unwrap_or(&p.name).to_string(),
        })
        .collect();
    report.unprobed_routes = spec_routes(&client)?
        .into_iter()
        .filter(|r| !probed.contains(r))
        .collect();
    let mut rng = Rng(opts.seed);
    let mut k = 0usize;
    cold(&client, "scale-scratch", 0)?;
    let chosen = DIMENSIONS
        .iter()
        .filter(|d| opts.only.is_empty() || opts.only.iter().any(|n| n == d.name));
    for dim in chosen {
        let mut rows: Vec<Row> = Vec::new();
        let mut have = 0;
        let mut ctx = dim.ctx();
        baseline(&client, dim, &ctx)?;
        for (step, &n) in dim.sizes(opts).iter().enumerate() {
            progress(&format!("{}: growing to {n}", dim.name));
            dim.grow(&client, &ctx, have, n, &mut rng)?;
            have = n;
            if dim.conditions {
                ctx.filter = filter_of(n);
            }
            progress(&format!("{}: measuring at {n}", dim.name));
            let names: Vec<String> = route_probes(&ctx, 0)
                .into_iter()
                .map(|p| p.name)
                .filter(|p| dim.probes.is_none_or(|only| only.contains(&p.as_str())))
                .collect();
            // Repetitions go round the probes: a slow spell of the machine lands on one
            // sample of many rows, which their medians drop, rather than on every sample
            // of one row (all of a row's samples in a row moved single rows by 0.3x
            // between runs).
            let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(opts.reps); names.len()];
            for _ in 0..opts.reps.max(1) {
                for (name, s) in names.iter().zip(samples.iter_mut()) {
                    k += 1;
                    let Some(p) = route_probes(&ctx, k).into_iter().find(|p| &p.name == name)
                    else {
                        continue;
                    };
                    let (ms, wrong) = measure(&client, server.pid, &ctx.space, &p, k)
                        .with_context(|| format!("{} at {n}", dim.name))?;
                    if let Some(wrong) = wrong {
                        report
                            .errors
                            .push(format!("{} at {n}, {name}: {wrong}", dim.name));
                    }
                    s.push(ms);
                }
            }
            for (i, (name, s)) in names.iter().zip(samples).enumerate() {
                if step == 0 {
                    rows.push(Row {
                        dimension: dim.name.to_string(),
                        probe: name.clone(),
                        sizes: Vec::new(),
                        cpu_ms: Vec::new(),
                        growth: None,
                    });
                }
                if let Some(row) = rows.get_mut(i) {
                    row.sizes.push(n);
                    row.cpu_ms.push(median(s));
                }
            }
        }
        for mut row in rows {
            row.growth = growth(&row.sizes, &row.cpu_ms);
            if row.growth.is_some_and(|g| g > LINEAR) {
                report
                    .superlinear
                    .push(format!("{}: {}", row.dimension, row.probe));
            }
            report.rows.push(row);
        }
    }
    server.stop()?;
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_is_the_fitted_ratio_per_doubling() {
        let sizes = [100, 200, 400, 800];
        let linear = growth(&sizes, &[10.0, 20.0, 40.0, 80.0]).unwrap();
        assert!((linear - 2.0).abs() < 1e-9, "{linear}");
        let quadratic = growth(&sizes, &[10.0, 40.0, 160.0, 640.0]).unwrap();
        assert!((quadratic - 4.0).abs() < 1e-9, "{quadratic}");
        assert_eq!(growth(&sizes, &[1.0, 1.0, 2.0, 1.0]), None);
        // Points under the floor do not count.
        let g = growth(&sizes, &[1.0, 6.0, 6.0, 6.0]).unwrap();
        assert!((g - 1.0).abs() < 1e-9, "{g}");
    }

    #[test]
    fn every_dimension_and_probe_has_a_name_of_its_own() {
        let names: Vec<&str> = DIMENSIONS.iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [
                "speakers",
                "names",
                "sessions",
                "messages per session",
                "versions of one subject",
                "subjects",
                "trajectories",
                "states per trajectory",
                "spaces",
                "filter conditions"
            ]
        );
        let o = ScalingOptions::default();
        assert_eq!(DIMENSIONS[0].sizes(&o), [250, 500, 1000, 2000]);
        assert_eq!(DIMENSIONS[9].sizes(&o), [15, 30, 60, 120]);
        // A probe is found by its name: two of one name would measure the first twice.
        let probes: Vec<String> = route_probes(&DIMENSIONS[0].ctx(), 0)
            .into_iter()
            .map(|p| p.name)
            .collect();
        let distinct: BTreeSet<&String> = probes.iter().collect();
        assert_eq!(distinct.len(), probes.len(), "{probes:?}");
        for d in DIMENSIONS {
            for p in d.probes.into_iter().flatten() {
                assert!(probes.iter().any(|n| n == p), "{}: {p}", d.name);
            }
        }
    }

    #[test]
    fn names_are_distinct_and_capitalized() {
        let names: BTreeSet<String> = (0..5000).map(name).collect();
        assert_eq!(names.len(), 5000);
        assert!(names
            .iter()
            .all(|n| n.chars().next().unwrap().is_uppercase()));
    }
}
