//! `cairn serve`, `cairn keys`, `cairn load` and `cairn mcp` as processes: keys created
//! while the server runs work at once and revoked ones stop at once; `cairn load`'s read
//! and write mixes run without errors and every acknowledged append is stored; a real MCP client
//! (rmcp) handshakes with `cairn mcp` over stdio and uses every tool.
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Creates a data directory and loads the embedding model (reading commands refuse a
/// directory that does not exist): how a test finds out whether the model is installed.
const PROBE: [&str; 6] = [
    "ingest",
    "--format",
    "jsonl",
    "--space",
    "probe",
    "/dev/null",
];

fn cairn(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("--dir").arg(dir).env_remove("CAIRN_ADMIN_KEY");
    c
}

/// Starts `cairn serve` on a free port; None (SKIPPED) without the embedding model.
fn serve(dir: &Path, extra: &[&str]) -> Option<(Child, String)> {
    let mut child = cairn(dir)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    match line.trim().strip_prefix("cairn serve: listening on ") {
        Some(url) => Some((child, url.to_string())),
        None => {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            let _ = child.wait();
            assert!(err.contains("embedding model"), "serve failed: {err}");
            cairn_testkit::model_missing(err.trim());
            None
        }
    }
}

fn request(
    method: &str,
    url: &str,
    key: Option<&str>,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    // No base: the path given is the whole URL.
    let client = cairn_load::Client::new("", key);
    let body = body.map(|b| b.to_string());
    let body = body.as_deref().map(|b| ("application/json", b.as_bytes()));
    let r = client
        .request(method, url, body, None)
        .unwrap_or_else(|e| panic!("{e}"));
    (r.status, r.body)
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn serve_with_keys_made_and_revoked_while_running_and_the_load_command() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let Some((mut server, url)) = serve(&dir, &[]) else {
        return;
    };
    let (status, body) = request("GET", &format!("{url}/v1/spaces"), None, None);
    assert_eq!((status, body["code"].as_str()), (401, Some("unauthorized")));

    let token = run_ok(cairn(&dir).args(["keys", "create", "--space", "a", "--label", "ci"]));
    let token = token.trim();
    assert!(token.starts_with("cairn_"), "{token}");
    let session = serde_json::json!({"id": "s1", "messages": [
        {"role": "user", "text": "My sister Noor lives in Tangier."},
        {"role": "assistant", "text": "Tangier is lovely."}]});
    let (status, _) = request(
        "POST",
        &format!("{url}/v1/spaces/a/sessions"),
        Some(token),
        Some(session),
    );
    assert_eq!(status, 200);
    let (_, recall) = request(
        "POST",
        &format!("{url}/v1/spaces/a/recall"),
        Some(token),
        Some(serde_json::json!({"query": "Where does Noor live?"})),
    );
    assert!(recall["context"].as_str().unwrap().contains("Tangier"));

    #[cfg(feature = "bench")]
    load_mixes(&dir, &url, token);

    let keys: serde_json::Value =
        serde_json::from_str(&run_ok(cairn(&dir).args(["--json", "keys", "list"]))).unwrap();
    assert_eq!(keys[0]["spaces"], serde_json::json!(["a"]));
    assert!(
        !keys.to_string().contains(token),
        "a listing never shows a token"
    );
    let id = keys[0]["id"].as_str().unwrap();
    run_ok(cairn(&dir).args(["keys", "revoke", id]));
    let (status, _) = request("GET", &format!("{url}/v1/spaces"), Some(token), None);
    assert_eq!(status, 401);

    // A key pinned to an end user: made by the CLI while the server runs, it reads that
    // user's sessions alone (s1 has no user) and tags what it writes.
    let pinned = run_ok(cairn(&dir).args([
        "keys",
        "create",
        "--space",
        "a",
        "--partition",
        r#"{"user_id": "u1"}"#,
    ]));
    let pinned = pinned.trim();
    let (_, me) = request("GET", &format!("{url}/v1/me"), Some(pinned), None);
    assert_eq!(
        me["partition"],
        serde_json::json!({"user_id": "u1"}),
        "{me}"
    );
    let (_, page) = request(
        "GET",
        &format!("{url}/v1/spaces/a/sessions"),
        Some(pinned),
        None,
    );
    assert_eq!(page["total"], 0, "{page}");
    let listed = run_ok(cairn(&dir).args(["keys", "list"]));
    assert!(listed.contains(r#"pinned {"user_id":"u1"}"#), "{listed}");
    let bad = cairn(&dir)
        .args([
            "keys",
            "create",
            "--space",
            "a",
            "--partition",
            r#"{"userid": "u1"}"#,
        ])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("partition"));

    // SIGTERM: the server drains and exits cleanly.
    run_ok(Command::new("kill").args(["-TERM", &server.id().to_string()]));
    assert!(server.wait().unwrap().success());

    let out = cairn(&dir)
        .args(["serve", "--bind", "0.0.0.0:0", "--no-auth"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
}

/// `cairn load` against the server: the read mix (seeding 20 messages) and the write
/// mix, whose every acknowledged append must be stored (four warm-up appends go to a
/// session of their own).
#[cfg(feature = "bench")]
fn load_mixes(dir: &Path, url: &str, token: &str) {
    let load = run_ok(cairn(dir).args([
        "--json",
        "load",
        "--url",
        url,
        "--key",
        token,
        "--space",
        "a",
        "--seed-messages",
        "20",
        "--concurrency",
        "4",
        "--duration",
        "1",
    ]));
    let report: serde_json::Value = serde_json::from_str(&load).unwrap();
    assert!(report["requests"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    assert_eq!(report["messages_in_space"], 22, "{report}");

    let load = run_ok(cairn(dir).args([
        "--json",
        "load",
        "--url",
        url,
        "--key",
        token,
        "--space",
        "a",
        "--mix",
        "write",
        "--sessions",
        "2",
        "--concurrency",
        "4",
        "--duration",
        "1",
    ]));
    let report: serde_json::Value = serde_json::from_str(&load).unwrap();
    let appended = report["write"]["requests"].as_u64().unwrap();
    assert!(appended > 0, "{report}");
    assert_eq!(
        (
            report["errors"].as_u64(),
            report["append_sessions"].as_u64()
        ),
        (Some(0), Some(2)),
        "{report}"
    );
    let (_, stats) = request(
        "GET",
        &format!("{url}/v1/spaces/a/stats"),
        Some(token),
        None,
    );
    assert_eq!(
        stats["messages"].as_u64(),
        Some(22 + 4 + appended),
        "{stats} {report}"
    );
}

#[test]
fn a_real_mcp_client_handshakes_with_cairn_mcp_over_stdio() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    use rmcp::ServiceExt;

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    // Probe for the model the way every CLI test does.
    let probe = cairn(&dir).args(PROBE).output().unwrap();
    if !probe.status.success() {
        let err = String::from_utf8_lossy(&probe.stderr);
        assert!(
            err.contains("embedding model"),
            "cairn spaces failed: {err}"
        );
        return cairn_testkit::model_missing(err.trim());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let transport = TokioChildProcess::new(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn")).configure(|c| {
                c.arg("--dir").arg(&dir).args(["mcp", "--space", "alice"]);
            }),
        )
        .unwrap();
        let client = ().serve(transport).await.unwrap();
        let info = client.peer_info().unwrap();
        assert_eq!(info.server_info.as_ref().unwrap().name, "cairn");
        assert!(info
            .instructions
            .as_deref()
            .unwrap_or("")
            .contains("recall"));
        let tools = client.list_all_tools().await.unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        names.sort();
        assert_eq!(
            names,
            [
                "entities",
                "forget",
                "history",
                "profile",
                "recall",
                "remember",
                "spaces",
                "subjects",
                "trajectory_context",
                "trajectory_manifest",
                "trajectory_match",
                "trajectory_quick_context",
                "trajectory_search",
                "trajectory_span",
                "trajectory_state",
                "trajectory_summary"
            ]
        );
        for t in &tools {
            assert!(t.description.as_deref().unwrap_or("").len() > 80, "{t:?}");
        }

        let call = |name: &'static str, args: serde_json::Value| {
            let params =
                CallToolRequestParams::new(name).with_arguments(args.as_object().unwrap().clone());
            let client = &client;
            async move {
                let r = client.call_tool(params).await.unwrap();
                let text = r.content[0].as_text().unwrap().text.clone();
                (r.is_error.unwrap_or(false), text)
            }
        };
        let (err, text) = call(
            "remember",
            serde_json::json!({"session_id": "c1", "messages": [
                {"role": "user", "text": "I keep my bike in the blue shed behind the house."},
                {"role": "assistant", "text": "Got it, the blue shed."}]}),
        )
        .await;
        assert!(!err, "{text}");
        let (err, text) = call(
            "recall",
            serde_json::json!({"query": "Where is my bike kept?"}),
        )
        .await;
        assert!(!err && text.contains("blue shed"), "{text}");
        let (err, text) = call("forget", serde_json::json!({"session_id": "c1"})).await;
        assert!(!err, "{text}");
        let (_, text) = call("recall", serde_json::json!({"query": "bike shed"})).await;
        assert!(!text.contains("blue shed"), "{text}");
        // A bad call is a tool error the model can read, not a broken session.
        let (err, text) = call(
            "recall",
            serde_json::json!({"query": "x", "as_of": "whenever"}),
        )
        .await;
        assert!(err && text.contains("whenever"), "{text}");

        // Forgetting by the memory id recall returns names the messages that went.
        let (err, _) = call(
            "remember",
            serde_json::json!({"session_id": "c2", "messages": [
                {"role": "user", "text": "My locker code at the gym is 4417."},
                {"role": "user", "text": "The gym is on Rua Augusta."}]}),
        )
        .await;
        assert!(!err);
        let (_, text) = call(
            "recall",
            serde_json::json!({"query": "What is my gym locker code?", "top_k": 1}),
        )
        .await;
        let hits: serde_json::Value = serde_json::from_str(&text).unwrap();
        let id = hits["hits"][0]["memory_id"].as_str().unwrap().to_string();
        let (err, text) = call("forget", serde_json::json!({"memory_id": id})).await;
        assert!(!err, "{text}");
        let gone: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(gone["session_id"], "c2", "{gone}");
        assert!(
            !gone["forgotten_messages"].as_array().unwrap().is_empty(),
            "{gone}"
        );
        let (_, text) = call(
            "recall",
            serde_json::json!({"query": "gym locker code 4417"}),
        )
        .await;
        assert!(!text.contains("4417"), "{text}");
        let (err, text) = call("forget", serde_json::json!({})).await;
        assert!(err && text.contains("memory_id"), "{text}");

        // The default space is made by its first write; another unknown name is refused.
        let (err, text) = call(
            "remember",
            serde_json::json!({"space": "alcie", "note": "The user likes tea."}),
        )
        .await;
        assert!(err && text.contains("\"alcie\" does not exist"), "{text}");
        assert!(text.contains("alice"), "the known spaces are named: {text}");
        client.cancel().await.unwrap();

        // A chat agent's connection: the memory tools only.
        let transport = TokioChildProcess::new(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn")).configure(|c| {
                c.arg("--dir")
                    .arg(&dir)
                    .args(["mcp", "--space", "alice", "--tools", "memory"]);
            }),
        )
        .unwrap();
        let client = ().serve(transport).await.unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools.len(), 8, "{tools:?}");
        assert!(tools.iter().all(|t| !t.name.starts_with("trajectory")));
        client.cancel().await.unwrap();
    });
}

