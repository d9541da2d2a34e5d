//! Tests against the real default model. They run only when the model resolves
//! (install it with ./scripts/setup.sh); otherwise they say SKIPPED and pass (fail under
//! `CAIRN_REQUIRE_MODEL`).
use cairn_core::Embedder;
use cairn_embed::{
    resolve_model_dir, Backend, BertEmbedder, EmbedConfig, EmbedLoadError, ModelEnv, DEFAULT_MODEL,
};
use std::path::PathBuf;
use std::sync::OnceLock;

fn model_dir() -> Option<PathBuf> {
    match resolve_model_dir(DEFAULT_MODEL, None, &ModelEnv::from_process()) {
        Ok(resolved) => Some(resolved.dir),
        Err(e @ EmbedLoadError::ModelNotFound { .. }) => {
            cairn_testkit::model_missing(e);
            None
        }
        Err(e) => panic!("resolving the default model: {e}"),
    }
}

/// The fp32 embedder (the model as published, the reference of these tests), loaded
/// once for all tests of this file.
fn embedder() -> Option<&'static BertEmbedder> {
    static EMBEDDER: OnceLock<Option<BertEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            model_dir().map(|dir| {
                BertEmbedder::from_dir(&dir, &fp32())
                    .unwrap_or_else(|e| panic!("loading {}: {e}", dir.display()))
            })
        })
        .as_ref()
}

