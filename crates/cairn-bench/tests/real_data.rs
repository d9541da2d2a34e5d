//! End-to-end runs on the real benchmark files. The data folder is `$CAIRN_DATA_DIR`, else
//! `<workspace root>/../shared/data`. Each test is skipped, with a message, when its file
//! is absent or the embedding model is not installed. The embedding cache is the default
//! one (`$CAIRN_HOME/embedding-cache.sqlite3`), so reruns are fast.
mod common;
use cairn::formats::{load_locomo, load_longmemeval};
use cairn_bench::records::{read_results, QuestionRecord};
use cairn_bench::Summary;
use common::{bench, model_installed};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

fn data_file(rel: &str) -> Option<PathBuf> {
    cairn_testkit::fixtures::data_file(rel)
}

/// Checks the run folder and returns its records by config.
fn check_run(dir: &Path, per_row: usize) -> BTreeMap<String, Vec<QuestionRecord>> {
    for f in [
        "results.jsonl",
        "summary.json",
        "summary.md",
        "METHODOLOGY.md",
        "run.json",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
    }
    assert!(
        !dir.join("data").exists(),
        "the data directory is deleted at the end"
    );
    let (records, bad) = read_results(&dir.join("results.jsonl")).unwrap();
    assert_eq!(bad, 0);
    let mut by_row: BTreeMap<String, Vec<QuestionRecord>> = BTreeMap::new();
    for r in records {
        by_row.entry(r.config.clone()).or_default().push(r);
    }
    assert_eq!(by_row.keys().collect::<Vec<_>>(), ["bench", "defaults"]);
    for (row, recs) in &by_row {
        assert_eq!(recs.len(), per_row, "lines of row {row}");
        for r in recs {
            assert!(r.error.is_none(), "{}: {:?}", r.question_id, r.error);
            assert!(!r.hits.is_empty(), "{} has hits", r.question_id);
        }
    }
    assert!(by_row["defaults"].iter().all(|r| r.hits.len() <= 3));
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    let s: Summary = serde_json::from_str(&text).unwrap();
    assert!(s.complete);
    assert_eq!(s.rows.len(), 2);
    assert_eq!(s.rows[0].config, "defaults");
    assert_eq!(s.rows[0].options, cairn::RecallOptions::default());
    assert_eq!(s.rows[1].options.top_k, 10);
    let m = std::fs::read_to_string(dir.join("METHODOLOGY.md")).unwrap();
    assert!(m.contains(&s.meta.data_sha256));
    assert!(m.contains("NDCG@k"));
    assert!(m.contains(&s.meta.embedding_model));
    assert!(m.contains("Known limitations"));
    by_row
}

#[test]
fn longmemeval_two_questions() {
    let Some(data) = data_file("longmemeval/longmemeval_s_dev.json.gz") else {
        return;
    };
    if !model_installed() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let d = data.to_str().unwrap();
    let t = std::time::Instant::now();
    bench(&[
        "longmemeval",
        "--data",
        d,
        "--limit",
        "2",
        "--out",
        o,
        "--run-label",
        "t",
    ])
    .unwrap();
    println!("longmemeval --limit 2: {:.1} s", t.elapsed().as_secs_f64());
    let dir = out.path().join("t");
    let by_row = check_run(&dir, 2);

    let questions = load_longmemeval(&data).unwrap();
    for recs in by_row.values() {
        for r in recs {
            let q = questions
                .iter()
                .find(|q| q.question_id == r.question_id)
                .unwrap();
            let haystack: HashSet<&str> =
                q.haystack_session_ids.iter().map(String::as_str).collect();
            for h in &r.hits {
                let sid = h
                    .session_id
                    .as_deref()
                    .expect("LongMemEval hits have a session");
                let base = sid.split('#').next().unwrap();
                assert!(
                    haystack.contains(base),
                    "{}: hit session {sid} not in the haystack",
                    r.question_id
                );
            }
            assert!(!r.ledger.is_empty() || q.is_abstention());
            assert!(r.ingest.messages > 0 && r.ingest.units > 0);
            assert!(r.as_of.is_some());
        }
    }
    // Resume: everything is done, nothing is added.
    bench(&[
        "longmemeval",
        "--data",
        d,
        "--limit",
        "2",
        "--out",
        o,
        "--run-label",
        "t",
        "--resume",
    ])
    .unwrap();
    check_run(&dir, 2);
    // A second fresh run into the same label is refused.
    let e = bench(&[
        "longmemeval",
        "--data",
        d,
        "--limit",
        "2",
        "--out",
        o,
        "--run-label",
        "t",
    ])
    .unwrap_err();
    assert!(e.to_string().contains("--resume"), "{e}");
    // The comparison table reads the run.
    let table = cairn_bench::report::retrieval::compare(&[&dir]).unwrap();
    assert!(table.contains("| t | longmemeval | `defaults`"), "{table}");
}

#[test]
fn locomo_one_conversation() {
    let Some(data) = data_file("locomo/locomo10_dev.json") else {
        return;
    };
    if !model_installed() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let o = out.path().to_str().unwrap();
    let t = std::time::Instant::now();
    bench(&[
        "locomo",
        "--data",
        data.to_str().unwrap(),
        "--questions",
        "conv-26",
        "--limit",
        "20",
        "--out",
        o,
        "--run-label",
        "c",
    ])
    .unwrap();
    println!(
        "locomo conv-26, 20 questions: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let by_row = check_run(&out.path().join("c"), 20);

    let samples = load_locomo(&data).unwrap();
    let s = samples.iter().find(|s| s.sample_id == "conv-26").unwrap();
    let sessions: HashSet<&str> = s.sessions.iter().map(|x| x.id.as_str()).collect();
    for recs in by_row.values() {
        for (i, r) in recs.iter().enumerate() {
            assert_eq!(r.question_id, cairn_bench::locomo_question_id("conv-26", i));
            assert!(r.question_type.starts_with(&s.qa[i].category.to_string()));
            assert!(r.ingest.shared);
            for h in &r.hits {
                let sid = h.session_id.as_deref().expect("LoCoMo hits have a session");
                assert!(sessions.contains(sid), "{sid} is not a session of conv-26");
            }
            assert_eq!(
                r.evidence.turns.len(),
                s.qa[i].evidence.len(),
                "{:?}",
                r.evidence.notes
            );
        }
    }
}