/// The JSON-RPC answers `cairn mcp` gives to `lines` written to it at once, without
/// waiting for any answer (a pipelining client), by request id; None without the model.
fn pipelined(
    dir: &Path,
    args: &[&str],
    lines: &[serde_json::Value],
) -> Option<Vec<serde_json::Value>> {
    use std::io::Write;
    let probe = cairn(dir).args(PROBE).output().unwrap();
    if !probe.status.success() {
        cairn_testkit::model_missing(String::from_utf8_lossy(&probe.stderr).trim());
        return None;
    }
    let mut child = cairn(dir)
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}});
    let ready = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let mut all = vec![init, ready];
    all.extend(lines.iter().cloned());
    let text: String = all.iter().map(|l| format!("{l}\n")).collect();
    stdin.write_all(text.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Every request is answered before stdin closes: the answers are read first.
    let wanted = lines.iter().filter(|l| l.get("id").is_some()).count() + 1;
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    let mut line = String::new();
    while answers.len() < wanted {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        answers.push(serde_json::from_str::<serde_json::Value>(&line).unwrap());
    }
    drop(stdin);
    child.wait().unwrap();
    answers.sort_by_key(|a| a["id"].as_i64());
    Some(answers)
}

fn call(id: i64, name: &str, arguments: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                       "params": {"name": name, "arguments": arguments}})
}

