//! The canary property test of issue 43: a scoped request answers as if the space held
//! only what its scope sees. Generated spaces of several end users, every record carrying
//! canary tokens of its own (in messages, facts, names, metadata, ids); random scopes
//! (users, groups, sessions, `as_of` over dated, undated and later-recorded sessions);
//! every read route and MCP tool with each scope, every format, `explain` on. No answer
//! may carry a canary of a record its scope does not see, and a recall's `explain`
//! counts must equal those of the same request on a space holding only the scope's
//! records. Runs on the embedded store and, with `CAIRN_TEST_DATABASE_URL`, on
//! PostgreSQL: each pushes the scope down its own way. A model-free embedder (word
//! hashing) keeps it fast: which words embed close is beside the point.
//!
//! Issue 53 adds keys pinned to a user's partition: the same routes through such a key,
//! with no filter or with a filter naming another user, see that user's records alone,
//! and records of others asked for by id (sessions, memories) or in an export are absent.
//! Then forgets: of an exchange (a message and the reply to it) and of a whole user (a
//! partition); no answer may carry what went, and the other users stay.
mod common;
use cairn::{Memory, MemoryConfig};
use cairn_store_postgres::PgStore;
use cairn_testkit::HashEmbedder;
use common::{serve, tool, Server, ADMIN};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const USERS: usize = 3;

/// One generated session: its JSON and the canaries it carries.
#[derive(Debug, Clone)]
struct Sess {
    user: usize,
    json: Value,
    id: String,
    date: Option<String>,
    group: Option<String>,
    tokens: Vec<String>,
}

/// A session's shape as generated: dated (month, day) or not, one-to-one or a group
/// chat (of the user's group 0 or 1).
type Shape = (Option<(u32, u32)>, Option<u8>);

/// Words no other text holds: `zq` and letters from a seed.
struct Tokens(u64);

impl Tokens {
    fn next(&mut self) -> String {
        let mut out = String::from("zq");
        for _ in 0..7 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            out.push((b'a' + (self.0 % 26) as u8) as char);
        }
        out
    }
}

