//! The whole `cairn bench lme-v2` path on the committed fixture (`fixtures/lme-v2`,
//! written by its generate.py). Skipped, with a message, when the embedding model is not
//! installed (./scripts/setup.sh). The embedding cache is the default one, so reruns are
//! fast.
mod common;
use cairn_bench::records::lme_v2::LmeV2Record;
use cairn_bench::report::lme_v2::LmeV2Summary;
use common::{bench, model_installed};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn fixture_bench_runs_and_reports_every_type() {
    if !model_installed() {
        return;
    }
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lme-v2");
    let questions = fx.join("questions.jsonl");
    let out = tempfile::tempdir().unwrap();
    bench(&[
        "lme-v2",
        "--questions",
        questions.to_str().unwrap(),
        "--trajectories",
        fx.join("trajectories.jsonl").to_str().unwrap(),
        "--evidence",
        fx.join("evidence.json").to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
        "--run-label",
        "fixture",
    ])
    .unwrap();
    let dir = out.path().join("fixture");
    for f in [
        "results.jsonl",
        "summary.json",
        "summary.md",
        "METHODOLOGY.md",
        "run.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    assert!(!dir.join("data").exists(), "the data directory is removed");

    let qs = cairn::formats::load_lme_v2_questions(&questions).unwrap();
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let records: Vec<LmeV2Record> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), qs.len());
    for q in &qs {
        assert!(
            !text.contains(&q.question),
            "question text leaked: {}",
            q.id
        );
        if q.answer.len() > 12 {
            assert!(!text.contains(&q.answer), "answer text leaked: {}", q.id);
        }
    }
    for r in &records {
        assert!(r.error.is_none(), "{}: {:?}", r.question_id, r.error);
        assert!(!r.hits.is_empty(), "{} has hits", r.question_id);
        assert_eq!(r.insert.trajectories, 10, "the whole haystack is inserted");
        assert!(r.insert.ms > 0.0 && r.recall_wall_ms > 0.0);
        assert!(r.context_tokens > 0 && r.context_tokens <= 2_000);
        for h in &r.hits {
            assert!(h.trajectory_id.is_some() && h.states.is_some());
        }
        let scored = [
            r.phrases.is_some(),
            r.choice.is_some(),
            r.open.is_some(),
            r.abstention.is_some(),
        ];
        assert_eq!(
            scored.iter().filter(|x| **x).count(),
            1,
            "{}",
            r.question_id
        );
    }

    let s: LmeV2Summary =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert!(s.complete);
    let groups: BTreeSet<&str> = s.by_group.keys().map(String::as_str).collect();
    assert_eq!(
        groups,
        BTreeSet::from([
            "abstention",
            "dynamic-environment",
            "errors-gotchas",
            "procedure",
            "static-environment"
        ])
    );
    let o = &s.overall;
    assert_eq!(o.errors, 0);
    assert!(o.phrase_n > 0 && o.choice_n > 0 && o.open_n > 0 && o.abstention_n == 4);
    assert!(o.recall_wall_ms.n == qs.len() && o.recall_wall_ms.p50 > 0.0);
    // Procedure questions find a note of the run that did it, most of the time.
    let proc = &s.by_group["procedure"];
    assert_eq!(proc.evidence_n, 7);
    assert!(
        proc.evidence_note_hit >= 0.7,
        "procedure: note of the evidence run in {} of questions",
        proc.evidence_note_hit
    );
    // Every answerable question's evidence run is among the hits in most cases.
    assert!(o.evidence_hit >= 0.8, "evidence hit {}", o.evidence_hit);
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("No reader model"));
    let methodology = std::fs::read_to_string(dir.join("METHODOLOGY.md")).unwrap();
    assert!(methodology.contains("answer phrases in context, a retrieval diagnostic"));
}

/// `--inspect-rows inspect` with the fixture's evidence-state labels: a `recall` and a
/// `recall+inspect` record per question in `inspect.jsonl`, their aggregates in
/// `inspect.json`, the table in `summary.md` and the protocol in `METHODOLOGY.md`.
#[test]
fn fixture_bench_reports_the_recall_plus_inspection_row() {
    if !model_installed() {
        return;
    }
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lme-v2");
    let out = tempfile::tempdir().unwrap();
    let arg = |f: &str| fx.join(f).to_str().unwrap().to_string();
    let (q, t, e, s) = (
        arg("questions.jsonl"),
        arg("trajectories.jsonl"),
        arg("evidence.json"),
        arg("evidence_states.json"),
    );
    bench(&[
        "lme-v2",
        "--questions",
        &q,
        "--trajectories",
        &t,
        "--evidence",
        &e,
        "--evidence-states",
        &s,
        "--inspect-rows",
        "inspect",
        "--ids",
        "q-static-02,q-proc-07,q-err-02",
        "--out",
        out.path().to_str().unwrap(),
        "--run-label",
        "inspect",
    ])
    .unwrap();
    let dir = out.path().join("inspect");
    let text = std::fs::read_to_string(dir.join("inspect.jsonl")).unwrap();
    let recs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let rows: Vec<&str> = recs.iter().map(|r| r["row"].as_str().unwrap()).collect();
    assert_eq!(rows, ["recall", "recall+inspect"].repeat(3));
    for r in recs.iter().filter(|r| r["row"] == "recall+inspect") {
        assert!(r["error"].is_null(), "{r}");
        let tokens = r["context_tokens"].as_u64().unwrap();
        assert!(tokens > 0 && tokens <= 2_000, "{r}");
        assert!(!r["spans"].as_array().unwrap().is_empty(), "{r}");
        assert_eq!(r["stages_ms"].as_array().map(Vec::len), Some(3));
        assert!(
            r["evidence"].is_object(),
            "labelled questions say where the evidence is"
        );
    }
    let summaries: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("inspect.json")).unwrap()).unwrap();
    assert_eq!(summaries.len(), 2);
    assert_eq!(summaries[1]["row"], "recall+inspect");
    assert_eq!(summaries[1]["questions"], 3);
    assert_eq!(summaries[1]["errors"], 0);
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## Rows: recall, recall + inspection, agent controller"));
    assert!(md.contains("| recall+inspect | 3 |"));
    let methodology = std::fs::read_to_string(dir.join("METHODOLOGY.md")).unwrap();
    assert!(methodology.contains("## Inspection rows (`--inspect-rows`)"));
    assert!(methodology.contains("Evidence states: `"));
    assert!(!methodology.contains("{{"), "every placeholder is filled");
}
