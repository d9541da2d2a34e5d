//! Configuration: file (TOML) < environment < flags.
use anyhow::{Context, Result};
use cairn::MemoryConfig;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The configuration file: explicit, or `cairn.toml` in the data directory when present.
fn file(explicit: Option<&Path>, dir: &Path) -> Result<Option<(PathBuf, toml::Table)>> {
    let in_dir = dir.join("cairn.toml");
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None if in_dir.exists() => in_dir,
        None => return Ok(None),
    };
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let table: toml::Table =
        toml::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    Ok(Some((path, table)))
}

/// Reads the memory's configuration from the file (its `[server]` table is
/// [`server_file`]'s), then applies flag/env overrides.
pub fn load(
    explicit: Option<&Path>,
    dir: &Path,
    model_dir: Option<PathBuf>,
    embedding_cache: Option<PathBuf>,
) -> Result<MemoryConfig> {
    let mut cfg = match file(explicit, dir)? {
        Some((path, mut table)) => {
            table.remove("server");
            MemoryConfig::deserialize(toml::Value::Table(table))
                .with_context(|| format!("parsing {}", path.display()))?
        }
        None => MemoryConfig::default(),
    };
    if let Some(d) = model_dir {
        cfg.embed.model_dir = Some(d);
    }
    if let Some(c) = embedding_cache {
        cfg.embedding_cache = Some(c);
    }
    Ok(cfg)
}

/// The `[server]` table of the configuration file: what `cairn serve`'s flags (and their
/// `CAIRN_*` variables) set, each under the flag's name with `_` for `-`.
#[derive(Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerFile {
    pub max_body_bytes: Option<usize>,
    pub max_batch_sessions: Option<usize>,
    pub max_request_messages: Option<usize>,
    pub max_text_bytes: Option<usize>,
    pub max_query_bytes: Option<usize>,
    pub max_request_ms: Option<u64>,
    pub header_timeout_ms: Option<u64>,
    pub body_timeout_ms: Option<u64>,
    pub max_connections: Option<usize>,
    pub shutdown_timeout_ms: Option<u64>,
    pub allowed_hosts: Option<Vec<String>>,
}

pub fn server_file(explicit: Option<&Path>, dir: &Path) -> Result<ServerFile> {
    let Some((path, mut table)) = file(explicit, dir)? else {
        return Ok(ServerFile::default());
    };
    match table.remove("server") {
        None => Ok(ServerFile::default()),
        Some(v) => ServerFile::deserialize(v)
            .with_context(|| format!("parsing [server] of {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_flags() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("cairn.toml"),
            "[engine.rank]\nrrf_k = 30.0\n[embed]\nbatch_size = 8\n",
        )
        .unwrap();
        let cfg = load(None, dir.path(), Some("/m".into()), None).unwrap();
        assert_eq!(cfg.engine.rank.rrf_k, 30.0);
        assert_eq!(cfg.embed.batch_size, 8);
        assert_eq!(cfg.embed.model_dir, Some(PathBuf::from("/m")));
        std::fs::write(dir.path().join("cairn.toml"), "[engine.rank]\nrrf = 1\n").unwrap();
        let err = load(None, dir.path(), None, None).unwrap_err();
        assert!(format!("{err:#}").contains("rrf"), "{err:#}");
    }

    #[test]
    fn the_server_table_is_the_servers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("cairn.toml"),
            "[embed]\nbatch_size = 8\n[server]\nheader_timeout_ms = 2500\nmax_connections = 7\n",
        )
        .unwrap();
        assert_eq!(
            load(None, dir.path(), None, None).unwrap().embed.batch_size,
            8
        );
        let s = server_file(None, dir.path()).unwrap();
        assert_eq!(s.header_timeout_ms, Some(2500));
        assert_eq!(s.max_connections, Some(7));
        assert_eq!(s.body_timeout_ms, None);
        std::fs::write(
            dir.path().join("cairn.toml"),
            "[server]\nheader_timeout = 1\n",
        )
        .unwrap();
        let err = format!("{:#}", server_file(None, dir.path()).unwrap_err());
        assert!(err.contains("header_timeout"), "{err}");
    }

    #[test]
    fn embed_backend_switch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cairn.toml");
        let cfg = load(None, dir.path(), None, None).unwrap();
        assert_eq!(cfg.embed.backend, cairn::EmbedBackend::Auto);
        std::fs::write(&path, "[embed]\nbackend = \"int8\"\n").unwrap();
        let cfg = load(None, dir.path(), None, None).unwrap();
        assert_eq!(cfg.embed.backend, cairn::EmbedBackend::Int8);
        std::fs::write(&path, "[embed]\nbackend = \"fp16\"\n").unwrap();
        let err = format!("{:#}", load(None, dir.path(), None, None).unwrap_err());
        assert!(err.contains("backend") && err.contains("int8"), "{err}");
    }
}
