//! The run folder `<out>/<run-label>/` and the names inside it: labels (they name a
//! folder), the scratch data directory, and the spaces questions are ingested into.
use super::meta::RunMeta;
use anyhow::{bail, Context as _};
use cairn::Timestamp;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A space name for a question or conversation id: characters outside
/// `[A-Za-z0-9._:@-]` become `_`, and a short hash of the id is added when anything had
/// to change (so two ids never share a space), within 128 bytes.
pub fn space_name(prefix: &str, id: &str) -> String {
    let clean: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{prefix}-{clean}");
    let changed = clean != id || name.len() > 128;
    if changed {
        let h = Sha256::digest(id.as_bytes());
        let tag = hex::encode(&h[..4]);
        name.truncate(128 - 9);
        name = format!("{name}-{tag}");
    }
    name
}

/// A sortable UTC stamp for default labels: `20261201T031601Z`.
pub fn utc_stamp(t: Timestamp) -> String {
    t.format("%Y%m%dT%H%M%SZ").to_string()
}

/// Refuses a label that could not name a folder of its own.
pub fn check_label(label: &str) -> anyhow::Result<()> {
    let ok = !label.is_empty()
        && label != "."
        && label != ".."
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '@'));
    if !ok {
        bail!("--run-label {label:?}: use letters, digits and . _ - + @ (it names a folder)");
    }
    Ok(())
}

/// The newest `<prefix>*` folder under `out` (labels end in a sortable UTC stamp).
pub fn latest_run(out: &Path, prefix: &str) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(out)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names.pop()
}

/// A run's folder and its scratch data directory (`data/`, removed at the end unless
/// `--keep-data`).
pub struct RunFolder {
    pub label: String,
    pub dir: PathBuf,
    pub data_dir: PathBuf,
}

impl RunFolder {
    /// The label `--run-label` gives, else `<prefix>-<UTC stamp>`.
    pub fn label(given: Option<&String>, prefix: &str) -> String {
        given
            .cloned()
            .unwrap_or_else(|| format!("{prefix}-{}", utc_stamp(chrono::Utc::now())))
    }

    /// The folder of a run that does not resume: refused when it already holds results
    /// (`hint` is appended to the error), created, its data directory emptied.
    pub fn fresh(out: &Path, label: String, hint: &str) -> anyhow::Result<RunFolder> {
        check_label(&label)?;
        let dir = out.join(&label);
        if dir.join("results.jsonl").exists() {
            bail!(
                "{} already holds results: pass another --run-label{hint}",
                dir.display()
            );
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let data_dir = dir.join("data");
        if data_dir.exists() {
            std::fs::remove_dir_all(&data_dir)
                .with_context(|| format!("removing {}", data_dir.display()))?;
        }
        Ok(RunFolder {
            label,
            dir,
            data_dir,
        })
    }

    pub fn results(&self) -> PathBuf {
        self.dir.join("results.jsonl")
    }

    /// Writes the run's `run.json` (again as the run goes).
    pub fn write_meta(&self, meta: &RunMeta) -> anyhow::Result<()> {
        std::fs::write(
            self.dir.join("run.json"),
            serde_json::to_string_pretty(meta)?,
        )?;
        Ok(())
    }

    /// Removes the run's data directory (a run without `--keep-data`, once it is done). A
    /// background writer can outlive the closed store (tantivy's index writer stops its
    /// merge threads on drop without waiting for them) and write a file while the directory
    /// is being removed: `.ci/run` once failed with "Directory not empty" here. The removal
    /// is tried again for up to two seconds.
    pub fn remove_data(&self) -> anyhow::Result<()> {
        let mut tries = 0;
        while self.data_dir.exists() {
            match std::fs::remove_dir_all(&self.data_dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty && tries < 20 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("removing {}", self.data_dir.display()))
                }
            }
        }
        Ok(())
    }
}
