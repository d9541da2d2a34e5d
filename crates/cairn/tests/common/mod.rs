#![allow(dead_code)]
use cairn::{Error, Memory, MemoryConfig, SessionInput};
use std::path::{Path, PathBuf};

/// Opens a memory in `dir`, or None (SKIPPED; a failure under `CAIRN_REQUIRE_MODEL`)
/// when the embedding model is not installed: run `./scripts/setup.sh`.
pub fn open(dir: &Path) -> Option<Memory> {
    match Memory::open_with(dir, MemoryConfig::default()) {
        Ok(m) => Some(m),
        Err(Error::Model(e)) => {
            cairn_testkit::model_missing(e);
            None
        }
        Err(e) => panic!("open failed: {e}"),
    }
}

pub fn session(json: &str) -> SessionInput {
    cairn_testkit::fixtures::session(json)
}

pub fn data_dir() -> PathBuf {
    cairn_testkit::fixtures::data_dir()
}
