//! Experience memory an agent can work in, through the public API: the inspection verbs
//! (sized, truncation marked), spans rendered into a context (the budget is a promise),
//! recall + inspection, the agent controller against a real OpenAI-compatible server
//! (the scripted stub: a working loop, failures, timeouts, step limits), and the
//! workspace export (incremental). A bag-of-words embedder stands in for the model so
//! the tests run anywhere; the data is the LongMemEval-V2 fixture.
use cairn::{
    AgentFallback, AgentLlm, AgentMode, AgentOptions, ContextRequest, ContextSpan, Error,
    InspectRecallOptions, LlmConfig, ManifestForm, Memory, MemoryConfig, PatternMode, StoreError,
    WorkspaceHelper, WorkspaceOptions,
};
use cairn_core::{EmbedError, Embedder};
use cairn_testkit::llm_stub::{Stub, StubReply};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

struct HashEmbedder;

impl Embedder for HashEmbedder {
    fn model_id(&self) -> &str {
        "test-hash-64"
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0f32; 64];
                for w in t.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
                    if !w.is_empty() {
                        let h = w
                            .bytes()
                            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64));
                        v[(h % 64) as usize] += 1.0;
                    }
                }
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / n).collect()
            })
            .collect())
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

const SPACE: &str = "shop";

fn fixture() -> Vec<cairn::TrajectoryInput> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cairn-bench/fixtures/lme-v2/trajectories.jsonl");
    cairn::formats::read_trajectories_jsonl(&p).expect("the fixture")
}

fn memory(dir: &Path) -> Memory {
    let m = Memory::open_with_embedder(dir, MemoryConfig::default(), Arc::new(HashEmbedder))
        .expect("open");
    m.trajectories()
        .insert_many(SPACE, fixture())
        .expect("insert");
    m
}

