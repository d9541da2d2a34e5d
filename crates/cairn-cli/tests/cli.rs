//! The `cairn` binary end to end: kill-and-reopen (a `cairn ingest` killed with SIGKILL
//! mid-way loses nothing that an earlier command acknowledged, leaves only whole sessions,
//! and the store heals), named errors for bad files, a smoke bench, argument parsing.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

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
    c.arg("--dir").arg(dir);
    c
}

fn model_installed(dir: &Path) -> bool {
    let out = cairn(dir).args(PROBE).output().unwrap();
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("embedding model") {
            cairn_testkit::model_missing(err.trim());
            return false;
        }
        panic!("cairn spaces failed: {err}");
    }
    true
}

/// A fresh temporary folder and the data directory inside it; `None` (after saying
/// SKIPPED) when the embedding model is not installed.
fn model_data_dir() -> Option<(tempfile::TempDir, PathBuf)> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    model_installed(&dir).then_some((tmp, dir))
}

fn write_sessions(path: &Path, prefix: &str, n: usize) {
    let mut f = std::fs::File::create(path).unwrap();
    for i in 0..n {
        let s = serde_json::json!({
            "id": format!("{prefix}-{i}"),
            "date": format!("2024-01-{:02} 10:00", 1 + i % 28),
            "messages": [
                {"role": "user", "text": format!("Note {prefix} {i}: my locker code number {i} is {}", 1000 + i * 7)},
                {"role": "assistant", "text": format!("Noted: locker {i} uses code {}.", 1000 + i * 7)}
            ]
        });
        writeln!(f, "{s}").unwrap();
    }
}

/// Runs a command that must succeed.
fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn json(cmd: &mut Command) -> serde_json::Value {
    serde_json::from_slice(&run_ok(cmd).stdout).unwrap()
}

/// `cairn ... | head`: a reader that goes away before the command writes ends it quietly
/// with status 0, not with a panic (status 101).
#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let a = tmp.path().join("a.jsonl");
    write_sessions(&a, "a", 3);
    run_ok(cairn(&dir).args(["ingest", "--space", "s"]).arg(&a));
    let no_data = tmp.path().join("no-data");
    let no_data = no_data.to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &["--json", "recall", "--space", "s", "locker code"],
        &["recall", "--space", "s", "locker code"],
        &["spaces"],
        // The bench library's output goes through the same writer.
        &["bench", "download", "locomo", "--data-dir", no_data],
    ];
    for args in commands {
        let mut child = cairn(&dir)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The read end closes before the child has started, let alone written.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?}: {err}", out.status);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn killed_ingest_loses_nothing_acknowledged() {
    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let a = tmp.path().join("a.jsonl");
    let b = tmp.path().join("b.jsonl");
    write_sessions(&a, "a", 40);
    write_sessions(&b, "b", 600);
    run_ok(cairn(&dir).args(["ingest", "--space", "s"]).arg(&a));

    // Each kill lands after the running ingest has written something more (the data
    // directory grew), so the rounds cut it mid-way rather than before it starts; at least
    // one kill must land on a running ingest that had written, or the test proves nothing.
    let mut cut_midway = false;
    for grown_by in [1u64, 64 << 10, 256 << 10] {
        let before = cairn::dir_size(&dir);
        let mut child = cairn(&dir)
            .args(["ingest", "--space", "s"])
            .arg(&b)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let limit = std::time::Instant::now() + Duration::from_secs(120);
        while cairn::dir_size(&dir) < before + grown_by
            && child.try_wait().unwrap().is_none()
            && std::time::Instant::now() < limit
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let wrote = cairn::dir_size(&dir) >= before + grown_by;
        cut_midway |= wrote && child.try_wait().unwrap().is_none();
        child.kill().ok(); // SIGKILL (no-op when it already finished)
        child.wait().unwrap();

        let stats = json(cairn(&dir).args(["--json", "stats", "--space", "s"]));
        let sessions = stats[0]["sessions"].as_u64().unwrap();
        let messages = stats[0]["messages"].as_u64().unwrap();
        assert!(sessions >= 40, "acknowledged sessions lost: {sessions}");
        assert_eq!(messages, sessions * 2, "only whole sessions are stored");
        let check = json(cairn(&dir).args(["--json", "check"]));
        assert_eq!(check["text_watermark"], check["last_seq"], "{check}");
        assert_eq!(check["vector_watermark"], check["last_seq"], "{check}");
        // Acknowledged data is searchable after the crash.
        let r = json(cairn(&dir).args([
            "--json",
            "recall",
            "--space",
            "s",
            "--top-k",
            "3",
            "locker code number 17 note a",
        ]));
        let hits = r["hits"].as_array().unwrap();
        assert!(hits.iter().any(|h| h["session_id"] == "a-17"), "{r}");
    }
    assert!(cut_midway, "no kill landed while the ingest was writing");
    // Re-running the interrupted ingest completes it; nothing is duplicated.
    run_ok(cairn(&dir).args(["ingest", "--space", "s"]).arg(&b));
    let stats = json(cairn(&dir).args(["--json", "stats", "--space", "s"]));
    assert_eq!(stats[0]["sessions"], 640);
    assert_eq!(stats[0]["messages"], 1280);
    let export = cairn(&dir)
        .args(["export", "--space", "s"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&export.stdout).lines().count(), 640);
}

