//! The dimensions `cairn reliability scaling` grows, one space each: what N counts, how
//! the space is grown to N, and what the probes name there.
use super::options::ScalingOptions;
use super::probes::{ok, small_run, two_messages, Ctx};
use crate::corpus::nonce;
use crate::fuzz::Rng;
use crate::serve::{encode, Client};
use anyhow::Result;
use serde_json::{json, Value};

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
pub(super) struct Dimension {
    pub(super) name: &'static str,
    space: &'static str,
    /// What the probes name in the space, where it is not [`Ctx::new`]'s.
    ctx: fn(&mut Ctx),
    grow: Grow,
    /// N counts the conditions of the probes' filter (from `base / 16`, at most the
    /// filter language's limit), not records.
    pub(super) conditions: bool,
    /// Probes measured (all when `None`).
    pub(super) probes: Option<&'static [&'static str]>,
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
pub(super) const DIMENSIONS: &[Dimension] = &[
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
    pub(super) fn ctx(&self) -> Ctx {
        let mut c = Ctx::new(self.space);
        (self.ctx)(&mut c);
        c
    }

    /// N at each size.
    pub(super) fn sizes(&self, o: &ScalingOptions) -> Vec<usize> {
        let base = o.base.max(2);
        let doubled = |first: usize| (0..=o.doublings).map(move |d| first << d);
        match self.conditions {
            false => doubled(base).collect(),
            true => doubled((base / 16).max(2))
                .take_while(|&n| n <= cairn_core::bounds::MAX_FILTER_CONDITIONS)
                .collect(),
        }
    }

    pub(super) fn grow(
        &self,
        client: &Client,
        c: &Ctx,
        from: usize,
        to: usize,
        rng: &mut Rng,
    ) -> Result<()> {
        match self.grow {
            Grow::Sessions(make) => batches(client, &c.space, from, to, |i| make(i, rng)),
            Grow::With(grow) => grow(client, c, from, to, rng),
        }
    }
}

/// What every probe reads besides the dimension's own data (the trajectory `t0` and a
/// fact about the budget for Atlas), where the dimension does not grow it itself: a
/// probe of a missing thing would measure a 404.
pub(super) fn baseline(client: &Client, dim: &Dimension, c: &Ctx) -> Result<()> {
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
pub(super) fn name(i: usize) -> String {
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
    )?;
    Ok(())
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
pub(super) fn filter_of(n: usize) -> Value {
    json!({ "or": (0..n).map(|i| json!({"field": "metadata.k", "op": "eq", "value": i})).collect::<Vec<_>>() })
}
