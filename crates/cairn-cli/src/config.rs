//! Configuration: file (TOML) < environment < flags.
use anyhow::{Context, Result};
use cairn::MemoryConfig;
use std::path::{Path, PathBuf};

/// Reads the configuration file (explicit, or `cairn.toml` in the data directory when
/// present), then applies flag/env overrides.
pub fn load(
    explicit: Option<&Path>,
    dir: &Path,
    model_dir: Option<PathBuf>,
    embedding_cache: Option<PathBuf>,
) -> Result<MemoryConfig> {
    let in_dir = dir.join("cairn.toml");
    let path = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => in_dir.exists().then_some(in_dir),
    };
    let mut cfg = match path {
        Some(p) => {
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            toml::from_str(&text).with_context(|| format!("parsing {}", p.display()))?
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
