//! The whole `cairn bench evermembench` path on the committed fixture
//! (`fixtures/evermembench`, written by its generate.py). Skipped, with a message, when
//! the embedding model is not installed (./scripts/setup.sh). The embedding cache is the
//! default one, so reruns are fast.
mod common;
use cairn_bench::records::evermembench::EverRecord;
use cairn_bench::report::evermembench::EverSummary;
use common::{bench, model_installed};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn fixture_bench_runs_and_scores_every_category() {
    if !model_installed() {
        return;
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/evermembench");
    let dialogue = fixtures.join("dialogue_en.json");
    let qa = fixtures.join("qa_fixture.json");
    let out = tempfile::tempdir().unwrap();
    bench(&[
        "evermembench",
        "--dialogue",
        dialogue.to_str().unwrap(),
        "--qa",
        qa.to_str().unwrap(),
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

    let questions = cairn::formats::load_evermem_qa(&qa).unwrap();
    let categories: BTreeSet<String> = questions.iter().map(|q| q.category()).collect();
    assert_eq!(
        categories.iter().map(String::as_str).collect::<Vec<_>>(),
        [
            "F_C",
            "F_SH",
            "F_U",
            "MA_C",
            "MA_Proact",
            "MA_U",
            "P_Role",
            "P_Skill",
            "P_Style"
        ]
    );

    // results.jsonl: one line per question per row, no dataset text.
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let records: Vec<EverRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2 * questions.len());
    for q in &questions {
        assert!(
            !text.contains(&q.question),
            "question text leaked: {}",
            q.id
        );
    }
    for r in &records {
        assert!(r.error.is_none(), "{}: {:?}", r.question_id, r.error);
        assert!(!r.hits.is_empty(), "{} has hits", r.question_id);
        assert_eq!(r.choice.is_some(), r.kind == "multiple_choice");
        assert_eq!(r.open.is_some(), r.kind == "open");
    }

    let s: EverSummary =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert!(s.complete);
    assert_eq!(s.questions_done, questions.len());
    assert_eq!(s.ingest.days, 40);
    assert!(s.ingest.speakers_known >= 11);
    let n_mc = questions.iter().filter(|q| q.options.is_some()).count();
    let mut bench_accuracy = None;
    for row in &s.rows {
        assert_eq!(row.errors, 0);
        assert_eq!(row.overall.multiple_choice.n, n_mc);
        assert_eq!(row.overall.open.n, questions.len() - n_mc);
        let got: BTreeSet<&String> = row.by_category.keys().collect();
        assert_eq!(got, categories.iter().collect(), "row {}", row.config);
        for (cat, g) in &row.by_category {
            let a = g.multiple_choice.accuracy;
            assert!((0.0..=1.0).contains(&a), "{cat}: {a}");
            assert!((0.0..=1.0).contains(&g.open.mean_coverage));
        }
        assert_eq!(
            row.by_major.keys().map(String::as_str).collect::<Vec<_>>(),
            ["F", "MA", "P"]
        );
        assert!(row.recall_engine_ms.n == questions.len() && row.recall_engine_ms.p50 > 0.0);
        if row.config == "bench" {
            bench_accuracy = Some(row.overall.multiple_choice.accuracy);
        }
    }
    // The option scorer does better than picking at random (0.25) with the bench row's
    // evidence.
    let acc = bench_accuracy.expect("a bench row");
    assert!(acc > 0.25, "bench MC accuracy {acc}");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("option scorer (no LLM)"));
    let methodology = std::fs::read_to_string(dir.join("METHODOLOGY.md")).unwrap();
    assert!(methodology.contains("retrieval diagnostic, not accuracy"));
}