#[test]
fn bad_input_files_get_named_errors() {
    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let f = tmp.path().join("bad.jsonl");
    std::fs::write(
        &f,
        "{\"id\":\"ok\",\"messages\":[{\"role\":\"user\",\"text\":\"fine\"}]}\n{\"id\":\"s2\",\"messages\":[{\"role\":\"user\",\"text\":\"x\"}],\"date\":\"31/31/2020\"}\n",
    )
    .unwrap();
    let out = cairn(&dir)
        .args(["ingest", "--space", "s"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2") && err.contains("31/31/2020"),
        "{err}"
    );
    std::fs::write(&f, [0xffu8, 0xfe, b'{', b'\n']).unwrap();
    let out = cairn(&dir)
        .args(["ingest", "--space", "s"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    let out = cairn(&dir)
        .args(["recall", "--space", "nobody", "hi"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"nobody\" does not exist"));
}

#[cfg(feature = "bench")]
#[test]
fn smoke_bench_runs_through_the_cli() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(file) = cairn_testkit::fixtures::data_file("longmemeval/longmemeval_s_dev.json.gz")
    else {
        return;
    };
    if !model_installed(&tmp.path().join("probe")) {
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "bench",
            "longmemeval",
            "--limit",
            "1",
            "--config",
            "both",
            "--run-label",
            "smoke",
            "--out",
        ])
        .arg(tmp.path())
        .arg("--data")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("smoke/summary.json")).unwrap())
            .unwrap();
    assert!(summary.to_string().contains("recall_any"), "{summary}");
    let results = std::fs::read_to_string(tmp.path().join("smoke/results.jsonl")).unwrap();
    assert_eq!(results.lines().count(), 2, "one line per config row");
    assert!(tmp.path().join("smoke/METHODOLOGY.md").exists());
}