#[test]
fn every_verb_answers_within_its_limits_and_says_what_it_cut() {
    let dir = tempfile::tempdir().unwrap();
    let m = memory(dir.path());

    let page = m
        .trajectories()
        .manifest_page(SPACE, ManifestForm::Concise, 0, Some(5))
        .unwrap();
    assert_eq!(
        (page.total, page.entries.len(), page.next_offset),
        (24, 5, Some(5))
    );
    assert!(page.to_string().contains("ask with offset=5"), "{page}");
    assert_eq!(page.entries[0].id, "traj-add-apron");
    assert_eq!(
        page.entries[0].start_url.as_deref(),
        Some("http://harborgoods.test/admin/")
    );
    let last = m
        .trajectories()
        .manifest_page(SPACE, ManifestForm::Full, 23, None)
        .unwrap();
    assert_eq!((last.entries.len(), last.next_offset), (1, None));
    let steps = last.entries[0].steps.as_ref().unwrap();
    assert_eq!(steps.len(), last.entries[0].states);
    assert!(steps[0].title.as_deref().unwrap().contains("Sign in"));
    let e = m
        .trajectories()
        .manifest_page(SPACE, ManifestForm::Concise, 0, Some(0))
        .unwrap_err();
    assert!(matches!(&e, Error::Input(i) if i.record == "limit"), "{e}");

    let o = m
        .trajectories()
        .summary(SPACE, "traj-coupon-summer-dup")
        .unwrap();
    assert_eq!(
        (o.states, o.steps.len(), o.succeeded),
        (13, 13, Some(false))
    );
    let text = o.to_string();
    assert!(
        text.contains("Action: click [1247] # [1247] button 'Save Rule'"),
        "{text}"
    );
    assert!(matches!(
        m.trajectories().summary(SPACE, "nope").unwrap_err(),
        Error::Store(StoreError::NotFound(_))
    ));

    let whole = m
        .trajectories()
        .state(SPACE, "traj-coupon-summer-dup", 12, Some(200_000))
        .unwrap();
    assert!(whole.truncated.is_none());
    assert!(whole.observation.contains("already exists"));
    let cut = m
        .trajectories()
        .state(SPACE, "traj-coupon-summer-dup", 12, Some(400))
        .unwrap();
    let note = cut.truncated.clone().unwrap();
    assert!(
        note.contains("more characters; use state 12 with max_chars="),
        "{note}"
    );
    assert!(
        cut.observation.contains(&note),
        "the cut is marked where it is"
    );
    assert!(cut.observation.chars().count() < 400 + note.chars().count() + 2);
    assert_eq!(cut.observation_chars, whole.observation.chars().count());
    assert!(matches!(
        m.trajectories().state(SPACE, "traj-coupon-summer-dup", 13, None).unwrap_err(),
        Error::Store(StoreError::NotFound(w)) if w.contains("0-12")
    ));

    let span = m
        .trajectories()
        .span(SPACE, "traj-coupon-summer-dup", 0, 12, Some(100))
        .unwrap();
    assert_eq!((span.start, span.end, span.states.len()), (0, 9, 10));
    assert!(span.truncated.unwrap().contains("ask for span 10:12"));

    let mt = m
        .trajectories()
        .find(
            SPACE,
            "traj-coupon-summer-dup",
            "already exists|is required",
            PatternMode::Regex,
            None,
        )
        .unwrap();
    assert!(mt.states.iter().any(|s| s.state == 12), "{mt}");
    assert!(mt
        .states
        .iter()
        .flat_map(|s| &s.lines)
        .any(|l| l.text.contains("already exists")));
    let e = m
        .trajectories()
        .find(
            SPACE,
            "traj-coupon-summer-dup",
            "([",
            PatternMode::Regex,
            None,
        )
        .unwrap_err();
    assert!(
        matches!(&e, Error::Input(i) if i.record == "pattern"),
        "{e}"
    );

    let s = m
        .trajectories()
        .search(
            SPACE,
            "coupon code already exists",
            PatternMode::Words,
            Some(3),
        )
        .unwrap();
    assert_eq!(s.states.len(), 3);
    assert_eq!(
        (s.states[0].trajectory_id.as_str(), s.states[0].state),
        ("traj-coupon-summer-dup", 12),
        "{s}"
    );
    assert!(s.states_matched > 3 && s.truncated.is_some());
    assert!(s.states[0].words_matched >= s.states[1].words_matched);
}

#[test]
fn spans_become_a_context_that_never_exceeds_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let m = memory(dir.path());
    let span = |t: &str, a, b| ContextSpan {
        trajectory_id: t.into(),
        start_state: a,
        end_state: b,
    };
    for budget in [1, 20, 80, 300, 1000, 5000, 50_000] {
        let req = ContextRequest {
            note: "## Support Analysis\nThe SUMMER15 code was taken by another rule.".into(),
            spans: vec![
                span("traj-coupon-summer-dup", 11, 12),
                span("traj-coupon-welcome", 8, 9),
            ],
            token_budget: budget,
            query: Some("What went wrong with the SUMMER15 coupon?".into()),
        };
        let r = m.trajectories().context(SPACE, &req).unwrap();
        assert!(r.tokens <= budget, "{} > {budget}", r.tokens);
        assert_eq!(r.tokens, r.context.split_whitespace().count());
        if budget >= 300 {
            assert!(r.context.starts_with("## Memory note\n## Support Analysis"));
            assert!(
                r.context.contains("already exists"),
                "{budget}: {}",
                r.context
            );
            assert_eq!(r.spans[0].states_shown, 2);
        }
        if budget >= 50_000 {
            assert!(r.spans.iter().all(|s| s.lines_cut == 0));
        }
    }
    let bad = ContextRequest {
        note: String::new(),
        spans: vec![span("traj-coupon-welcome", 2, 40)],
        token_budget: 500,
        query: None,
    };
    let e = m.trajectories().context(SPACE, &bad).unwrap_err();
    assert!(
        matches!(&e, Error::Input(i) if i.record == "spans[0].end_state"),
        "{e}"
    );
    let unknown = ContextRequest {
        spans: vec![span("traj-coupon-welcome", 1, 1), span("nope", 0, 0)],
        ..bad
    };
    let e = m.trajectories().context(SPACE, &unknown).unwrap_err();
    assert!(
        matches!(&e, Error::Input(i) if i.record == "spans[1].trajectory_id"),
        "{e}"
    );
}