fn fp32() -> EmbedConfig {
    EmbedConfig {
        backend: Backend::Fp32,
        ..EmbedConfig::default()
    }
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn norm(a: &[f32]) -> f32 {
    a.iter().map(|x| x * x).sum::<f32>().sqrt()
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn dim_model_id_and_unit_length() {
    let Some(e) = embedder() else { return };
    assert_eq!(e.dim(), 384);
    assert_eq!(
        e.model_id(),
        "sentence-transformers/all-MiniLM-L6-v2@max256"
    );
    let texts = [
        "A man is eating food.",
        "",
        "   ",
        "ünïcödé ✓ 日本語 🙂",
        "x",
    ];
    let vectors = e.embed(&texts).unwrap();
    assert_eq!(vectors.len(), texts.len());
    for v in &vectors {
        assert_eq!(v.len(), 384);
        assert!(v.iter().all(|x| x.is_finite()));
        assert!((norm(v) - 1.0).abs() < 1e-4, "norm {}", norm(v));
    }
}

#[test]
fn empty_input_gives_empty_output() {
    let Some(e) = embedder() else { return };
    assert!(e.embed(&[]).unwrap().is_empty());
}

#[test]
fn similar_sentences_are_close() {
    let Some(e) = embedder() else { return };
    let v = e
        .embed(&[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ])
        .unwrap();
    let close = cosine(&v[0], &v[1]);
    let far = cosine(&v[0], &v[2]);
    assert!(close > 0.5, "close {close}");
    assert!(close > far, "close {close} far {far}");
    // Reference value of sentence-transformers for all-MiniLM-L6-v2.
    assert!(
        (close - 0.7553).abs() < 0.01,
        "cosine {close}, expected about 0.7553"
    );
}

#[test]
fn batch_order_is_preserved() {
    let Some(e) = embedder() else { return };
    // Mixed lengths, more texts than one batch, so sorting and batching both matter.
    let texts: Vec<String> = (0..41)
        .map(|i| {
            let words = (i * 7919) % 37 + 1;
            (0..words)
                .map(|w| format!("word{} ", (w * 31 + i) % 17))
                .collect::<String>()
                + &format!("sentence number {i}.")
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let together = e.embed(&refs).unwrap();
    assert_eq!(together.len(), refs.len());
    for (text, v) in refs.iter().zip(&together) {
        let alone = e.embed(&[text]).unwrap();
        let d = max_abs_diff(v, &alone[0]);
        assert!(d < 1e-4, "{text:?} differs by {d}");
    }
}

#[test]
fn long_texts_are_truncated() {
    let Some(e) = embedder() else { return };
    let long: String = (0..5000)
        .map(|i| ["memory ", "agent ", "recall ", "stone "][i % 4])
        .collect();
    assert!(e.count_tokens(&long) >= 5000);
    let longer = format!("{long} completely different words at the very end");
    let v = e.embed(&[&long, &longer, "short"]).unwrap();
    assert!((norm(&v[0]) - 1.0).abs() < 1e-4);
    // Everything past max_tokens is cut off, so the tail does not matter.
    assert!(max_abs_diff(&v[0], &v[1]) < 1e-5);
}

#[test]
fn count_tokens_without_special_tokens() {
    let Some(e) = embedder() else { return };
    assert_eq!(e.count_tokens("hello world"), 2);
    assert_eq!(e.count_tokens(""), 0);
    assert!(e.count_tokens("A man is eating a piece of bread.") >= 9);
}

/// The default model's tokenizer says its counts add up over whitespace, and they do,
/// across punctuation, accents, digits, unknown scripts and control characters at the
/// seams: packing relies on it instead of counting a whole context again.
#[test]
fn token_counts_add_up_over_whitespace_when_the_tokenizer_says_so() {
    let Some(e) = embedder() else { return };
    assert!(e.whitespace_additive());
    let texts = [
        "[2024-03-01 10:00 · s1] user: I moved to Zürich (finally!) on 3/4.",
        "…and the café's wi-fi password is \"x9-Q\".",
        "東京 🚀 naïve co-operate\tover—there",
        "\u{7}bell, déjà vu; 12,345.67 km",
        "",
        "end.",
    ];
    for a in texts {
        for b in texts {
            for sep in ["\n\n", " ", "\n"] {
                let joined = format!("{a}{sep}{b}");
                assert_eq!(
                    e.count_tokens(&joined),
                    e.count_tokens(a) + e.count_tokens(b),
                    "{joined:?}"
                );
            }
        }
    }
}

#[test]
fn smaller_settings_change_model_id_and_truncate_earlier() {
    let Some(dir) = model_dir() else { return };
    let config = EmbedConfig {
        max_tokens: 8,
        batch_size: 2,
        ..fp32()
    };
    let e = BertEmbedder::from_dir(&dir, &config).unwrap();
    assert_eq!(e.model_id(), "sentence-transformers/all-MiniLM-L6-v2@max8");
    // 6 word tokens + [CLS] + [SEP] fill the 8 tokens; the rest is cut off.
    let v = e
        .embed(&[
            "one two three four five six",
            "one two three four five six seven eight",
        ])
        .unwrap();
    assert!(max_abs_diff(&v[0], &v[1]) < 1e-5);
    // count_tokens never truncates.
    assert_eq!(e.count_tokens("one two three four five six seven eight"), 8);
}

#[test]
fn settings_are_checked() {
    let Some(dir) = model_dir() else { return };
    for config in [
        EmbedConfig {
            max_tokens: 513,
            ..EmbedConfig::default()
        },
        EmbedConfig {
            batch_size: 0,
            ..EmbedConfig::default()
        },
        EmbedConfig {
            max_tokens: 1,
            ..EmbedConfig::default()
        },
    ] {
        let err = BertEmbedder::from_dir(&dir, &config).unwrap_err();
        assert!(matches!(err, EmbedLoadError::InvalidSettings(_)), "{err}");
    }
}

/// Weights named with a `bert.` prefix (BertFor* checkpoints) load too, even when
/// config.json has no model_type, and give the same vectors.
#[test]
fn weights_with_bert_prefix() {
    let Some(dir) = model_dir() else { return };
    let Some(reference) = embedder() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let tensors =
        candle_core::safetensors::load(dir.join("model.safetensors"), &candle_core::Device::Cpu)
            .unwrap();
    let renamed: std::collections::HashMap<String, candle_core::Tensor> = tensors
        .into_iter()
        .map(|(name, t)| (format!("bert.{name}"), t))
        .collect();
    candle_core::safetensors::save(&renamed, tmp.path().join("model.safetensors")).unwrap();
    std::fs::copy(
        dir.join("tokenizer.json"),
        tmp.path().join("tokenizer.json"),
    )
    .unwrap();
    let mut config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
    config.as_object_mut().unwrap().remove("model_type");
    std::fs::write(
        tmp.path().join("config.json"),
        serde_json::to_vec(&config).unwrap(),
    )
    .unwrap();

    let e = BertEmbedder::from_dir(tmp.path(), &fp32()).unwrap();
    let text = ["A man is eating food."];
    let a = e.embed(&text).unwrap();
    let b = reference.embed(&text).unwrap();
    assert!(max_abs_diff(&a[0], &b[0]) < 1e-6);
}

#[test]
fn embedder_is_shareable_across_threads() {
    let Some(e) = embedder() else { return };
    let expected = e.embed(&["thread safety"]).unwrap();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let got = e.embed(&["thread safety"]).unwrap();
                assert!(max_abs_diff(&got[0], &expected[0]) < 1e-5);
            });
        }
    });
}

/// The default model with the int8 backend, loaded once.
fn int8_embedder() -> Option<&'static BertEmbedder> {
    static EMBEDDER: OnceLock<Option<BertEmbedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            model_dir().map(|dir| {
                let config = EmbedConfig {
                    backend: Backend::Int8,
                    ..EmbedConfig::default()
                };
                BertEmbedder::from_dir(&dir, &config)
                    .unwrap_or_else(|e| panic!("loading {} (int8): {e}", dir.display()))
            })
        })
        .as_ref()
}