#[cfg(feature = "bench")]
#[test]
fn bench_subcommands_parse_beside_the_global_flags() {
    // `--dir` and `--config-file` are global flags of `cairn`; bench options must not
    // collide with them.
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "bench",
            "download",
            "longmemeval",
            "--data-dir",
            "/nonexistent/data",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("/nonexistent/data/longmemeval"));
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .env("CAIRN_DATA_DIR", "/elsewhere")
        .args(["--dir", "/tmp/unused", "bench", "download", "locomo"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("/elsewhere/locomo"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["bench", "longmemeval", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--config <CONFIG>"));
}

#[test]
fn group_chat_history_and_profile_through_the_cli() {
    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let file = tmp.path().join("chat.jsonl");
    let lines = [
        r#"{"speaker": "Maya", "group": "Atlas", "time": "2025-03-03 09:00", "text": "The budget for Project Atlas is $120,000."}"#,
        r#"{"speaker": "Priya", "group": "Atlas", "time": "2025-03-03 09:05", "text": "I'm the finance director, please send the breakdown."}"#,
        r#"{"speaker": "Maya", "group": "Atlas", "time": "2025-03-10 14:00", "text": "Update: the Atlas budget has been cut to $100,000."}"#,
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let r = json(
        cairn(&dir)
            .args(["--json", "ingest", "--space", "team"])
            .arg(&file),
    );
    assert_eq!(r["report"]["messages_added"], 3);
    assert_eq!(r["report"]["sessions"], 2, "one session per group and day");
    let h = json(cairn(&dir).args(["--json", "history", "--space", "team", "Atlas budget"]));
    let values: Vec<&str> = h["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["$120,000", "$100,000"]);
    let early = json(cairn(&dir).args([
        "--json",
        "history",
        "--space",
        "team",
        "Atlas budget",
        "--as-of",
        "2025-03-05",
    ]));
    assert_eq!(early["versions"].as_array().unwrap().len(), 1);
    let p = json(cairn(&dir).args(["--json", "profile", "--space", "team", "Priya"]));
    assert_eq!(p["roles"][0]["what"], "finance director");
    let out = cairn(&dir)
        .args(["history", "--space", "team", "launch date"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no fact about"));
}

/// A reading command (and `keys`) pointed at a directory that is not a data directory
/// (a typo in `--dir`, the wrong working directory) fails naming it, and creates nothing.
#[test]
fn reading_commands_never_create_a_data_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let typo = tmp.path().join("cairn-dta");
    let commands: [&[&str]; 9] = [
        &["recall", "--space", "alice", "where do I live?"],
        &["stats"],
        &["spaces"],
        &["history", "--space", "alice", "budget"],
        &["export", "--space", "alice"],
        &["check"],
        &["keys", "list"],
        &["keys", "create", "--space", "alice"],
        &["trajectories", "--space", "shop"],
    ];
    for args in commands {
        let out = cairn(&typo).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            err.contains("no Cairn data directory at") && err.contains("cairn-dta"),
            "{args:?}: {err}"
        );
        assert!(!typo.exists(), "{args:?} created {}", typo.display());
    }
}

/// `--json` answers JSON, errors included (on stderr, with the field at fault when one
/// is); the text form names the data directory a key belongs to.
#[test]
fn json_on_every_command_and_errors_too() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("none");
    let out = cairn(&missing)
        .args(["--json", "recall", "--space", "a", "hi"])
        .output()
        .unwrap();
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(err["error"]
        .as_str()
        .unwrap()
        .contains("no Cairn data directory"));
    // A command line clap refuses, under --json.
    let out = cairn(&missing)
        .args(["--json", "recall", "--space", "a", "hi", "--top-kk", "3"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(err["error"].as_str().unwrap().contains("--top-kk"), "{err}");
    // `cairn config` prints the configuration in effect, masking a store's password.
    let cfg =
        json(cairn(&missing).args(["--json", "--store", "postgres://u:pw@db/cairn", "config"]));
    assert_eq!(cfg["store"], "postgres://u:***@db/cairn");
    assert_eq!(cfg["embed"]["backend"], "auto");

    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let a = tmp.path().join("a.jsonl");
    write_sessions(&a, "a", 2);
    run_ok(cairn(&dir).args(["ingest", "--space", "alice"]).arg(&a));
    assert_eq!(
        json(cairn(&dir).args(["--json", "spaces"])),
        serde_json::json!(["alice"])
    );
    let out = cairn(&dir)
        .args([
            "--json",
            "recall",
            "--space",
            "alice",
            "hi",
            "--filter",
            r#"{"x": {"op": 1}}"#,
        ])
        .output()
        .unwrap();
    let err: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(err["error"].is_string(), "{err}");
    let key = json(cairn(&dir).args(["--json", "keys", "create", "--space", "alice"]));
    assert!(key["token"].as_str().unwrap().starts_with("cairn_"));
    assert_eq!(
        key["data_dir"].as_str().map(PathBuf::from),
        Some(std::path::absolute(&dir).unwrap())
    );
    let id = key["id"].as_str().unwrap();
    let revoked = json(cairn(&dir).args(["--json", "keys", "revoke", id]));
    assert_eq!(revoked["revoked"], id);
    let out = run_ok(cairn(&dir).args(["keys", "create", "--space", "alice"]));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&dir.display().to_string()),
        "the key's data directory is named"
    );
}

/// `cairn recall --help` describes every argument.
#[test]
fn recall_help_describes_its_arguments() {
    let out = run_ok(cairn(Path::new("unused")).args(["recall", "--help"]));
    let help = String::from_utf8_lossy(&out.stdout);
    for (flag, words) in [
        ("--space <SPACE>", "The space to search"),
        ("--top-k <TOP_K>", "How many hits"),
        ("--session <ID>", "Only what this session holds"),
        ("--token-budget <TOKEN_BUDGET>", "Most tokens"),
        ("<QUERY>", "The question"),
    ] {
        let line = help.lines().position(|l| l.trim_start().starts_with(flag));
        let described =
            line.is_some_and(|i| help.lines().skip(i).take(2).any(|l| l.contains(words)));
        assert!(described, "{flag} undescribed:\n{help}");
    }
}

/// Files are read by the shape of their first record, whatever their name or the order
/// of their keys: a trajectories JSONL (with LongMemEval-V2's `domain`) and a LoCoMo file
/// (whose samples open with their question lists) need no --format; a file read as the
/// wrong shape says how it was read and how to choose another.
#[test]
fn ingest_tells_formats_apart_by_their_records() {
    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cairn-bench/fixtures/lme-v2/trajectories.jsonl");
    let two: Vec<String> = std::fs::read_to_string(fixture)
        .unwrap()
        .lines()
        .take(2)
        .map(str::to_string)
        .collect();
    let runs = tmp.path().join("trajectories.jsonl");
    std::fs::write(&runs, two.join("\n")).unwrap();
    let r = json(
        cairn(&dir)
            .args(["--json", "ingest", "--space", "agent"])
            .arg(&runs),
    );
    assert_eq!(r["report"]["trajectories"], 2, "{r}");

    let locomo = tmp.path().join("locomo.json");
    let sample = serde_json::json!([{
        "qa": [{"question": "Where does Ann live?", "answer": "Lisbon", "evidence": ["D1:1"], "category": 1}],
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Lisbon last spring."},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Lisbon is lovely."}
            ]
        },
        "sample_id": "conv-1"
    }]);
    std::fs::write(&locomo, sample.to_string()).unwrap();
    let r = json(
        cairn(&dir)
            .args(["--json", "ingest", "--space", "locomo-"])
            .arg(&locomo),
    );
    assert_eq!(r["spaces"], serde_json::json!(["locomo-conv-1"]), "{r}");
    assert_eq!(r["report"]["messages_added"], 2, "{r}");

    // Group messages with a field sessions do not have: read as group messages, and the
    // error says so, and how to pick another format.
    let chat = tmp.path().join("chat.jsonl");
    std::fs::write(
        &chat,
        r#"{"speaker": "Maya", "group": "Atlas", "time": "2025-03-10 14:00", "text": "hi", "mood": "ok"}"#,
    )
    .unwrap();
    let out = cairn(&dir)
        .args(["ingest", "--space", "team"])
        .arg(&chat)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("read as --format group-jsonl") && err.contains("pass --format"),
        "{err}"
    );
}