#[test]
fn recall_and_inspection_finds_the_state_that_shows_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let m = memory(dir.path());
    let r = m
        .trajectories()
        .recall_inspect(
            SPACE,
            "What error appeared when saving the SUMMER15 coupon, whose code already exists?",
            &InspectRecallOptions::default(),
        )
        .unwrap();
    assert!(
        r.shortlist.contains(&"traj-coupon-summer-dup".to_string()),
        "{r:?}"
    );
    assert!(
        r.spans
            .iter()
            .any(|s| s.trajectory_id == "traj-coupon-summer-dup"
                && s.start_state <= 12
                && 12 <= s.end_state),
        "{:?}",
        r.spans
    );
    assert!(r.context.tokens <= 2000);
    assert!(r.context.context.contains("already exists"));
    assert!(r.total_ms >= r.recall_ms);
}

/// A scripted model: each request answered by the next step of `script`.
fn scripted(script: Vec<serde_json::Value>) -> (Stub, Arc<AgentLlm>) {
    let n = AtomicUsize::new(0);
    let stub = Stub::start(move |_| {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let step = script.get(i).cloned().unwrap_or(json!({"tool": "summary"}));
        // Prose around the JSON, as small models write it: parsed tolerantly.
        StubReply::Chat(format!("Next step:\n```json\n{step}\n```"))
    });
    let llm = AgentLlm::new(LlmConfig {
        base_url: stub.url.clone(),
        model: "stub".into(),
        timeout_secs: 5,
        retries: 0,
        ..LlmConfig::default()
    })
    .unwrap();
    (stub, Arc::new(llm))
}

#[test]
fn the_controller_inspects_and_answers_with_note_and_spans() {
    let dir = tempfile::tempdir().unwrap();
    let m = memory(dir.path());
    let (stub, llm) = scripted(vec![
        json!({"tool": "summary", "trajectory_id": "traj-coupon-summer-dup"}),
        json!({"tool": "match", "trajectory_id": "traj-coupon-summer-dup", "pattern": "already exists"}),
        json!({"tool": "state", "trajectory_id": "traj-coupon-summer-dup", "state": 12}),
        json!({"tool": "final", "note": "SUMMER15 already belongs to the Summer Kickoff rule.",
               "spans": [{"trajectory_id": "traj-coupon-summer-dup", "start_state": 12, "end_state": 12},
                         {"trajectory_id": "nope", "start_state": 0, "end_state": 1},
                         {"trajectory_id": "traj-coupon-summer-dup", "start_state": 9, "end_state": 99}]}),
    ]);
    let q = "What went wrong when the agent tried to create the SUMMER15 coupon?";
    let run = m
        .trajectories()
        .agent(SPACE, q, &AgentOptions::default(), Some(llm.clone()))
        .unwrap();
    assert_eq!(run.mode, AgentMode::Agent, "{run:?}");
    assert_eq!(run.model_calls, 4);
    let tools: Vec<&str> = run.steps.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(tools, ["summary", "match", "state", "final"]);
    assert!(
        run.steps.iter().all(|s| s.error.is_none()),
        "{:?}",
        run.steps
    );
    // The unknown trajectory is dropped, the overlong span clamped to the last state.
    assert_eq!(run.spans.len(), 2);
    assert_eq!((run.spans[1].start_state, run.spans[1].end_state), (9, 12));
    assert!(run
        .context
        .starts_with("## Memory note\nSUMMER15 already belongs"));
    assert!(run.context.contains("already exists"));
    assert!(run.context_tokens <= 2000);
    // What the model was shown: the workflow, the question with the manifest, and each
    // tool's result.
    let reqs = stub.requests();
    assert_eq!(reqs.len(), 4);
    // Structured output: one object per tool, ids only the space's.
    let schema = &reqs[0].body["response_format"]["json_schema"]["schema"];
    let ids = schema["oneOf"][0]["properties"]["trajectory_id"]["enum"]
        .as_array()
        .unwrap();
    assert_eq!(ids.len(), 24);
    assert!(ids.contains(&json!("traj-coupon-summer-dup")));
    let first = reqs[0].body["messages"].as_array().unwrap();
    assert!(first[0]["content"]
        .as_str()
        .unwrap()
        .contains("Triage the question"));
    assert!(first[1]["content"]
        .as_str()
        .unwrap()
        .contains("traj-coupon-summer-dup"));
    assert!(reqs[2].last_message().contains("Result of match:"));
    assert!(reqs[3].last_message().contains("already exists"));
    assert_eq!(llm.usage().calls, 4);
}

