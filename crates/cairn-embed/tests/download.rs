//! Hub download against a local stand-in for the hub (a plain HTTP server on loopback
//! serving the installed model's files): the download path is exercised for real.
use cairn_core::Embedder;
use cairn_embed::download::download_model;
use cairn_embed::{
    resolve_model_dir, BertEmbedder, EmbedConfig, EmbedLoadError, ModelEnv, DEFAULT_MODEL,
};
use std::path::PathBuf;

mod hub;
use hub::serve;

fn installed() -> Option<PathBuf> {
    match resolve_model_dir(DEFAULT_MODEL, None, &ModelEnv::from_process()) {
        Ok(r) => Some(r.dir),
        Err(e) => {
            cairn_testkit::model_missing(e);
            None
        }
    }
}

#[test]
fn downloads_a_model_that_then_loads_and_embeds() {
    let Some(source) = installed() else { return };
    let endpoint = serve(source.clone(), 3);
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("models").join(DEFAULT_MODEL);
    download_model(DEFAULT_MODEL, &endpoint, &dest).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert_eq!(
            std::fs::read(dest.join(f)).unwrap(),
            std::fs::read(source.join(f)).unwrap(),
            "{f}"
        );
    }
    let config = EmbedConfig::default();
    let downloaded = BertEmbedder::from_dir(&dest, &config).unwrap();
    let original = BertEmbedder::from_dir(&source, &config).unwrap();
    let a = downloaded.embed(&["a cat on the window sill"]).unwrap();
    let b = original.embed(&["a cat on the window sill"]).unwrap();
    assert_eq!(a, b);
}

#[test]
fn a_failed_download_names_the_url_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let endpoint = serve(tmp.path().join("empty"), 1);
    let dest = tmp.path().join("models").join(DEFAULT_MODEL);
    let err = download_model(DEFAULT_MODEL, &endpoint, &dest).unwrap_err();
    assert!(matches!(err, EmbedLoadError::Download { .. }), "{err}");
    assert!(
        err.to_string().contains("/resolve/main/config.json"),
        "{err}"
    );
    assert!(!dest.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dest.parent().unwrap()).unwrap().collect();
    assert!(leftovers.is_empty(), "staging folder left behind");
}
