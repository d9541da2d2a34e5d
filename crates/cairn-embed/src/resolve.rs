//! Model resolution: from a hub id such as `sentence-transformers/all-MiniLM-L6-v2` to a
//! local directory holding the model files.
//!
//! Places are tried in this order; the first one that holds a complete model wins:
//!
//! 1. a directory named explicitly by the caller (the `model_dir` setting),
//! 2. the `CAIRN_MODEL_DIR` environment variable,
//! 3. Cairn's model cache, `$CAIRN_HOME/models/<hub id>`, where `CAIRN_HOME` defaults to
//!    `$XDG_CACHE_HOME/cairn`, else `$HOME/.cache/cairn` (this is where
//!    `./scripts/setup.sh` installs the default model),
//! 4. the Hugging Face hub cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
//!    `$XDG_CACHE_HOME/huggingface/hub`, else `$HOME/.cache/huggingface/hub`), in its
//!    `models--<org>--<name>/snapshots/<revision>/` layout: the revision named in
//!    `refs/main` if it is complete, else the most recently modified complete snapshot.
//!
//! The first two are the user's explicit choice: if one is set but does not hold a
//! complete model, resolution fails right there instead of silently using another copy.
//!
//! A directory counts only if it has `config.json`, `tokenizer.json` and
//! `model.safetensors` ([`REQUIRED_FILES`]).
//!
//! When none holds the model, [`crate::BertEmbedder::load`] downloads it from the hub
//! into Cairn's model cache (see [`crate::download`]), unless offline.
//!
//! The resolver takes the environment as a value ([`ModelEnv`]) so it can be tested
//! without touching the process environment.
use crate::error::{EmbedLoadError, Tried};
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

/// Files a model directory must hold to count.
pub const REQUIRED_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The environment variables model resolution looks at. Empty values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelEnv {
    /// `CAIRN_MODEL_DIR`: a model directory to use.
    pub cairn_model_dir: Option<PathBuf>,
    /// `CAIRN_HOME`: Cairn's cache root.
    pub cairn_home: Option<PathBuf>,
    /// `XDG_CACHE_HOME`.
    pub xdg_cache_home: Option<PathBuf>,
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `HF_HUB_CACHE`: the Hugging Face hub cache.
    pub hf_hub_cache: Option<PathBuf>,
    /// `HF_HOME`: the Hugging Face root (hub cache under `hub/`).
    pub hf_home: Option<PathBuf>,
    /// `HF_ENDPOINT`: the hub to download from (default: the public hub).
    pub hf_endpoint: Option<String>,
    /// `HF_HUB_OFFLINE=1` or `CAIRN_OFFLINE=1`: never download.
    pub offline: bool,
}

fn non_empty(value: Option<OsString>) -> Option<PathBuf> {
    value.filter(|v| !v.is_empty()).map(PathBuf::from)
}

impl ModelEnv {
    /// Reads the variables from the process environment.
    pub fn from_process() -> Self {
        let var = |name: &str| non_empty(std::env::var_os(name));
        Self {
            cairn_model_dir: var("CAIRN_MODEL_DIR"),
            cairn_home: var("CAIRN_HOME"),
            xdg_cache_home: var("XDG_CACHE_HOME"),
            home: var("HOME"),
            hf_hub_cache: var("HF_HUB_CACHE"),
            hf_home: var("HF_HOME"),
            hf_endpoint: std::env::var("HF_ENDPOINT").ok().filter(|v| !v.is_empty()),
            offline: ["HF_HUB_OFFLINE", "CAIRN_OFFLINE"].iter().any(|n| {
                std::env::var(n).is_ok_and(|v| matches!(v.as_str(), "1" | "true" | "yes"))
            }),
        }
    }

    fn get(value: &Option<PathBuf>) -> Option<&Path> {
        value.as_deref().filter(|p| !p.as_os_str().is_empty())
    }

    /// The user's cache directory: `$XDG_CACHE_HOME`, else `$HOME/.cache`.
    fn cache_dir(&self) -> Option<PathBuf> {
        Self::get(&self.xdg_cache_home)
            .map(Path::to_path_buf)
            .or_else(|| Self::get(&self.home).map(|h| h.join(".cache")))
    }

