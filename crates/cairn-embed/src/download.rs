//! Download of a model from a Hugging Face-compatible hub on first use, for machines that
//! reach one. The files land in Cairn's model cache, where later runs find them.
//!
//! Off when `HF_HUB_OFFLINE=1` or `CAIRN_OFFLINE=1`, or when `download = false` in the
//! embedding settings. `HF_ENDPOINT` points at a mirror.
use crate::error::EmbedLoadError;
use crate::resolve::REQUIRED_FILES;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// The public hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Largest file accepted from a hub (the default model's weights are ~90 MB).
const MAX_FILE_BYTES: u64 = 4 << 30;

/// Downloads the files a model needs ([`REQUIRED_FILES`]) of `hub_id` at revision `main`
/// from `endpoint` into `dest`. Files are written to a staging folder beside `dest` and
/// moved into place at the end, so an interrupted download never leaves a half model.
pub fn download_model(hub_id: &str, endpoint: &str, dest: &Path) -> Result<(), EmbedLoadError> {
    let parent = dest.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| EmbedLoadError::Io {
        path: parent.to_path_buf(),
        source: e,
    })?;
    let staging = parent.join(format!(
        ".download-{}-{}",
        std::process::id(),
        dest.file_name().and_then(|n| n.to_str()).unwrap_or("model")
    ));
    let result = fetch_all(hub_id, endpoint, &staging).and_then(|()| {
        std::fs::rename(&staging, dest).map_err(|e| EmbedLoadError::Io {
            path: dest.to_path_buf(),
            source: e,
        })
    });
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result
}

fn fetch_all(hub_id: &str, endpoint: &str, staging: &Path) -> Result<(), EmbedLoadError> {
    std::fs::create_dir_all(staging).map_err(|e| EmbedLoadError::Io {
        path: staging.to_path_buf(),
        source: e,
    })?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(10)))
        .timeout_recv_response(Some(Duration::from_secs(60)))
        .build()
        .into();
    for file in REQUIRED_FILES {
        let url = format!(
            "{}/{hub_id}/resolve/main/{file}",
            endpoint.trim_end_matches('/')
        );
        tracing::info!(%url, "downloading model file");
        let failed = |reason: String| EmbedLoadError::Download {
            url: url.clone(),
            reason,
        };
        let response = agent.get(&url).call().map_err(|e| failed(e.to_string()))?;
        let mut bytes = Vec::new();
        response
            .into_body()
            .into_reader()
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| failed(e.to_string()))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(failed(format!("larger than {MAX_FILE_BYTES} bytes")));
        }
        let path = staging.join(file);
        std::fs::write(&path, &bytes).map_err(|e| EmbedLoadError::Io { path, source: e })?;
    }
    Ok(())
}