/// Conversation-like texts of various lengths (a few tokens to past the 256 cut).
fn sample_texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "Hi!",
        "What degree did I graduate with?",
        "I finally finished my Master's in computer science last spring, and the commute \
         to campus took about forty-five minutes each way.",
        "Can you suggest a recipe for BBQ ribs? I usually marinate them overnight in a \
         sauce of soy, garlic, brown sugar and a bit of smoked paprika.",
        "The farmer needs to transport a fox, a chicken, and some grain across a river.",
        "fn main() { println!(\"hello\"); }",
        "Meeting notes 2023-05-14: budget approved, launch moved to June, Alice owns QA.",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    texts
        .push("We talked about hiking trails near the lake and which ones allow dogs. ".repeat(30));
    texts
}

#[test]
fn int8_vectors_are_close_to_fp32() {
    let (Some(fp32), Some(int8)) = (embedder(), int8_embedder()) else {
        return;
    };
    assert_eq!(
        int8.model_id(),
        "sentence-transformers/all-MiniLM-L6-v2@max256@int8",
        "the backend must be part of the id (and so of the cache key)"
    );
    assert_ne!(int8.model_id(), fp32.model_id());
    assert!(int8.backend().starts_with("int8/"), "{}", int8.backend());
    assert_eq!(int8.dim(), fp32.dim());
    let texts = sample_texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let a = fp32.embed(&refs).unwrap();
    let b = int8.embed(&refs).unwrap();
    for ((x, y), t) in a.iter().zip(&b).zip(&refs) {
        assert!(
            (norm(y) - 1.0).abs() < 1e-4,
            "int8 vector of {t:?} not unit length"
        );
        let c = cosine(x, y);
        assert!(c > 0.98, "cosine fp32 vs int8 of {t:?}: {c}");
    }
    // Quantization must not blur which text is closest: the ranking of the samples
    // against a query is the same.
    let query = ["How long was my commute to campus?"];
    let rank = |e: &BertEmbedder, vs: &[Vec<f32>]| {
        let q = e.embed(&query).unwrap().remove(0);
        let mut order: Vec<usize> = (0..vs.len()).collect();
        order.sort_by(|&i, &j| cosine(&q, &vs[j]).total_cmp(&cosine(&q, &vs[i])));
        order[0]
    };
    assert_eq!(rank(fp32, &a), rank(int8, &b));
}

#[test]
fn int8_vector_of_a_text_does_not_depend_on_its_batch() {
    let Some(int8) = int8_embedder() else { return };
    let texts = sample_texts();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let together = int8.embed(&refs).unwrap();
    for (i, t) in refs.iter().enumerate() {
        let alone = int8.embed(&[t]).unwrap().remove(0);
        assert_eq!(alone, together[i], "{t:?} alone vs in a batch");
    }
}

#[test]
fn backend_names_in_settings() {
    let c: EmbedConfig = serde_json::from_str(r#"{"backend": "int8"}"#).unwrap();
    assert_eq!(c.backend, Backend::Int8);
    assert_eq!(EmbedConfig::default().backend, Backend::Auto);
    let err = serde_json::from_str::<EmbedConfig>(r#"{"backend": "fp16"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown variant"), "{err}");
}

#[test]
fn auto_backend_keeps_the_stored_vectors_backend() {
    let auto = EmbedConfig::default();
    let fp32_id = "sentence-transformers/all-MiniLM-L6-v2@max256";
    let int8_id = "sentence-transformers/all-MiniLM-L6-v2@max256@int8";
    // A store that holds vectors of either backend keeps it, whatever this CPU has.
    assert_eq!(auto.resolved(Some(fp32_id)).backend, Backend::Fp32);
    assert_eq!(auto.resolved(Some(int8_id)).backend, Backend::Int8);
    // A new store, or one of another model (rebuilt anyway), gets this CPU's choice.
    let fresh = auto.resolved(None).backend;
    assert_ne!(fresh, Backend::Auto);
    assert_eq!(auto.resolved(Some("other-model@max128")).backend, fresh);
    // Another max_tokens is another model id: not a match.
    let short = EmbedConfig {
        max_tokens: 128,
        ..EmbedConfig::default()
    };
    assert_eq!(short.resolved(Some(fp32_id)).backend, fresh);
    // An explicit backend is never overridden by the store.
    let fp32 = EmbedConfig {
        backend: Backend::Fp32,
        ..EmbedConfig::default()
    };
    assert_eq!(fp32.resolved(Some(int8_id)).backend, Backend::Fp32);
}

#[test]
fn auto_backend_loads_a_concrete_backend_and_its_model_id() {
    let Some(dir) = model_dir() else { return };
    let e = BertEmbedder::from_dir(&dir, &EmbedConfig::default()).unwrap();
    let want = EmbedConfig::default().resolved(None).backend;
    match want {
        Backend::Int8 => {
            assert!(e.model_id().ends_with("@int8"), "{}", e.model_id());
            assert!(e.backend().starts_with("int8/"), "{}", e.backend());
        }
        _ => {
            assert!(!e.model_id().ends_with("@int8"), "{}", e.model_id());
            assert_eq!(e.backend(), "fp32");
        }
    }
}