    /// Cairn's cache root: `$CAIRN_HOME`, else `$XDG_CACHE_HOME/cairn`, else
    /// `$HOME/.cache/cairn`.
    pub fn cairn_home(&self) -> Option<PathBuf> {
        Self::get(&self.cairn_home)
            .map(Path::to_path_buf)
            .or_else(|| self.cache_dir().map(|c| c.join("cairn")))
    }

    /// Cairn's model cache: `<cairn home>/models`.
    pub fn cairn_models_dir(&self) -> Option<PathBuf> {
        self.cairn_home().map(|h| h.join("models"))
    }

    /// The Hugging Face hub cache: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else
    /// `$XDG_CACHE_HOME/huggingface/hub`, else `$HOME/.cache/huggingface/hub`.
    pub fn hf_hub_cache(&self) -> Option<PathBuf> {
        Self::get(&self.hf_hub_cache)
            .map(Path::to_path_buf)
            .or_else(|| Self::get(&self.hf_home).map(|h| h.join("hub")))
            .or_else(|| self.cache_dir().map(|c| c.join("huggingface").join("hub")))
    }
}

/// Where a model directory was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// Named by the caller (the `model_dir` setting).
    Explicit,
    /// Named by the `CAIRN_MODEL_DIR` environment variable.
    EnvVar,
    /// Cairn's model cache (`$CAIRN_HOME/models/<hub id>`).
    CairnCache,
    /// A snapshot in the Hugging Face hub cache.
    HubCache,
    /// Downloaded from a hub into Cairn's model cache just now.
    Downloaded,
}

/// A model directory that holds every file in [`REQUIRED_FILES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedModel {
    pub dir: PathBuf,
    pub source: ModelSource,
}

/// Checks that `dir` holds a complete model; the error says what is wrong.
pub fn check_model_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return Err("does not exist".into());
    }
    if !dir.is_dir() {
        return Err("not a directory".into());
    }
    let missing: Vec<&str> = REQUIRED_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("missing {}", missing.join(", ")))
    }
}

/// Splits a hub id into its path components, rejecting anything that could escape the
/// cache directories (absolute paths, `..`, empty parts).
fn hub_id_parts(hub_id: &str) -> Result<Vec<&str>, EmbedLoadError> {
    let bad = |why: &str| {
        EmbedLoadError::InvalidSettings(format!(
            "model {hub_id:?} is not a hub id like \"org/name\": {why}"
        ))
    };
    if hub_id.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if hub_id.contains('\\') {
        return Err(bad("it contains a backslash"));
    }
    let parts: Vec<&str> = hub_id.split('/').collect();
    if parts.len() > 2 {
        return Err(bad("it has more than one '/'"));
    }
    for part in &parts {
        let mut comps = Path::new(part).components();
        match (comps.next(), comps.next()) {
            (Some(Component::Normal(_)), None) => {}
            _ => return Err(bad("it has an empty, '.' or '..' part")),
        }
    }
    Ok(parts)
}

/// Resolves the local directory of model `hub_id` (see the module docs for the order).
///
/// `explicit` is the caller's `model_dir` setting; `env` the environment (usually
/// [`ModelEnv::from_process`]). The error lists every place tried and tells the user to
/// run `./scripts/setup.sh`.
pub fn resolve_model_dir(
    hub_id: &str,
    explicit: Option<&Path>,
    env: &ModelEnv,
) -> Result<ResolvedModel, EmbedLoadError> {
    let parts = hub_id_parts(hub_id)?;
    let not_found = |tried: Vec<Tried>| EmbedLoadError::ModelNotFound {
        model: hub_id.to_string(),
        tried,
    };
    let mut tried = Vec::new();

    // 1 and 2: explicit choices of the user; no fallback past them.
    let pinned = [
        (
            explicit.filter(|p| !p.as_os_str().is_empty()),
            "model_dir setting",
            ModelSource::Explicit,
        ),
        (
            ModelEnv::get(&env.cairn_model_dir),
            "CAIRN_MODEL_DIR",
            ModelSource::EnvVar,
        ),
    ];
    for (dir, origin, source) in pinned {
        if let Some(dir) = dir {
            return match check_model_dir(dir) {
                Ok(()) => Ok(ResolvedModel {
                    dir: dir.to_path_buf(),
                    source,
                }),
                Err(reason) => {
                    tried.push(Tried {
                        origin,
                        path: dir.to_path_buf(),
                        reason,
                    });
                    Err(not_found(tried))
                }
            };
        }
    }

    // 3: Cairn's model cache.
    if let Some(found) = in_cairn_cache(env, &parts, &mut tried) {
        return Ok(found);
    }

    // 4: the Hugging Face hub cache.
    if let Some(found) = in_hub_cache(env, &parts, &mut tried) {
        return Ok(found);
    }

    Err(not_found(tried))
}