#[test]
fn the_controller_falls_back_on_failure_timeout_and_the_step_limit() {
    let dir = tempfile::tempdir().unwrap();
    let m = memory(dir.path());
    let q = "What went wrong when the agent tried to create the SUMMER15 coupon?";
    let opts = AgentOptions {
        max_steps: 3,
        ..AgentOptions::default()
    };

    // No model at all.
    let run = m.trajectories().agent(SPACE, q, &opts, None).unwrap();
    assert_eq!(run.mode, AgentMode::Fallback);
    assert_eq!(run.fallback_reason.as_deref(), Some("no LLM configured"));
    assert!(
        run.context.contains("SUMMER15"),
        "plain recall: {}",
        run.context
    );

    // A server that fails.
    let failing = Stub::start(|_| StubReply::Raw(500, json!({"error": "boom"})));
    let llm = Arc::new(
        AgentLlm::new(LlmConfig {
            base_url: failing.url.clone(),
            model: "stub".into(),
            retries: 0,
            ..LlmConfig::default()
        })
        .unwrap(),
    );
    let run = m.trajectories().agent(SPACE, q, &opts, Some(llm)).unwrap();
    assert_eq!(run.mode, AgentMode::Fallback);
    assert!(
        run.fallback_reason
            .as_deref()
            .unwrap()
            .starts_with("LLM failed"),
        "{run:?}"
    );
    assert!(!run.context.is_empty());

    // A server slower than the time budget: abandoned at the budget, not at its answer
    // (the stub has written no answer when the run is back: no clock is read).
    let slow = Stub::start(|_| {
        StubReply::Slow(
            Duration::from_secs(120),
            Box::new(StubReply::Chat(
                "{\"tool\": \"final\", \"note\": \"late\"}".into(),
            )),
        )
    });
    let llm = Arc::new(
        AgentLlm::new(LlmConfig {
            base_url: slow.url.clone(),
            model: "stub".into(),
            retries: 0,
            ..LlmConfig::default()
        })
        .unwrap(),
    );
    let quick = AgentOptions {
        time_budget_ms: 400,
        fallback: AgentFallback::RecallInspection,
        ..opts.clone()
    };
    let run = m.trajectories().agent(SPACE, q, &quick, Some(llm)).unwrap();
    assert_eq!(slow.answered(), 0, "the run waited for the late answer");
    assert_eq!(run.mode, AgentMode::Fallback);
    assert!(
        run.fallback_reason
            .as_deref()
            .unwrap()
            .contains("timed out"),
        "{run:?}"
    );
    assert!(!run.spans.is_empty(), "recall + inspection spans");

    // A model that never answers: the step limit; its bad steps are told to it.
    let (stub, llm) = scripted(vec![
        json!({"tool": "dance"}),
        json!({"tool": "state", "trajectory_id": "traj-coupon-summer-dup"}),
        json!({"tool": "search", "pattern": "coupon"}),
    ]);
    let run = m.trajectories().agent(SPACE, q, &opts, Some(llm)).unwrap();
    assert_eq!(run.mode, AgentMode::Fallback);
    assert_eq!(
        run.fallback_reason.as_deref(),
        Some("3 steps without a final answer")
    );
    assert_eq!(run.steps.len(), 3);
    assert!(run.steps[0]
        .error
        .as_deref()
        .unwrap()
        .contains("unknown tool"));
    assert!(run.steps[1].error.as_deref().unwrap().contains("`state`"));
    let reqs = stub.requests();
    assert!(reqs[1].last_message().contains("unknown tool \"dance\""));
    assert!(reqs[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["content"].as_str().unwrap_or("").contains("last step")));
}