/// What a tool answered, as JSON.
fn tool_answer(a: &serde_json::Value) -> serde_json::Value {
    let text = a["result"]["content"][0]["text"].as_str().unwrap_or("null");
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

#[test]
fn mcp_requests_pipelined_on_one_connection_take_effect_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let note = "The user is allergic to peanuts.";
    let q = "What is the user allergic to?";
    // remember, recall, forget, recall, remember, recall: each recall must see exactly
    // what the requests before it left.
    let Some(a) = pipelined(
        &dir,
        &["--space", "me", "--tools", "memory"],
        &[
            call(
                1,
                "remember",
                serde_json::json!({"note": note, "session_id": "n1"}),
            ),
            call(2, "recall", serde_json::json!({"query": q, "top_k": 1})),
            call(3, "forget", serde_json::json!({"session_id": "n1"})),
            call(4, "recall", serde_json::json!({"query": q, "top_k": 1})),
            call(
                5,
                "remember",
                serde_json::json!({"note": "The user is allergic to shellfish."}),
            ),
            call(6, "recall", serde_json::json!({"query": q, "top_k": 1})),
        ],
    ) else {
        return;
    };
    let recalled = |i: usize| {
        tool_answer(&a[i])["context"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(recalled(2).contains("peanuts"), "{}", a[2]);
    assert!(!recalled(4).contains("peanuts"), "{}", a[4]);
    assert!(recalled(6).contains("shellfish"), "{}", a[6]);
}

#[test]
fn mcp_over_stdio_pinned_to_a_partition_keeps_its_user_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let as_user = |u: &str| format!(r#"{{"user_id":"{u}"}}"#);
    let (u1, u2) = (as_user("u1"), as_user("u2"));
    let Some(a) = pipelined(
        &dir,
        &["--space", "app", "--tools", "memory", "--partition", &u1],
        &[
            call(
                1,
                "remember",
                serde_json::json!({"note": "My locker code is zqlockone."}),
            ),
            // Naming another user's partition in the metadata is refused.
            call(
                2,
                "remember",
                serde_json::json!({"note": "x", "metadata": {"user_id": "u2"}}),
            ),
        ],
    ) else {
        return;
    };
    assert_eq!(
        tool_answer(&a[1])["units"].as_u64().map(|n| n > 0),
        Some(true),
        "{}",
        a[1]
    );
    assert_eq!(
        a[2]["result"]["isError"],
        serde_json::json!(true),
        "{}",
        a[2]
    );
    let recall = call(
        1,
        "recall",
        serde_json::json!({"query": "locker code", "min_relevance": -1}),
    );
    let mine = pipelined(
        &dir,
        &["--space", "app", "--partition", &u1],
        std::slice::from_ref(&recall),
    )
    .unwrap();
    assert!(
        tool_answer(&mine[1])["context"]
            .as_str()
            .unwrap_or("")
            .contains("zqlockone"),
        "{}",
        mine[1]
    );
    // Another user's connection sees none of it, even asking for u1 by filter.
    let theirs = pipelined(
        &dir,
        &["--space", "app", "--partition", &u2],
        &[
            recall,
            call(
                2,
                "recall",
                serde_json::json!({"query": "locker code", "min_relevance": -1,
                                                  "filter": {"user_id": "u1"}}),
            ),
        ],
    )
    .unwrap();
    for t in &theirs[1..] {
        assert!(!t.to_string().contains("zqlockone"), "{t}");
    }
}