/// The model in Cairn's model cache (`<models>/<org>/<name>`), or why not (in `tried`).
fn in_cairn_cache(env: &ModelEnv, parts: &[&str], tried: &mut Vec<Tried>) -> Option<ResolvedModel> {
    match env.cairn_models_dir() {
        Some(models) => {
            let dir = parts.iter().fold(models, |d, p| d.join(p));
            match check_model_dir(&dir) {
                Ok(()) => {
                    return Some(ResolvedModel {
                        dir,
                        source: ModelSource::CairnCache,
                    })
                }
                Err(reason) => tried.push(Tried {
                    origin: "Cairn model cache",
                    path: dir,
                    reason,
                }),
            }
        }
        None => tried.push(Tried {
            origin: "Cairn model cache",
            path: PathBuf::from("$CAIRN_HOME/models"),
            reason: "CAIRN_HOME, XDG_CACHE_HOME and HOME are all unset".into(),
        }),
    }
    None
}

/// The model's snapshot in the Hugging Face hub cache, or why not (in `tried`).
fn in_hub_cache(env: &ModelEnv, parts: &[&str], tried: &mut Vec<Tried>) -> Option<ResolvedModel> {
    match env.hf_hub_cache() {
        Some(hub) => {
            let repo = hub.join(format!("models--{}", parts.join("--")));
            match hub_snapshot(&repo) {
                Ok(dir) => {
                    return Some(ResolvedModel {
                        dir,
                        source: ModelSource::HubCache,
                    })
                }
                Err(reason) => tried.push(Tried {
                    origin: "Hugging Face hub cache",
                    path: repo.join("snapshots"),
                    reason,
                }),
            }
        }
        None => tried.push(Tried {
            origin: "Hugging Face hub cache",
            path: PathBuf::from("$HF_HUB_CACHE"),
            reason: "HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME and HOME are all unset".into(),
        }),
    }
    None
}