fn capital(t: &str) -> String {
    let mut c = t.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Sessions of `USERS` users from their shapes. A user's names, project and group
/// names are canaries of every session that holds them.
fn world(seed: u64, shapes: &[Vec<Shape>]) -> Vec<Sess> {
    let mut t = Tokens(seed | 1);
    let mut out = Vec::new();
    for (user, mine) in shapes.iter().enumerate() {
        let names = [capital(&t.next()), capital(&t.next())];
        let project = capital(&t.next());
        let groups = [format!("grp-{}", t.next()), format!("grp-{}", t.next())];
        for (date, group) in mine {
            let id = format!("s-{}", t.next());
            let tag = t.next();
            let date = date.map(|(m, d)| format!("2024-{m:02}-{d:02}"));
            let mut tokens = vec![id.clone(), tag.clone()];
            let (messages, group) = match group {
                None => {
                    let w: Vec<String> = (0..4).map(|_| t.next()).collect();
                    tokens.extend(w.iter().cloned());
                    let m = json!([
                        {"role": "user", "text": format!("My code word is {}.", w[0])},
                        {"role": "user", "text": format!("My locker code is {}.", w[1])},
                        {"role": "user", "text": format!("I'm the {} lead on the project.", w[2])},
                        {"role": "assistant", "text": format!("Noted, I will remember {}.", w[3])},
                    ]);
                    (m, None)
                }
                Some(g) => {
                    let w: Vec<String> = (0..3).map(|_| t.next()).collect();
                    let place = capital(&t.next());
                    let g = groups[*g as usize % 2].clone();
                    tokens.extend(w.iter().cloned());
                    tokens.extend([place.clone(), g.clone(), project.clone()]);
                    tokens.extend(names.iter().cloned());
                    let m = json!([
                        {"speaker": names[0], "text": format!("The budget for Project {project} is {}.", w[0])},
                        {"speaker": names[1], "text": format!("The launch date is {}.", w[1])},
                        {"speaker": names[1], "text": format!("{} is our {} lead.", names[0], w[2])},
                        {"speaker": names[0], "text": format!("Thanks {}, I flew to {place} yesterday.", names[1])},
                    ]);
                    (m, Some(g))
                }
            };
            // A metadata key of this user's alone: what a filter warning may name.
            let mut json = json!({"id": id, "messages": messages,
                                  "metadata": {"user_id": format!("u{user}"), "tag": tag,
                                               format!("plan_u{user}"): "basic"}});
            if let Some(d) = &date {
                json["date"] = json!(d);
            }
            if let Some(g) = &group {
                json["group"] = json!(g);
            }
            out.push(Sess {
                user,
                json,
                id,
                date,
                group,
                tokens,
            });
        }
    }
    out
}

/// A scope as every surface takes it (filter and as_of), with what recall takes besides.
#[derive(Debug, Clone)]
struct Scope {
    filter: Value,
    as_of: Option<String>,
    /// Recall's own narrowing (`groups`, `sessions`), equal to the filter's.
    recall_extra: Value,
    /// Through a key pinned to this user's partition (made when the world is stored).
    pin: Option<usize>,
    key: Option<String>,
}

fn admits(scope: &Scope, s: &Sess) -> bool {
    let f = &scope.filter;
    let user_ok = f["user_id"]
        .as_str()
        .is_none_or(|u| u == format!("u{}", s.user));
    let group_ok = f["group"]
        .as_str()
        .is_none_or(|g| s.group.as_deref() == Some(g));
    let session_ok = f["session_id"]["in"]
        .as_array()
        .is_none_or(|ids| ids.iter().any(|i| i == &json!(s.id)));
    // An undated session is recorded now: seen as of a time in the future only.
    let time_ok = match (&scope.as_of, &s.date) {
        (None, _) => true,
        (Some(a), Some(d)) => d.as_str() <= &a[..10],
        (Some(a), None) => a.as_str() >= "2100",
    };
    let pin_ok = scope.pin.is_none_or(|u| u == s.user);
    user_ok && group_ok && session_ok && time_ok && pin_ok
}

fn scopes(world: &[Sess], pick: usize) -> Vec<Scope> {
    let mid = "2024-06-15".to_string();
    let future = "2100-01-01".to_string();
    let plain = |filter: Value, as_of: Option<String>| Scope {
        filter,
        as_of,
        recall_extra: json!({}),
        pin: None,
        key: None,
    };
    let pinned = |u: usize, filter: Value, as_of: Option<String>| Scope {
        pin: Some(u),
        ..plain(filter, as_of)
    };
    let mut out = Vec::new();
    for u in 0..USERS {
        out.push(plain(json!({"user_id": format!("u{u}")}), None));
        out.push(plain(
            json!({"user_id": format!("u{u}")}),
            Some(mid.clone()),
        ));
    }
    out.push(plain(json!({}), Some(mid.clone())));
    // A pinned key that forgets the filter, or names another user's.
    let u = pick % USERS;
    out.push(pinned(u, json!({}), None));
    out.push(pinned(u, json!({}), Some(mid.clone())));
    out.push(pinned(
        u,
        json!({"user_id": format!("u{}", (u + 1) % USERS)}),
        None,
    ));
    out.push(plain(json!({"user_id": "u0"}), Some(future)));
    let groups: BTreeSet<&str> = world.iter().filter_map(|s| s.group.as_deref()).collect();
    if let Some(g) = groups.iter().nth(pick % groups.len().max(1)) {
        out.push(Scope {
            recall_extra: json!({"groups": [g]}),
            ..plain(json!({"group": g}), None)
        });
    }
    let some: Vec<&str> = world
        .iter()
        .enumerate()
        .filter(|(i, _)| (i + pick).is_multiple_of(3))
        .map(|(_, s)| s.id.as_str())
        .collect();
    out.push(Scope {
        recall_extra: json!({"sessions": some}),
        ..plain(json!({"session_id": {"in": some}}), None)
    });
    out
}

/// Percent-encodes a query parameter's value.
fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn query(scope: &Scope, extra: &str) -> String {
    let mut q = format!("?filter={}", enc(&scope.filter.to_string()));
    if let Some(a) = &scope.as_of {
        q += &format!("&as_of={}", enc(a));
    }
    q + extra
}

/// Fails when an answer carries a canary the scope does not see.
fn clean(what: &str, body: &str, forbidden: &[String]) -> Result<(), TestCaseError> {
    SEEN_BYTES.with(|b| b.borrow_mut().push_str(&body.to_lowercase()));
    let lower = body.to_lowercase();
    for t in forbidden {
        prop_assert!(
            !lower.contains(&t.to_lowercase()),
            "{what} carries {t}, a canary its scope does not see: {body}"
        );
    }
    Ok(())
}

/// What a scope may and may not see of a world.
fn split(world: &[Sess], scope: &Scope) -> (Vec<Sess>, Vec<String>) {
    let seen: Vec<Sess> = world.iter().filter(|s| admits(scope, s)).cloned().collect();
    let allowed: BTreeSet<&String> = seen.iter().flat_map(|s| &s.tokens).collect();
    let forbidden: BTreeSet<String> = world
        .iter()
        .flat_map(|s| &s.tokens)
        .filter(|t| !allowed.contains(t))
        .cloned()
        .collect();
    (seen, forbidden.into_iter().collect())
}

fn recall_body(q: &str, format: &str, scope: &Scope) -> Value {
    let mut body = json!({"query": q, "top_k": 20, "token_budget": 4000,
                          "format": format, "explain": true, "filter": scope.filter});
    if let Some(a) = &scope.as_of {
        body["as_of"] = json!(a);
    }
    for (k, v) in scope.recall_extra.as_object().into_iter().flatten() {
        body[k] = v.clone();
    }
    body
}

/// Every read route and tool with one scope on the shared space; recall's counts against
/// the same recall on `only`, a space holding the scope's records alone.
fn check_scope(
    s: &Server,
    shared: &str,
    only: &str,
    world: &[Sess],
    scope: &Scope,
) -> Result<(), TestCaseError> {
    let (seen, forbidden) = split(world, scope);
    let key = scope.key.as_deref().unwrap_or(ADMIN);
    SEEN_BYTES.with(|b| b.borrow_mut().clear());
    let probe = forbidden.first().cloned().unwrap_or_default();
    let queries = [
        "what is my locker code?".to_string(),
        "who is the lead and what is the launch date?".to_string(),
        format!("code word {probe}"),
    ];
    for q in &queries {
        for format in ["raw", "synthesized"] {
            let body = recall_body(q, format, scope);
            let r = s.post("/v1/spaces/{space}/recall", &[shared], key, &body);
            prop_assert_eq!(r.status, 200, "{}", r.text);
            clean(
                &format!("recall {q:?} {format} {scope:?}"),
                &r.text,
                &forbidden,
            )?;
            if format == "synthesized" && !seen.is_empty() {
                let alone = s.post("/v1/spaces/{space}/recall", &[only], ADMIN, &body);
                prop_assert_eq!(alone.status, 200, "{}", alone.text);
                prop_assert_eq!(
                    &r.body["explain"]["counts"],
                    &alone.body["explain"]["counts"],
                    "explain counts of {:?} {:?} differ from a space holding only its records",
                    q,
                    scope
                );
            }
        }
    }
    let names: BTreeSet<String> = world
        .iter()
        .filter(|x| x.group.is_some())
        .flat_map(|x| x.tokens.iter().filter(|t| t.starts_with("Zq")).cloned())
        .collect();
    let mut gets: Vec<(&str, Vec<String>, String)> = vec![
        (
            "/v1/spaces/{space}/history",
            vec![shared.into()],
            query(scope, "&subject=locker%20code"),
        ),
        (
            "/v1/spaces/{space}/history",
            vec![shared.into()],
            query(scope, "&subject=launch%20date"),
        ),
        (
            "/v1/spaces/{space}/subjects",
            vec![shared.into()],
            query(scope, ""),
        ),
        (
            "/v1/spaces/{space}/speakers",
            vec![shared.into()],
            query(scope, ""),
        ),
        (
            "/v1/spaces/{space}/profiles/{speaker}",
            vec![shared.into(), "user".into()],
            query(scope, ""),
        ),
        (
            "/v1/spaces/{space}/entities",
            vec![shared.into()],
            query(scope, ""),
        ),
        (
            "/v1/spaces/{space}/memories",
            vec![shared.into()],
            query(scope, "&limit=1000"),
        ),
    ];
    if scope.as_of.is_none() {
        gets.push((
            "/v1/spaces/{space}/sessions",
            vec![shared.into()],
            format!("?filter={}&limit=1000", enc(&scope.filter.to_string())),
        ));
    }
    for n in &names {
        gets.push((
            "/v1/spaces/{space}/profiles/{speaker}",
            vec![shared.into(), n.clone()],
            query(scope, ""),
        ));
        gets.push((
            "/v1/spaces/{space}/entities/{name}",
            vec![shared.into(), n.clone()],
            query(scope, ""),
        ));
    }
    for (route, args, q) in &gets {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = s.call("GET", route, &args, q, Some(key), None);
        // An answer about a name the scope does not see must not find it (its 404 names
        // what was asked, nothing else).
        if args.iter().any(|a| forbidden.iter().any(|f| f == a)) {
            prop_assert_eq!(r.status, 404, "{} {:?} {}: {}", route, args, q, r.text);
            continue;
        }
        prop_assert!(
            [200, 404, 422].contains(&r.status),
            "{route} {args:?} {q}: {} {}",
            r.status,
            r.text
        );
        clean(&format!("GET {route} {args:?} {q}"), &r.text, &forbidden)?;
    }
    let mut scope_args = json!({"space": shared, "filter": scope.filter});
    if let Some(a) = &scope.as_of {
        scope_args["as_of"] = json!(a);
    }
    let with = |extra: Value| {
        let mut a = scope_args.clone();
        for (k, v) in extra.as_object().into_iter().flatten() {
            a[k] = v.clone();
        }
        a
    };
    let mut tools = vec![
        (
            "recall",
            with(json!({"query": "what is my locker code?", "top_k": 20})),
        ),
        (
            "recall",
            with(json!({"query": format!("code word {probe}"), "format": "raw"})),
        ),
        ("history", with(json!({"subject": "locker code"}))),
        ("subjects", with(json!({}))),
        ("profile", with(json!({"speaker": "user"}))),
        ("entities", with(json!({}))),
    ];
    for n in names.iter().filter(|n| !forbidden.contains(n)) {
        tools.push(("entities", with(json!({"name": n}))));
        tools.push(("profile", with(json!({"speaker": n}))));
    }
    for (name, args) in tools {
        let (_, out) = tool(s, key, name, args.clone());
        clean(&format!("tool {name} {args}"), &out.to_string(), &forbidden)?;
    }
    if scope.pin.is_some() {
        check_pinned_reads(s, shared, world, scope, key)?;
    }
    // The answers show what the scope sees: a check of answers that show nothing could
    // not fail.
    let shown = SEEN_BYTES.with(|b| {
        let all = b.borrow();
        seen.iter()
            .flat_map(|x| &x.tokens)
            .filter(|t| all.contains(&t.to_lowercase()))
            .count()
    });
    let held: usize = seen.iter().map(|x| x.tokens.len()).sum();
    prop_assert!(
        held == 0 || shown * 2 >= held,
        "the answers of {scope:?} show {shown} of the {held} canaries it sees"
    );
    Ok(())
}

/// What only a pinned key is held to: another user's records asked for by id are absent
/// (the same 404 as an unknown id), and its export holds its own sessions alone.
fn check_pinned_reads(
    s: &Server,
    shared: &str,
    world: &[Sess],
    scope: &Scope,
    key: &str,
) -> Result<(), TestCaseError> {
    // A filter on a metadata key only another user's sessions carry: the admin key sees
    // it carried; the pinned key is warned that nothing it may see carries it, as if the
    // other users' sessions (and their key names) were not in the space.
    let me = scope.pin.unwrap_or(0);
    let warned = |key: &str, field: String| -> Result<bool, TestCaseError> {
        let body = json!({"query": "code word", "filter": {field: "basic"}});
        let r = s.post("/v1/spaces/{space}/recall", &[shared], key, &body);
        prop_assert_eq!(r.status, 200, "{}", r.text);
        Ok(r.body["warnings"][0]["code"] == json!("unknown_filter_key"))
    };
    for u in 0..USERS {
        let plan = format!("plan_u{u}");
        let held = world.iter().any(|x| x.user == u);
        prop_assert_eq!(warned(ADMIN, plan.clone())?, !held, "admin, {}", plan);
        prop_assert_eq!(
            warned(key, plan.clone())?,
            u != me || !held,
            "pinned, {}",
            plan
        );
    }
    prop_assert!(
        warned(ADMIN, "userid".into())?,
        "a misspelt key is warned of"
    );
    for other in world.iter().filter(|x| Some(x.user) != scope.pin) {
        let r = s.call(
            "GET",
            "/v1/spaces/{space}/sessions/{session}",
            &[shared, &other.id],
            "",
            Some(key),
            None,
        );
        prop_assert_eq!(r.status, 404, "another user's session: {}", r.text);
        let unit = format!("turn:{}:0", other.id);
        let r = s.call(
            "GET",
            "/v1/spaces/{space}/memories/{id}",
            &[shared, &unit],
            "",
            Some(key),
            None,
        );
        // The same answer as an id nobody stored (it names the id asked, nothing else).
        prop_assert_eq!(r.status, 404, "another user's memory: {}", r.text);
        prop_assert_eq!(&r.body["code"], &json!("memory_not_found"));
    }
    // An export is the partition's whole (no time, no filter): it holds no other user's.
    let pinned = Scope {
        pin: scope.pin,
        ..Scope {
            filter: json!({}),
            as_of: None,
            recall_extra: json!({}),
            pin: None,
            key: None,
        }
    };
    let (_, others) = split(world, &pinned);
    let r = s.call(
        "GET",
        "/v1/spaces/{space}/export",
        &[shared],
        "",
        Some(key),
        None,
    );
    prop_assert_eq!(r.status, 200, "{}", r.text);
    clean("export through a pinned key", &r.text, &others)?;
    Ok(())
}

/// Fails when any answer about the space carries one of `gone` (forgotten text), or when
/// none carries one of `kept` (a check of empty answers could not fail).
fn check_gone(
    s: &Server,
    shared: &str,
    gone: &[String],
    kept: &[String],
) -> Result<(), TestCaseError> {
    let mut all = String::new();
    for q in gone.iter().take(3).chain(kept.iter().take(1)) {
        for format in ["raw", "synthesized"] {
            let body = json!({"query": format!("code word lead {q}"), "top_k": 20,
                              "token_budget": 4000, "format": format, "min_relevance": -1});
            let r = s.post("/v1/spaces/{space}/recall", &[shared], ADMIN, &body);
            prop_assert_eq!(r.status, 200, "{}", r.text);
            all += &r.text;
        }
    }
    for (route, q) in [
        ("/v1/spaces/{space}/memories", "?limit=1000&kind=all"),
        ("/v1/spaces/{space}/sessions", "?limit=1000"),
        ("/v1/spaces/{space}/subjects", ""),
        ("/v1/spaces/{space}/entities", ""),
        ("/v1/spaces/{space}/speakers", ""),
        ("/v1/spaces/{space}/export", ""),
    ] {
        let r = s.call("GET", route, &[shared], q, Some(ADMIN), None);
        prop_assert_eq!(r.status, 200, "{} {}", route, r.text);
        all += &r.text;
    }
    let (_, out) = tool(
        s,
        ADMIN,
        "recall",
        json!({"space": shared, "query": "code word", "top_k": 20}),
    );
    all += &out.to_string();
    let lower = all.to_lowercase();
    for t in gone {
        prop_assert!(
            !lower.contains(&t.to_lowercase()),
            "{t} was forgotten, yet an answer carries it"
        );
    }
    prop_assert!(
        kept.is_empty() || kept.iter().any(|t| lower.contains(&t.to_lowercase())),
        "no answer shows what was kept"
    );
    Ok(())
}

/// Forgets an exchange of one of the user's one-to-one sessions (its third message, a
/// statement, and the assistant's reply that echoes a word of its own), then the user
/// whole; after each, nothing forgotten is in any answer and the others' records stay.
fn forget_and_check(
    s: &Server,
    shared: &str,
    world: &[Sess],
    user: usize,
) -> Result<(), TestCaseError> {
    let others: Vec<String> = world
        .iter()
        .filter(|x| x.user != user)
        .map(|x| x.id.clone())
        .collect();
    if let Some(one) = world.iter().find(|x| x.user == user && x.group.is_none()) {
        let r = s.call(
            "DELETE",
            "/v1/spaces/{space}/sessions/{session}/messages/{message}",
            &[shared, &one.id, "2"],
            "?exchange=true",
            Some(ADMIN),
            None,
        );
        prop_assert_eq!(r.status, 200, "{}", r.text);
        // tokens: id, tag, then the four messages' words; the third and fourth went.
        check_gone(s, shared, &one.tokens[4..6], &one.tokens[2..4])?;
    }
    let r = s.post(
        "/v1/spaces/{space}/partitions/forget",
        &[shared],
        ADMIN,
        &json!({"partition": {"user_id": format!("u{user}")}}),
    );
    prop_assert_eq!(r.status, 200, "{}", r.text);
    let mine: BTreeSet<&String> = world
        .iter()
        .filter(|x| x.user == user)
        .flat_map(|x| &x.tokens)
        .collect();
    let theirs: BTreeSet<&String> = world
        .iter()
        .filter(|x| x.user != user)
        .flat_map(|x| &x.tokens)
        .collect();
    let gone: Vec<String> = mine.difference(&theirs).map(|t| (*t).clone()).collect();
    check_gone(s, shared, &gone, &others)
}

thread_local! {
    /// Every answer of the scope being checked, lowercased.
    static SEEN_BYTES: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

static CASE: AtomicUsize = AtomicUsize::new(0);

fn run_cases(s: &Server, cases: u32) {
    let shapes = prop::collection::vec(
        prop::collection::vec(
            (
                prop::option::weighted(0.8, (1u32..=12, 1u32..=28)),
                prop::option::weighted(0.5, 0u8..2),
            ),
            2..5,
        ),
        USERS..=USERS,
    );
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(
        &(any::<u64>(), shapes, 0usize..8),
        |(seed, shapes, pick)| {
            let case = CASE.fetch_add(1, Ordering::SeqCst);
            let world = world(seed, &shapes);
            let shared = format!("c{case}-shared");
            let all: Vec<Value> = world.iter().map(|x| x.json.clone()).collect();
            let r = s.post(
                "/v1/spaces/{space}/sessions/batch",
                &[&shared],
                ADMIN,
                &json!({ "sessions": all }),
            );
            prop_assert!(r.status < 300, "{}", r.text);
            for (i, mut scope) in scopes(&world, pick).into_iter().enumerate() {
                if let Some(u) = scope.pin {
                    let k = s.post(
                        "/v1/keys",
                        &[],
                        ADMIN,
                        &json!({"spaces": [&shared], "partition": {"user_id": format!("u{u}")}}),
                    );
                    prop_assert_eq!(k.status, 201, "{}", k.text);
                    scope.key = k.body["token"].as_str().map(str::to_string);
                }
                let scope = &scope;
                let only = format!("c{case}-only{i}");
                let (seen, _) = split(&world, scope);
                if !seen.is_empty() {
                    let mine: Vec<Value> = seen.iter().map(|x| x.json.clone()).collect();
                    let r = s.post(
                        "/v1/spaces/{space}/sessions/batch",
                        &[&only],
                        ADMIN,
                        &json!({ "sessions": mine }),
                    );
                    prop_assert!(r.status < 300, "{}", r.text);
                }
                check_scope(s, &shared, &only, &world, scope)?;
            }
            forget_and_check(s, &shared, &world, pick % USERS)
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn config() -> MemoryConfig {
    MemoryConfig::default()
}

#[test]
fn no_answer_carries_a_canary_of_another_scope_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let memory = Memory::open_with_embedder(dir.path(), config(), Arc::new(HashEmbedder)).unwrap();
    let s = serve(memory, common::admin_config());
    run_cases(&s, 6);
}

#[test]
fn no_answer_carries_a_canary_of_another_scope_postgres() {
    let Some(base) = cairn_testkit::database_url("postgres canary test") else {
        return;
    };
    let admin = PgStore::connect(&base).expect("CAIRN_TEST_DATABASE_URL: cannot connect");
    admin
        .execute_sql("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        .expect("creating the vector extension");
    let schema = format!("cairn_canary_{}", std::process::id());
    admin
        .execute_sql(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
        .unwrap();
    admin
        .execute_sql(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options=-c%20search_path%3D{schema},public");
    Memory::migrate_postgres(&url).expect("migrating the test schema");
    let dir = tempfile::tempdir().unwrap();
    let memory =
        Memory::open_postgres_with_embedder(&url, dir.path(), config(), Arc::new(HashEmbedder))
            .unwrap();
    let mut s = serve(memory, common::admin_config());
    run_cases(&s, 4);
    s.stop();
    let _ = admin.execute_sql(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
}