#[test]
fn the_workspace_is_written_and_updated_incrementally() {
    let dir = tempfile::tempdir().unwrap();
    let m = memory(&dir.path().join("data"));
    let shots = dir.path().join("shots");
    std::fs::create_dir_all(shots.join("screenshots/traj-add-apron")).unwrap();
    std::fs::write(shots.join("screenshots/traj-add-apron/0.png"), b"png").unwrap();
    let ws = dir.path().join("ws");
    let helper = WorkspaceHelper {
        script: "#!/bin/sh\nexec /usr/local/bin/my-inspector \"$@\"\n".into(),
        usage: "    scripts/inspect ID --state 7   one state".into(),
    };
    let opts = WorkspaceOptions {
        helper: helper.clone(),
        screenshots_from: Some(shots.clone()),
    };
    let r = m
        .trajectories()
        .export_workspace(SPACE, &ws, &opts)
        .unwrap();
    assert_eq!(
        (r.trajectories, r.written, r.unchanged, r.removed),
        (24, 24, 0, 0)
    );
    assert_eq!(r.screenshots_copied, 1);
    assert!(r.screenshots_missing > 200, "{r:?}");
    assert_eq!(r.files_updated.len(), 4);
    let t: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.join("trajectories/traj-add-apron/trajectory.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(t["states"][3]["state_index"], 3);
    assert_eq!(t["states"][0]["screenshot_file"], "screenshots/0000.png");
    assert_eq!(
        std::fs::read(ws.join("trajectories/traj-add-apron/screenshots/0000.png")).unwrap(),
        b"png"
    );
    let concise =
        std::fs::read_to_string(ws.join("trajectories/TRAJECTORY_SUMMARY_CONCISE.md")).unwrap();
    assert_eq!(concise.matches("| traj-").count(), 24);
    let full = std::fs::read_to_string(ws.join("trajectories/TRAJECTORY_SUMMARY_FULL.md")).unwrap();
    assert!(full.contains("click [1247] # [1247] button 'Save Rule'"));
    assert!(std::fs::read_to_string(ws.join("INSTRUCTION.md"))
        .unwrap()
        .contains(&helper.usage));
    let script = std::fs::read_to_string(ws.join("scripts/inspect")).unwrap();
    assert_eq!(script, helper.script);

    // Again: nothing changed, nothing rewritten.
    let before = std::fs::metadata(ws.join("trajectories/traj-add-apron/trajectory.json"))
        .unwrap()
        .modified()
        .unwrap();
    let r = m
        .trajectories()
        .export_workspace(SPACE, &ws, &opts)
        .unwrap();
    assert_eq!(
        (r.written, r.unchanged, r.removed, r.screenshots_copied),
        (0, 24, 0, 0)
    );
    assert!(r.files_updated.is_empty(), "{r:?}");
    let after = std::fs::metadata(ws.join("trajectories/traj-add-apron/trajectory.json"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);

    // A forgotten trajectory leaves, the summaries follow; a file of our own stays.
    std::fs::write(ws.join("notes.md"), "mine").unwrap();
    m.trajectories().forget(SPACE, "traj-add-apron").unwrap();
    let r = m
        .trajectories()
        .export_workspace(SPACE, &ws, &opts)
        .unwrap();
    assert_eq!(
        (r.trajectories, r.written, r.unchanged, r.removed),
        (23, 0, 23, 1)
    );
    assert!(!ws.join("trajectories/traj-add-apron").exists());
    assert!(r.files_updated.iter().any(|f| f.ends_with("CONCISE.md")));
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.md")).unwrap(),
        "mine"
    );
}
