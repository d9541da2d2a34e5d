//! Loaders against the real benchmark files. The data folder is `$CAIRN_DATA_DIR`, else
//! `<workspace root>/../shared/data`; each test is skipped, with a message, when its file is
//! absent. Run with `--nocapture` to see the statistics.
use cairn_formats::{
    friendsqa_group_days, load_friendsqa, load_locomo, load_longmemeval, sha256_file,
    DuplicateResolution,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn data_file(rel: &str) -> Option<PathBuf> {
    cairn_testkit::fixtures::data_file(rel)
}

struct LmeStats {
    questions: usize,
    abstention: usize,
    sessions: usize,
    min_sessions: usize,
    max_sessions: usize,
    turns: usize,
    skipped_empty_turns: usize,
    skipped_empty_sessions: usize,
    duplicates: Vec<String>,
    by_type: BTreeMap<String, usize>,
    after_question: usize,
    evidence_after_question: usize,
    max_after: chrono::TimeDelta,
    questions_with_later: BTreeSet<String>,
}

fn check_longmemeval(rel: &str, expected_questions: usize) -> Option<LmeStats> {
    let path = data_file(rel)?;
    let qs = load_longmemeval(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(qs.len(), expected_questions);
    let mut st = LmeStats {
        questions: qs.len(),
        abstention: 0,
        sessions: 0,
        min_sessions: usize::MAX,
        max_sessions: 0,
        turns: 0,
        skipped_empty_turns: 0,
        skipped_empty_sessions: 0,
        duplicates: Vec::new(),
        by_type: BTreeMap::new(),
        after_question: 0,
        evidence_after_question: 0,
        max_after: chrono::TimeDelta::zero(),
        questions_with_later: BTreeSet::new(),
    };
    for q in &qs {
        *st.by_type.entry(q.question_type.clone()).or_default() += 1;
        st.abstention += usize::from(q.is_abstention());
        let qt = q.question_time().unwrap_or_else(|e| panic!("{e}"));
        let h = q.sessions().unwrap_or_else(|e| panic!("{e}"));
        assert!(!h.sessions.is_empty(), "{}", q.question_id);
        // Sorted by date, all before the question.
        for w in h.sessions.windows(2) {
            assert!(w[0].occurred_at <= w[1].occurred_at, "{}", q.question_id);
        }
        // The data has sessions dated after their question (same day, at most hours):
        // count them, and the evidence among them.
        let evidence = q.evidence_sessions();
        for s in &h.sessions {
            let t = s.occurred_at.expect("dated");
            if t > qt {
                st.after_question += 1;
                st.evidence_after_question += usize::from(evidence.contains(&s.id));
                st.max_after = st.max_after.max(t - qt);
                st.questions_with_later.insert(q.question_id.clone());
            }
        }
        let ids: BTreeSet<&str> = h.sessions.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids.len(),
            h.sessions.len(),
            "unique session ids in {}",
            q.question_id
        );
        // Evidence resolves to ingested sessions and turns.
        for sid in &q.answer_session_ids {
            assert!(
                ids.contains(sid.as_str()),
                "{}: evidence {sid}",
                q.question_id
            );
        }
        for (sid, mid) in q.evidence_turns() {
            let s = h
                .sessions
                .iter()
                .find(|s| s.id == sid)
                .expect("evidence session");
            let m = s
                .messages
                .iter()
                .find(|m| m.id == mid)
                .expect("evidence turn");
            assert_eq!(m.metadata["has_answer"], true);
        }
        st.sessions += h.sessions.len();
        st.min_sessions = st.min_sessions.min(h.sessions.len());
        st.max_sessions = st.max_sessions.max(h.sessions.len());
        st.turns += h.sessions.iter().map(|s| s.messages.len()).sum::<usize>();
        st.skipped_empty_turns += h.skipped_empty_turns;
        st.skipped_empty_sessions += h.skipped_empty_sessions.len();
        for d in &h.duplicates {
            let how = match &d.resolution {
                DuplicateResolution::Dropped => "identical turns, dropped".to_string(),
                DuplicateResolution::Renamed(n) => format!("different turns, renamed {n}"),
            };
            st.duplicates.push(format!(
                "{}: {} at {} (kept the copy at {}): {how}",
                q.question_id, d.session_id, d.date, d.kept_date
            ));
        }
    }
    println!(
        "{rel}: {} questions ({} abstention), {} sessions (per question min {} / mean {:.1} / max {}), \
         {} turns ingested, {} empty turns skipped, {} empty sessions skipped, {} duplicate session copies",
        st.questions,
        st.abstention,
        st.sessions,
        st.min_sessions,
        st.sessions as f64 / st.questions as f64,
        st.max_sessions,
        st.turns,
        st.skipped_empty_turns,
        st.skipped_empty_sessions,
        st.duplicates.len()
    );
    println!("  by type: {:?}", st.by_type);
    println!(
        "  {} sessions in {} questions are dated after their question ({} of them evidence sessions; \
         latest {} min after)",
        st.after_question,
        st.questions_with_later.len(),
        st.evidence_after_question,
        st.max_after.num_minutes()
    );
    for d in &st.duplicates {
        println!("  duplicate: {d}");
    }
    Some(st)
}

#[test]
fn longmemeval_s_dev() {
    let Some(st) = check_longmemeval("longmemeval/longmemeval_s_dev.json.gz", 127) else {
        return;
    };
    assert_eq!(st.abstention, 9);
    assert_eq!(st.skipped_empty_turns, 1);
    assert_eq!(st.duplicates.len(), 3);
}

#[test]
fn longmemeval_oracle() {
    let Some(st) = check_longmemeval("longmemeval/longmemeval_oracle.json", 500) else {
        return;
    };
    assert_eq!(st.abstention, 30);
    assert!(st.duplicates.is_empty());
    if let Some(p) = data_file("longmemeval/longmemeval_oracle.json") {
        assert_eq!(
            sha256_file(p).unwrap(),
            "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c"
        );
    }
}

#[test]
fn locomo_dev() {
    let Some(path) = data_file("locomo/locomo10_dev.json") else {
        return;
    };
    let samples = load_locomo(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(samples.len(), 5);
    let mut per_cat: BTreeMap<u8, usize> = BTreeMap::new();
    let mut with_evidence_1_4 = 0;
    let (mut sessions, mut turns, mut photos, mut skipped, mut repaired) = (0, 0, 0, 0, 0);
    let mut dangling = Vec::new();
    for s in &samples {
        let c = s.sessions_input().unwrap_or_else(|e| panic!("{e}"));
        for w in c.sessions.windows(2) {
            assert!(w[0].occurred_at.is_some() && w[0].occurred_at <= w[1].occurred_at);
        }
        let n_turns: usize = c.sessions.iter().map(|s| s.messages.len()).sum();
        let n_photos = c
            .sessions
            .iter()
            .flat_map(|s| &s.messages)
            .filter(|m| m.text.contains("[shares a photo: "))
            .count();
        println!(
            "  {}: {} + {}: {} sessions, {} turns ({} with a photo caption), {} questions",
            s.sample_id,
            s.speaker_a,
            s.speaker_b,
            c.sessions.len(),
            n_turns,
            n_photos,
            s.qa.len()
        );
        sessions += c.sessions.len();
        turns += n_turns;
        photos += n_photos;
        skipped += c.skipped_empty_turns;
        for q in &s.qa {
            *per_cat.entry(q.category).or_default() += 1;
            with_evidence_1_4 += usize::from(q.category != 5 && !q.evidence.is_empty());
            let plain: Vec<&str> = q.evidence_raw.iter().map(String::as_str).collect();
            if q.evidence != plain {
                repaired += 1;
                println!(
                    "  {}: evidence {:?} read as {:?}",
                    s.sample_id, q.evidence_raw, q.evidence
                );
            }
        }
        for (i, e) in s.dangling_evidence() {
            dangling.push(format!("{} qa {i}: {e}", s.sample_id));
        }
    }
    let questions: usize = per_cat.values().sum();
    println!(
        "locomo10_dev: {} samples, {sessions} sessions, {turns} turns ({photos} with photo captions), \
         {skipped} empty turns skipped, {questions} questions, per category {per_cat:?} \
         (1-4: {}, of which {with_evidence_1_4} with evidence), {repaired} questions with repaired evidence, dangling evidence: {dangling:?}",
        samples.len(),
        questions - per_cat.get(&5).copied().unwrap_or(0)
    );
    assert_eq!(sessions, 128);
    assert_eq!(questions - per_cat.get(&5).copied().unwrap_or(0), 762);
    // The README's baseline set: categories 1-4 with evidence.
    assert_eq!(with_evidence_1_4, 760);
}

#[test]
fn friendsqa_dev() {
    let Some(path) = data_file("friendsqa/friendsqa_dev.json") else {
        return;
    };
    let scenes = load_friendsqa(&path).unwrap_or_else(|e| panic!("{e}"));
    let h = friendsqa_group_days(&scenes).unwrap_or_else(|e| panic!("{e}"));
    let messages: Vec<&cairn_core::GroupMessage> = h.days.iter().flat_map(|d| &d.1).collect();
    let utterances = messages.len();
    let questions: usize = scenes.iter().map(|s| s.questions.len()).sum();
    let narration = messages.iter().filter(|m| m.speaker == "narration").count();
    let held: std::collections::HashSet<(String, String)> = messages
        .iter()
        .map(|m| (m.group.clone(), m.id.clone().unwrap_or_default()))
        .collect();
    for s in &scenes {
        for q in &s.questions {
            for ev in s.evidence_turns(q) {
                assert!(held.contains(&ev), "{} {ev:?}", q.id);
            }
        }
    }
    let scenes_held: std::collections::HashSet<&str> =
        messages.iter().map(|m| m.group.as_str()).collect();
    println!(
        "friendsqa_dev: {} scenes, {} episodes (days {:?} .. {:?}), {utterances} utterances \
         ({narration} narration), {} empty skipped, {questions} questions",
        scenes_held.len(),
        h.episode_days.len(),
        h.episode_days.values().next(),
        h.episode_days.values().last(),
        h.skipped_empty_utterances
    );
    assert_eq!(scenes_held.len(), 136);
    assert_eq!(utterances, 2847);
    assert_eq!(questions, 1182);
}