/// Picks a complete snapshot of a hub cache repository directory
/// (`models--<org>--<name>`): the one named by `refs/main` if complete, else the most
/// recently modified complete one (ties broken by name, so the choice is stable).
fn hub_snapshot(repo: &Path) -> Result<PathBuf, String> {
    if !repo.is_dir() {
        return Err("does not exist".into());
    }
    let snapshots = repo.join("snapshots");
    let mut notes = Vec::new();
    if let Ok(rev) = std::fs::read_to_string(repo.join("refs").join("main")) {
        let rev = rev.trim();
        let valid_rev = !rev.is_empty() && !rev.contains(['/', '\\']) && rev != "." && rev != "..";
        if valid_rev {
            let dir = snapshots.join(rev);
            match check_model_dir(&dir) {
                Ok(()) => return Ok(dir),
                Err(reason) => notes.push(format!("refs/main snapshot {rev} {reason}")),
            }
        }
    }
    let entries = std::fs::read_dir(&snapshots).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no snapshots directory".to_string(),
        _ => format!("cannot list snapshots: {e}"),
    })?;
    let mut best: Option<(SystemTime, OsString, PathBuf)> = None;
    for entry in entries.flatten() {
        let dir = entry.path();
        if check_model_dir(&dir).is_err() {
            continue;
        }
        let modified = std::fs::metadata(&dir)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let key = (modified, entry.file_name());
        let better = match &best {
            None => true,
            Some((t, n, _)) => key > (*t, n.clone()),
        };
        if better {
            best = Some((key.0, key.1, dir));
        }
    }
    match best {
        Some((_, _, dir)) => Ok(dir),
        None => {
            notes.push(format!("no snapshot holds {}", REQUIRED_FILES.join(", ")));
            Err(notes.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn make_model(dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        for f in REQUIRED_FILES {
            fs::write(dir.join(f), b"{}").unwrap();
        }
    }

    fn env_home(home: &Path) -> ModelEnv {
        ModelEnv {
            home: Some(home.to_path_buf()),
            ..ModelEnv::default()
        }
    }

    const ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

    #[test]
    fn explicit_dir_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let explicit = tmp.path().join("explicit");
        let from_env = tmp.path().join("env");
        make_model(&explicit);
        make_model(&from_env);
        make_model(&tmp.path().join(".cache/cairn/models").join(ID));
        let env = ModelEnv {
            cairn_model_dir: Some(from_env.clone()),
            ..env_home(tmp.path())
        };
        let got = resolve_model_dir(ID, Some(&explicit), &env).unwrap();
        assert_eq!(got.dir, explicit);
        assert_eq!(got.source, ModelSource::Explicit);
        let got = resolve_model_dir(ID, None, &env).unwrap();
        assert_eq!(got.dir, from_env);
        assert_eq!(got.source, ModelSource::EnvVar);
    }

    #[test]
    fn env_var_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("m");
        make_model(&dir);
        let env = ModelEnv {
            cairn_model_dir: Some(dir.clone()),
            ..ModelEnv::default()
        };
        let got = resolve_model_dir(ID, None, &env).unwrap();
        assert_eq!(
            got,
            ResolvedModel {
                dir,
                source: ModelSource::EnvVar
            }
        );
    }

    #[test]
    fn incomplete_explicit_dir_is_an_error_not_a_fallback() {
        let tmp = tempfile::tempdir().unwrap();
        let explicit = tmp.path().join("explicit");
        fs::create_dir_all(&explicit).unwrap();
        fs::write(explicit.join("config.json"), b"{}").unwrap();
        make_model(&tmp.path().join(".cache/cairn/models").join(ID));
        let err = resolve_model_dir(ID, Some(&explicit), &env_home(tmp.path())).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("model_dir setting"), "{msg}");
        assert!(
            msg.contains("missing tokenizer.json, model.safetensors"),
            "{msg}"
        );
        assert!(msg.contains("./scripts/setup.sh"), "{msg}");
    }

    #[test]
    fn cairn_cache_locations() {
        let tmp = tempfile::tempdir().unwrap();
        // HOME default.
        let home_dir = tmp.path().join("home/.cache/cairn/models").join(ID);
        make_model(&home_dir);
        let env = env_home(&tmp.path().join("home"));
        let got = resolve_model_dir(ID, None, &env).unwrap();
        assert_eq!(got.dir, home_dir);
        assert_eq!(got.source, ModelSource::CairnCache);
        // XDG_CACHE_HOME beats HOME.
        let xdg_dir = tmp.path().join("xdg/cairn/models").join(ID);
        make_model(&xdg_dir);
        let env = ModelEnv {
            xdg_cache_home: Some(tmp.path().join("xdg")),
            ..env
        };
        assert_eq!(resolve_model_dir(ID, None, &env).unwrap().dir, xdg_dir);
        // CAIRN_HOME beats both.
        let cairn_dir = tmp.path().join("ch/models").join(ID);
        make_model(&cairn_dir);
        let env = ModelEnv {
            cairn_home: Some(tmp.path().join("ch")),
            ..env
        };
        assert_eq!(resolve_model_dir(ID, None, &env).unwrap().dir, cairn_dir);
    }

    #[test]
    fn empty_env_values_count_as_unset() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".cache/cairn/models").join(ID);
        make_model(&dir);
        let env = ModelEnv {
            cairn_model_dir: Some(PathBuf::new()),
            cairn_home: Some(PathBuf::new()),
            ..env_home(tmp.path())
        };
        assert_eq!(resolve_model_dir(ID, None, &env).unwrap().dir, dir);
    }

    #[test]
    fn hub_snapshot_from_refs_main() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp
            .path()
            .join("hub/models--sentence-transformers--all-MiniLM-L6-v2");
        make_model(&repo.join("snapshots/aaa"));
        make_model(&repo.join("snapshots/bbb"));
        // An incomplete snapshot is never chosen.
        fs::create_dir_all(repo.join("snapshots/ccc")).unwrap();
        fs::write(repo.join("snapshots/ccc/config.json"), b"{}").unwrap();
        fs::create_dir_all(repo.join("refs")).unwrap();
        fs::write(repo.join("refs/main"), "aaa\n").unwrap();
        let env = ModelEnv {
            hf_hub_cache: Some(tmp.path().join("hub")),
            ..env_home(&tmp.path().join("nohome"))
        };
        let got = resolve_model_dir(ID, None, &env).unwrap();
        assert_eq!(got.dir, repo.join("snapshots/aaa"));
        assert_eq!(got.source, ModelSource::HubCache);

        // Without refs/main, any complete snapshot (never the incomplete one).
        fs::remove_file(repo.join("refs/main")).unwrap();
        let got = resolve_model_dir(ID, None, &env).unwrap();
        assert!(
            got.dir == repo.join("snapshots/aaa") || got.dir == repo.join("snapshots/bbb"),
            "{got:?}"
        );

        // refs/main naming an incomplete snapshot falls back to a complete one.
        fs::write(repo.join("refs/main"), "ccc").unwrap();
        let got = resolve_model_dir(ID, None, &env).unwrap();
        assert_ne!(got.dir, repo.join("snapshots/ccc"));
    }

    #[test]
    fn hub_cache_under_hf_home() {
        let tmp = tempfile::tempdir().unwrap();
        let snap = tmp
            .path()
            .join("hf/hub/models--sentence-transformers--all-MiniLM-L6-v2/snapshots/r1");
        make_model(&snap);
        let env = ModelEnv {
            hf_home: Some(tmp.path().join("hf")),
            ..env_home(&tmp.path().join("nohome"))
        };
        assert_eq!(resolve_model_dir(ID, None, &env).unwrap().dir, snap);
        // Cairn's cache comes before the hub cache.
        let cairn = tmp.path().join("nohome/.cache/cairn/models").join(ID);
        make_model(&cairn);
        assert_eq!(resolve_model_dir(ID, None, &env).unwrap().dir, cairn);
    }

    #[test]
    fn error_lists_every_place_tried() {
        let tmp = tempfile::tempdir().unwrap();
        let env = env_home(tmp.path());
        let err = resolve_model_dir(ID, None, &env).unwrap_err();
        let EmbedLoadError::ModelNotFound { model, tried } = &err else {
            panic!("unexpected error {err:?}");
        };
        assert_eq!(model, ID);
        assert_eq!(tried.len(), 2);
        let msg = err.to_string();
        let cairn = tmp.path().join(".cache/cairn/models").join(ID);
        let hub = tmp
            .path()
            .join(".cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2");
        assert!(msg.contains(&cairn.display().to_string()), "{msg}");
        assert!(msg.contains(&hub.display().to_string()), "{msg}");
        assert!(msg.contains("Cairn model cache"), "{msg}");
        assert!(msg.contains("Hugging Face hub cache"), "{msg}");
        assert!(msg.contains("./scripts/setup.sh"), "{msg}");

        // With nothing set at all the message still says what is missing.
        let err = resolve_model_dir(ID, None, &ModelEnv::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("all unset"), "{msg}");
        assert!(msg.contains("./scripts/setup.sh"), "{msg}");
    }

    #[test]
    fn rejects_hub_ids_that_escape() {
        let env = ModelEnv::default();
        for id in ["", "../x", "a/../b", "/abs", "a/b/c", "a\\b", "a//b", "./x"] {
            assert!(
                matches!(
                    resolve_model_dir(id, None, &env),
                    Err(EmbedLoadError::InvalidSettings(_))
                ),
                "{id:?}"
            );
        }
        // A bare name (legacy hub ids) is fine.
        assert!(matches!(
            resolve_model_dir("bert-base-uncased", None, &env),
            Err(EmbedLoadError::ModelNotFound { .. })
        ));
    }
}
