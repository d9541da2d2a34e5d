//! `BertEmbedder::load` downloads the model when no local copy exists (its own test binary:
//! it changes the process environment).
use cairn_core::Embedder;
use cairn_embed::{resolve_model_dir, BertEmbedder, EmbedConfig, ModelEnv, DEFAULT_MODEL};

mod hub;

#[test]
fn load_downloads_into_cairns_cache_when_nothing_is_installed() {
    let installed = match resolve_model_dir(DEFAULT_MODEL, None, &ModelEnv::from_process()) {
        Ok(i) => i,
        Err(e) => return cairn_testkit::model_missing(e),
    };
    let endpoint = hub::serve(installed.dir.clone(), 3);
    let tmp = tempfile::tempdir().unwrap();
    for var in [
        "CAIRN_MODEL_DIR",
        "XDG_CACHE_HOME",
        "HF_HUB_CACHE",
        "HF_HOME",
        "HF_HUB_OFFLINE",
        "CAIRN_OFFLINE",
    ] {
        std::env::remove_var(var);
    }
    std::env::set_var("HOME", tmp.path());
    std::env::set_var("CAIRN_HOME", tmp.path().join("cairn"));
    std::env::set_var("HF_ENDPOINT", &endpoint);

    let offline = EmbedConfig {
        download: false,
        ..EmbedConfig::default()
    };
    assert!(
        BertEmbedder::load(&offline).is_err(),
        "download = false never downloads"
    );

    let e = BertEmbedder::load(&EmbedConfig::default()).unwrap();
    let dest = tmp.path().join("cairn/models").join(DEFAULT_MODEL);
    assert_eq!(e.model_dir(), dest.as_path());
    assert_eq!(e.embed(&["hello"]).unwrap()[0].len(), 384);
    // Found locally from now on: no server needed.
    let again = resolve_model_dir(DEFAULT_MODEL, None, &ModelEnv::from_process()).unwrap();
    assert_eq!(again.dir, dest);
}