/// Issue 53: `forget --partition` forgets an end user's sessions and says how many;
/// `--message --exchange` takes the reply too; a bad partition is refused naming it.
#[test]
fn forget_a_partition_and_an_exchange() {
    let Some((tmp, dir)) = model_data_dir() else {
        return;
    };
    let f = tmp.path().join("users.jsonl");
    std::fs::write(
        &f,
        concat!(
            r#"{"id":"a","metadata":{"user_id":"u1"},"messages":[{"role":"user","text":"I live in Zorvantha."},{"role":"assistant","text":"Nice."}]}"#,
            "\n",
            r#"{"id":"b","metadata":{"user_id":"u2"},"messages":[{"role":"user","text":"I moved to Lisbon."},{"role":"assistant","text":"Congratulations on Lisbon!"},{"role":"user","text":"Thanks."}]}"#,
            "\n"
        ),
    )
    .unwrap();
    run_ok(cairn(&dir).args(["ingest", "--space", "s"]).arg(&f));
    let forget = |args: &[&str]| {
        let mut c = cairn(&dir);
        c.args(["--json", "forget", "--space", "s"]).args(args);
        c.output().unwrap()
    };
    let out = forget(&["--partition", r#"{"user_id":"u1"}"#]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["sessions"].as_u64(), v["messages"].as_u64()),
        (Some(1), Some(2)),
        "{v}"
    );
    let out = forget(&["--partition", r#"{"email":"x"}"#]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("partition"));
    let out = forget(&["--session", "b", "--message", "0", "--exchange"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["forgotten_messages"],
        serde_json::json!(["0", "1"]),
        "{v}"
    );
    let export = run_ok(cairn(&dir).args(["export", "--space", "s"]));
    let export = String::from_utf8_lossy(&export.stdout);
    assert!(
        !export.contains("Zorvantha") && !export.contains("Lisbon"),
        "{export}"
    );
    assert!(export.contains("Thanks."));
}
