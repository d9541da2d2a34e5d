//! `cairn trajectories` as a process: the workspace export tested by running its helper
//! script, the agent controller end to end against an OpenAI-compatible server (the
//! scripted stub), and the trajectory tools through a real MCP client (rmcp) over
//! `cairn mcp`. Skipped (SKIPPED) without the embedding model.
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A data directory holding the first `n` runs of the LongMemEval-V2 fixture in space
/// `shop`; None (SKIPPED) without the model.
fn with_runs(tmp: &Path, n: usize) -> Option<PathBuf> {
    let dir = tmp.join("data");
    let probe = cairn(&dir).args(PROBE).output().unwrap();
    if !probe.status.success() {
        eprintln!("SKIPPED: {}", String::from_utf8_lossy(&probe.stderr));
        return None;
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cairn-bench/fixtures/lme-v2/trajectories.jsonl");
    let lines: String = std::fs::read_to_string(fixture)
        .unwrap()
        .lines()
        .filter(|l| {
            [
                "traj-coupon-summer-dup",
                "traj-add-apron",
                "traj-coupon-welcome",
            ]
            .iter()
            .take(n)
            .any(|id| l.contains(&format!("\"id\": \"{id}\"")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let file = tmp.join("runs.jsonl");
    std::fs::write(&file, lines).unwrap();
    run_ok(
        cairn(&dir)
            .args(["ingest", "--space", "shop", "--format", "trajectories"])
            .arg(&file),
    );
    Some(dir)
}

#[test]
fn the_exported_workspace_helper_script_calls_the_verbs() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(dir) = with_runs(tmp.path(), 3) else {
        return;
    };
    let ws = tmp.path().join("ws");
    let out = run_ok(
        cairn(&dir)
            .args(["trajectories", "--space", "shop", "export-workspace"])
            .arg(&ws),
    );
    assert!(
        out.contains("3 trajectories (3 written, 0 unchanged, 0 removed)"),
        "{out}"
    );
    let again = run_ok(
        cairn(&dir)
            .args([
                "--json",
                "trajectories",
                "--space",
                "shop",
                "export-workspace",
            ])
            .arg(&ws),
    );
    let r: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(
        (r["written"].as_u64(), r["unchanged"].as_u64()),
        (Some(0), Some(3)),
        "{r}"
    );
    assert!(ws
        .join("trajectories/traj-add-apron/trajectory.json")
        .is_file());
    assert!(ws.join("INSTRUCTION.md").is_file());

    // The helper, from inside the workspace as an agent would run it.
    let helper = |args: &[&str]| {
        let out = Command::new("sh")
            .arg("scripts/inspect")
            .args(args)
            .current_dir(&ws)
            .env_remove("CAIRN_DIR")
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (ok, out, err) = helper(&["traj-coupon-summer-dup"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("Trajectory: traj-coupon-summer-dup") && out.contains("- State 12"),
        "{out}"
    );
    let (ok, out, _) = helper(&["traj-coupon-summer-dup", "--state", "12"]);
    assert!(ok && out.contains("already exists"), "{out}");
    let (ok, out, _) = helper(&["traj-coupon-summer-dup", "--span", "11:12"]);
    assert!(
        ok && out.contains("=== State 11 ===") && out.contains("=== State 12 ==="),
        "{out}"
    );
    let (ok, out, _) = helper(&[
        "traj-coupon-summer-dup",
        "--match",
        "already exists|required",
    ]);
    assert!(ok && out.contains("state 12"), "{out}");
    let (ok, out, _) = helper(&["traj-coupon-welcome", "--words", "coupon code"]);
    assert!(ok && out.contains("words \"coupon code\""), "{out}");
    let (ok, out, _) = helper(&["--search", "coupon", "code", "exists"]);
    assert!(
        ok && out.contains("traj-coupon-summer-dup state 12"),
        "{out}"
    );
    let (ok, out, _) = helper(&["--manifest", "full"]);
    assert!(
        ok && out.contains("(full manifest)") && out.contains("traj-add-apron"),
        "{out}"
    );
    let (ok, _, err) = helper(&["traj-coupon-summer-dup", "--state", "99"]);
    assert!(!ok && err.contains("0-12"), "{err}");
    let (ok, _, err) = helper(&["traj-add-apron", "--frobnicate"]);
    assert!(!ok && err.contains("unknown option"), "{err}");

    // The agent's answer, rendered: the reference output shape is read as is.
    let answer = ws.join("memory_module_output.json");
    std::fs::write(
        &answer,
        json!({"memory_markdown": "## Support Analysis\nThe code was taken.",
               "trajectory_spans": [{"trajectory_id": "traj-coupon-summer-dup",
                                     "start_state_index": 12, "end_state_index": 12}]})
        .to_string(),
    )
    .unwrap();
    let out = run_ok(
        cairn(&dir)
            .args([
                "trajectories",
                "--space",
                "shop",
                "context",
                "--token-budget",
                "300",
                "--request",
            ])
            .arg(&answer),
    );
    assert!(
        out.starts_with("## Memory note\n## Support Analysis") && out.contains("State 12"),
        "{out}"
    );
}

#[test]
fn the_agent_command_works_through_an_openai_compatible_server() {
    use cairn_testkit::llm_stub::{Stub, StubReply};
    let tmp = tempfile::tempdir().unwrap();
    let Some(dir) = with_runs(tmp.path(), 1) else {
        return;
    };
    let n = std::sync::atomic::AtomicUsize::new(0);
    let stub = Stub::start(move |_| {
        let step = match n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
            0 => {
                json!({"tool": "match", "trajectory_id": "traj-coupon-summer-dup", "pattern": "already exists"})
            }
            _ => json!({"tool": "final", "note": "SUMMER15 is taken.",
                        "spans": [{"trajectory_id": "traj-coupon-summer-dup", "start_state": 12, "end_state": 12}]}),
        };
        StubReply::Chat(step.to_string())
    });
    let out = run_ok(cairn(&dir).args([
        "--json",
        "trajectories",
        "--space",
        "shop",
        "agent",
        "What went wrong with the SUMMER15 coupon?",
        "--llm",
        &format!("{},stub", stub.url),
        "--time-budget",
        "30",
    ]));
    let run: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(run["mode"], "agent", "{run}");
    assert_eq!(run["model_calls"], 2);
    assert_eq!(run["spans"][0]["start_state"], 12);
    assert!(run["context"].as_str().unwrap().contains("already exists"));
    assert_eq!(stub.requests().len(), 2);

    // The server gone: the command still answers, from recall, and says why.
    let url = stub.url.clone();
    drop(stub);
    let out = run_ok(cairn(&dir).args([
        "--json",
        "trajectories",
        "--space",
        "shop",
        "agent",
        "What went wrong with the SUMMER15 coupon?",
        "--llm",
        &format!("{url},stub"),
    ]));
    let run: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(run["mode"], "fallback");
    assert!(
        run["fallback_reason"]
            .as_str()
            .unwrap()
            .starts_with("LLM failed"),
        "{run}"
    );
    assert!(run["context"].as_str().unwrap().contains("SUMMER15"));
}

#[test]
fn a_real_mcp_client_works_through_the_trajectory_tools() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    use rmcp::ServiceExt;

    let tmp = tempfile::tempdir().unwrap();
    let Some(dir) = with_runs(tmp.path(), 3) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let transport = TokioChildProcess::new(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn")).configure(|c| {
                c.arg("--dir").arg(&dir).args(["mcp", "--space", "shop"]);
            }),
        )
        .unwrap();
        let client = ().serve(transport).await.unwrap();
        let info = client.peer_info().unwrap();
        assert!(info
            .instructions
            .as_deref()
            .unwrap_or("")
            .contains("trajectory_manifest"));
        let tools = client.list_all_tools().await.unwrap();
        for name in [
            "trajectory_manifest",
            "trajectory_summary",
            "trajectory_state",
            "trajectory_span",
            "trajectory_match",
            "trajectory_search",
            "trajectory_context",
            "trajectory_quick_context",
        ] {
            let t = tools
                .iter()
                .find(|t| t.name == name)
                .unwrap_or_else(|| panic!("no tool {name}"));
            // Each description says when to use it.
            let d = t.description.as_deref().unwrap_or("");
            assert!(d.len() > 150 && d.contains("Use"), "{name}: {d}");
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
        let (err, t) = call("trajectory_manifest", json!({})).await;
        assert!(!err && t.contains("Trajectories 1-3 of 3"), "{t}");
        let (err, t) = call("trajectory_manifest", json!({"form": "full", "limit": 1})).await;
        assert!(!err && t.contains("ask with offset=1") && t.contains("[Harbor Goods Admin - Sign in]"), "{t}");
        let (err, t) = call("trajectory_summary", json!({"trajectory_id": "traj-coupon-summer-dup"})).await;
        assert!(!err && t.contains("Outcome: failure (failed)"), "{t}");
        let (err, t) = call(
            "trajectory_match",
            json!({"trajectory_id": "traj-coupon-summer-dup", "pattern": "coupon code exists", "mode": "words"}),
        )
        .await;
        assert!(!err && t.contains("state 12"), "{t}");
        let (err, t) = call(
            "trajectory_state",
            json!({"trajectory_id": "traj-coupon-summer-dup", "state": 12, "max_chars": 300}),
        )
        .await;
        assert!(!err && t.contains("[truncated:") && t.contains("max_chars="), "{t}");
        let (err, t) = call(
            "trajectory_span",
            json!({"trajectory_id": "traj-coupon-summer-dup", "start": 11, "end": 12}),
        )
        .await;
        assert!(!err && t.contains("=== State 12 ==="), "{t}");
        let (err, t) = call("trajectory_search", json!({"pattern": "saved product"})).await;
        assert!(!err && t.contains("traj-add-apron"), "{t}");
        let (err, t) = call(
            "trajectory_context",
            json!({"note": "Taken.", "token_budget": 200, "query": "coupon code exists",
                   "spans": [{"trajectory_id": "traj-coupon-summer-dup", "start_state": 12, "end_state": 12}]}),
        )
        .await;
        assert!(!err && t.starts_with("## Memory note\nTaken.") && t.contains("already exists"), "{t}");
        let (err, t) = call("trajectory_quick_context", json!({"question": "Why did creating the SUMMER15 coupon fail?"})).await;
        assert!(!err && t.starts_with("Spans: traj-coupon-summer-dup"), "{t}");
        // Bad calls are tool errors the model can read.
        let (err, t) = call("trajectory_match", json!({"trajectory_id": "traj-add-apron", "pattern": "(("})).await;
        assert!(err && t.contains("not a valid regular expression"), "{t}");
        let (err, t) = call("trajectory_span", json!({"trajectory_id": "nope", "start": 0, "end": 1})).await;
        assert!(err && t.contains("not found"), "{t}");
        client.cancel().await.unwrap();
    });
}
