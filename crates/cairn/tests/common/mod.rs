#![allow(dead_code)]
use cairn::{Error, Memory, MemoryConfig, SessionInput};
use std::path::{Path, PathBuf};

/// Opens a memory in `dir`, or None (with a message) when the embedding model is not
/// installed: run `./scripts/setup.sh`.
pub fn open(dir: &Path) -> Option<Memory> {
    match Memory::open_with(dir, MemoryConfig::default()) {
        Ok(m) => Some(m),
        Err(Error::Model(e)) => {
            eprintln!("SKIPPED: embedding model not installed ({e}); run ./scripts/setup.sh");
            None
        }
        Err(e) => panic!("open failed: {e}"),
    }
}

pub fn session(json: &str) -> SessionInput {
    serde_json::from_str(json).expect("test session json")
}

pub fn data_dir() -> PathBuf {
    std::env::var_os("CAIRN_DATA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"))
}
