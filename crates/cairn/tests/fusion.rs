//! Score fusion through the public API, with an embedder whose meanings are set by the
//! test, so what each index sees is known exactly.
use cairn::explain::Step;
use cairn::{Memory, MemoryConfig, RankConfig, RankFeatures, Recall, RecallOptions, SessionInput};
use cairn_core::{EmbedError, Embedder};
use std::sync::Arc;

/// Gives each known text the vector the test names (normalized); anything else points
/// away from every named meaning.
struct ScriptedEmbedder(Vec<(&'static str, [f32; 3])>);

impl Embedder for ScriptedEmbedder {
    fn model_id(&self) -> &str {
        "test-scripted-4"
    }
    fn dim(&self) -> usize {
        4
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts
            .iter()
            .map(|t| {
                let v = match self.0.iter().find(|(k, _)| k == t) {
                    Some((_, v)) => vec![v[0], v[1], v[2], 0.0],
                    None => vec![0.0, 0.0, 0.0, 1.0],
                };
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / n).collect()
            })
            .collect())
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

fn said(id: &str, text: &str) -> SessionInput {
    serde_json::from_value(serde_json::json!({
        "id": id, "date": "2024-03-01 10:00",
        "messages": [{"role": "user", "text": text}]
    }))
    .unwrap()
}

fn top_session(complete_dense: bool) -> String {
    let r = recall(
        RankConfig {
            candidates: 4,
            // Equal weights would tie "a" and "b" exactly without completion (each first
            // in one list); a slightly larger dense weight makes that order deterministic.
            dense_weight: 1.1,
            complete_dense,
            ..RankConfig::default()
        },
        false,
    );
    r.hits[0].session_id.clone().unwrap()
}

/// "locker code" recalled from four one-message sessions whose words and meanings the
/// test sets.
fn recall(rank: RankConfig, explain: bool) -> Recall {
    let dir = tempfile::tempdir().unwrap();
    let mut config = MemoryConfig::default();
    config.engine.rank = rank;
    let embedder = ScriptedEmbedder(vec![
        ("locker code", [1.0, 0.0, 0.0]),
        // Both words, and somewhat the same meaning (cosine 0.3).
        ("my locker code is 4417", [0.3, 0.954, 0.0]),
        // The same meaning as the question (cosine 1), none of its words.
        ("the gym opens at six", [1.0, 0.0, 0.0]),
        // One word, another meaning.
        ("a code for the door", [0.0, 0.0, 1.0]),
        // Half the meaning, no words.
        ("nothing here at all", [0.5, 0.0, 0.866]),
    ]);
    let m = Memory::open_with_embedder(dir.path(), config, Arc::new(embedder)).unwrap();
    m.ingest_sessions(
        "u",
        vec![
            said("a", "my locker code is 4417"),
            said("b", "the gym opens at six"),
            said("c", "a code for the door"),
            said("d", "nothing here at all"),
        ],
    )
    .unwrap();
    let opts = RecallOptions {
        explain,
        ..RecallOptions::default()
    };
    m.recall("u", "locker code", &opts).unwrap()
}

/// With four candidates per index, "a" is found by words only and "b" by meaning only.
/// With its cosine looked up, "a" keeps its meaning (0.3 of the best) on top of its
/// words and outranks "b"; left at zero meaning, it loses to "b"'s dense weight.
#[test]
fn a_unit_found_by_words_is_scored_by_meaning_too() {
    assert_eq!(top_session(true), "a");
    assert_eq!(top_session(false), "b");
}

/// Learned ranking scores by its weights alone: all weight on the raw cosine puts the
/// unit of the question's meaning first, all on the lexical score the unit of its words;
/// an explained hit shows the features and the step that set its score.
#[test]
fn learned_weights_decide_the_order_and_explain_their_features() {
    let learned = |w: RankFeatures| RankConfig {
        places: false,
        learned: Some(w),
        ..RankConfig::default()
    };
    let by_meaning = recall(
        learned(RankFeatures {
            cosine: 1.0,
            ..RankFeatures::default()
        }),
        true,
    );
    let top = &by_meaning.hits[0];
    assert_eq!(top.session_id.as_deref(), Some("b"));
    let why = top.explain.as_ref().expect("explained");
    assert!(
        (why.features["cosine"] - 1.0).abs() < 1e-4,
        "{:?}",
        why.features
    );
    assert_eq!(why.features["lexical"], 0.0);
    assert!((top.score - why.features["cosine"]).abs() < 1e-6);
    assert!(why.adjustments.iter().any(|a| a.step == Step::Learned));
    let by_words = recall(
        learned(RankFeatures {
            lexical: 1.0,
            ..RankFeatures::default()
        }),
        false,
    );
    assert_eq!(by_words.hits[0].session_id.as_deref(), Some("a"));
    // The hand-set pass reports the same features when explaining, for fitting.
    let hand_set = recall(RankConfig::default(), true);
    let why = hand_set.hits[0].explain.as_ref().unwrap();
    assert_eq!(why.features.len(), RankFeatures::NAMES.len());
    assert!(!why.adjustments.iter().any(|a| a.step == Step::Learned));
}
