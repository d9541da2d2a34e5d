//! Ingest and recall of real benchmark records from `../shared/data`.
mod common;
use cairn::formats::{load_locomo, load_longmemeval};
use cairn::{Format, RecallOptions};
use std::collections::HashSet;

#[test]
fn longmemeval_question_recalls_from_its_own_haystack() {
    let Some(path) = cairn_testkit::fixtures::data_file("longmemeval/longmemeval_s_dev.json.gz")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = common::open(dir.path()) else {
        return;
    };
    let questions = load_longmemeval(&path).unwrap();
    for q in questions.iter().take(2) {
        let hay = q.sessions().unwrap();
        let ids: HashSet<String> = hay.sessions.iter().map(|s| s.id.clone()).collect();
        let space = format!("lme-{}", q.question_id);
        let report = m.ingest_sessions(&space, hay.sessions).unwrap();
        assert_eq!(report.sessions, ids.len());
        let opts = RecallOptions {
            top_k: 10,
            token_budget: 2000,
            format: Format::Raw,
            ..Default::default()
        };
        let r = m.recall(&space, &q.question, &opts).unwrap();
        assert_eq!(r.hits.len(), 10);
        assert!(r.context_tokens <= 2000);
        for h in &r.hits {
            assert!(
                ids.contains(h.session_id.as_deref().unwrap()),
                "hit from outside the haystack: {h:?}"
            );
            assert!(!h.turn_ids.is_empty());
        }
    }
}

#[test]
fn locomo_conversation_recalls_cited_turns() {
    let Some(path) = cairn_testkit::fixtures::data_file("locomo/locomo10_dev.json") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let Some(m) = common::open(dir.path()) else {
        return;
    };
    let sample = load_locomo(&path).unwrap().remove(0);
    let conv = sample.sessions_input().unwrap();
    m.ingest_sessions("conv", conv.sessions).unwrap();
    let dia: HashSet<&str> = sample.dia_ids();
    let qa = sample.qa.iter().find(|q| q.category == 4).unwrap();
    let r = m
        .recall(
            "conv",
            &qa.question,
            &RecallOptions {
                top_k: 10,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(!r.hits.is_empty());
    for h in &r.hits {
        assert!(h.turn_ids.iter().all(|t| dia.contains(t.as_str())), "{h:?}");
        assert!(!h.speakers.is_empty());
    }
}
