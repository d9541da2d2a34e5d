//! Loading errors, without the real model.
use cairn_embed::{BertEmbedder, EmbedConfig, EmbedLoadError};
use std::fs;

#[test]
fn missing_file_names_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let err = BertEmbedder::from_dir(tmp.path(), &EmbedConfig::default()).unwrap_err();
    match &err {
        EmbedLoadError::MissingFile { path } => {
            assert_eq!(path, &tmp.path().join("config.json"))
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(err
        .to_string()
        .contains(&tmp.path().join("config.json").display().to_string()));
}

#[test]
fn bad_config_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("config.json"), b"{ not json").unwrap();
    let err = BertEmbedder::from_dir(tmp.path(), &EmbedConfig::default()).unwrap_err();
    assert!(matches!(err, EmbedLoadError::BadConfig { .. }), "{err}");

    fs::write(
        tmp.path().join("config.json"),
        br#"{"model_type": "bert", "hidden_size": 384}"#,
    )
    .unwrap();
    let err = BertEmbedder::from_dir(tmp.path(), &EmbedConfig::default()).unwrap_err();
    assert!(matches!(err, EmbedLoadError::BadConfig { .. }), "{err}");
    assert!(err.to_string().contains("config.json"), "{err}");
}

#[test]
fn not_found_error_from_load_mentions_setup() {
    let tmp = tempfile::tempdir().unwrap();
    let config = EmbedConfig {
        model_dir: Some(tmp.path().join("nowhere")),
        ..EmbedConfig::default()
    };
    let err = BertEmbedder::load(&config).unwrap_err();
    assert!(matches!(err, EmbedLoadError::ModelNotFound { .. }), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("./scripts/setup.sh"), "{msg}");
    assert!(msg.contains("nowhere"), "{msg}");
}

#[test]
fn config_deserializes_with_defaults() {
    let config: EmbedConfig = serde_json::from_str(r#"{"batch_size": 8}"#).unwrap();
    assert_eq!(config.batch_size, 8);
    assert_eq!(config.max_tokens, 256);
    assert_eq!(config.model, cairn_embed::DEFAULT_MODEL);
    assert!(config.model_dir.is_none());
    assert!(serde_json::from_str::<EmbedConfig>(r#"{"batchsize": 8}"#).is_err());
}
