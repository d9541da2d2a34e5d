//! Writing a trajectory workspace to disk, incrementally: what a coding agent expects
//! (`trajectories/<id>/trajectory.json`, screenshots when they can be found, both
//! summaries, the workflow document, `scripts/inspect`). The content comes from the
//! engine (`cairn_engine::workspace`) and, for the helper script, from the caller
//! ([`WorkspaceHelper`]); this module only writes it.
//!
//! Re-running updates the folder: a trajectory whose JSON is unchanged is not written
//! again, trajectories forgotten since are removed (only folders this export made,
//! listed in `.cairn-workspace.json`), and the other files are rewritten only when their
//! content changed.
use crate::memory::space;
use crate::Error;
use cairn_core::TrajectoryRecord;
use cairn_engine::workspace::{
    concise_summary, content_hash, dir_name, full_summary, trajectory_json, workflow,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// The record of what an export wrote, kept in the workspace.
pub const STATE_FILE: &str = ".cairn-workspace.json";

/// The helper script of a workspace (`scripts/inspect`): how an agent in the folder
/// reaches the inspection verbs, which only its caller knows (the CLI writes one that
/// calls the `cairn` binary). Secrets (a PostgreSQL URL) belong in the environment, never
/// in the script.
#[derive(Debug, Clone)]
pub struct WorkspaceHelper {
    /// The script's content (written executable).
    pub script: String,
    /// Its usage lines, indented four spaces, quoted by INSTRUCTION.md; it must accept
    /// `ID` (a summary) and `ID --state N` (one state), as the summaries say.
    pub usage: String,
}

/// How to write a workspace.
#[derive(Debug, Clone)]
pub struct WorkspaceOptions {
    pub helper: WorkspaceHelper,
    /// Where the trajectories' screenshot references (relative paths) resolve; the files
    /// found are copied into each trajectory's `screenshots/`.
    pub screenshots_from: Option<PathBuf>,
}

/// What an export did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkspaceReport {
    pub dir: PathBuf,
    pub trajectories: usize,
    /// Trajectory folders written (new or changed) and left as they were.
    pub written: usize,
    pub unchanged: usize,
    /// Folders of trajectories no longer in the space, removed.
    pub removed: usize,
    pub screenshots_copied: usize,
    /// Screenshot references that named no file under `screenshots_from`.
    pub screenshots_missing: usize,
    /// The other files rewritten because their content changed.
    pub files_updated: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Entry {
    dir: String,
    sha256: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    space: String,
    trajectories: BTreeMap<String, Entry>,
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let context = context.into();
    move |source| Error::Io { context, source }
}

/// Writes `bytes` to `path` through a temporary file, so a reader never sees half a file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = path.with_extension("cairn-tmp");
    std::fs::write(&tmp, bytes).map_err(io(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(io(format!("writing {}", path.display())))
}

/// Writes `text` unless the file already holds exactly it; true when written.
fn write_if_changed(path: &Path, text: &str) -> Result<bool, Error> {
    if std::fs::read(path).is_ok_and(|b| b == text.as_bytes()) {
        return Ok(false);
    }
    write_atomic(path, text.as_bytes())?;
    Ok(true)
}

/// A screenshot reference that is a plain relative path (no `..`, no URL, not absolute).
fn relative_ref(r: &str) -> Option<&Path> {
    if r.contains("://") {
        return None;
    }
    let p = Path::new(r);
    p.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(p)
}

/// The screenshots of `r` found under `root`: per state, the source file and the name
/// it gets in the trajectory's folder (`screenshots/0007.png`).
fn screenshots(
    r: &TrajectoryRecord,
    root: Option<&Path>,
) -> (Vec<Option<(PathBuf, String)>>, usize) {
    let mut missing = 0;
    let found = r
        .trajectory
        .states
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (root, rel) = (root?, relative_ref(s.screenshot.as_deref()?)?);
            let src = root.join(rel);
            if !src.is_file() {
                missing += 1;
                return None;
            }
            let ext = rel
                .extension()
                .and_then(|e| e.to_str())
                .map_or(String::new(), |e| format!(".{e}"));
            Some((src, format!("screenshots/{i:04}{ext}")))
        })
        .collect();
    (found, missing)
}

fn copy_screenshots(
    folder: &Path,
    shots: &[Option<(PathBuf, String)>],
    report: &mut WorkspaceReport,
) -> Result<(), Error> {
    for (src, name) in shots.iter().flatten() {
        let dest = folder.join(name);
        let same = match (std::fs::metadata(src), std::fs::metadata(&dest)) {
            (Ok(a), Ok(b)) => a.len() == b.len(),
            _ => false,
        };
        if same {
            continue;
        }
        if let Some(p) = dest.parent() {
            std::fs::create_dir_all(p).map_err(io(format!("creating {}", p.display())))?;
        }
        std::fs::copy(src, &dest).map_err(io(format!("copying {}", src.display())))?;
        report.screenshots_copied += 1;
    }
    Ok(())
}

/// Writes one trajectory's folder unless the export already holds it unchanged.
fn write_trajectory(
    r: &TrajectoryRecord,
    tdir: &Path,
    old: &State,
    space_name: &str,
    options: &WorkspaceOptions,
    report: &mut WorkspaceReport,
) -> Result<Entry, Error> {
    let id = &r.trajectory.id;
    let folder_name = dir_name(id);
    let folder = tdir.join(&folder_name);
    let (shots, missing) = screenshots(r, options.screenshots_from.as_deref());
    report.screenshots_missing += missing;
    let files: Vec<Option<String>> = shots
        .iter()
        .map(|s| s.as_ref().map(|(_, n)| n.clone()))
        .collect();
    let json = serde_json::to_string_pretty(&trajectory_json(r, &files))
        .map_err(|e| io("trajectory.json")(e.into()))?;
    let sha256 = content_hash(&json);
    let file = folder.join("trajectory.json");
    let same = old.space == space_name
        && old.trajectories.get(id).is_some_and(|e| e.sha256 == sha256)
        && file.is_file();
    if same {
        report.unchanged += 1;
    } else {
        std::fs::create_dir_all(&folder).map_err(io(format!("creating {}", folder.display())))?;
        write_atomic(&file, json.as_bytes())?;
        report.written += 1;
    }
    copy_screenshots(&folder, &shots, report)?;
    Ok(Entry {
        dir: folder_name,
        sha256,
    })
}

impl crate::Trajectories<'_> {
    /// Writes (or updates) a workspace for a coding agent in `dir` from a space's
    /// trajectories; see the module documentation for what it holds.
    pub fn export_workspace(
        &self,
        space_name: &str,
        dir: &Path,
        options: &WorkspaceOptions,
    ) -> Result<WorkspaceReport, Error> {
        let sp = space(space_name)?;
        let records = self.0.engine.trajectories().trajectories(&sp)?;
        let tdir = dir.join("trajectories");
        for d in [&tdir, &dir.join("scripts")] {
            std::fs::create_dir_all(d).map_err(io(format!("creating {}", d.display())))?;
        }
        let state_path = dir.join(STATE_FILE);
        let old: State = std::fs::read_to_string(&state_path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default();
        let mut report = WorkspaceReport {
            dir: dir.to_path_buf(),
            trajectories: records.len(),
            ..Default::default()
        };
        let mut state = State {
            space: space_name.to_string(),
            trajectories: BTreeMap::new(),
        };
        for r in &records {
            let entry = write_trajectory(r, &tdir, &old, space_name, options, &mut report)?;
            state.trajectories.insert(r.trajectory.id.clone(), entry);
        }
        for (id, e) in &old.trajectories {
            let kept = state.trajectories.get(id).is_some_and(|n| n.dir == e.dir);
            // Only a plain folder name this export made is ever removed.
            if !kept && relative_ref(&e.dir).is_some_and(|p| p.components().count() == 1) {
                let p = tdir.join(&e.dir);
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).map_err(io(format!("removing {}", p.display())))?;
                    report.removed += 1;
                }
            }
        }
        let files = [
            (
                "INSTRUCTION.md",
                workflow(space_name, records.len(), &options.helper.usage),
            ),
            (
                "trajectories/TRAJECTORY_SUMMARY_CONCISE.md",
                concise_summary(&records),
            ),
            (
                "trajectories/TRAJECTORY_SUMMARY_FULL.md",
                full_summary(&records),
            ),
            ("scripts/inspect", options.helper.script.clone()),
        ];
        for (name, text) in files {
            if write_if_changed(&dir.join(name), &text)? {
                report.files_updated.push(name.to_string());
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let script = dir.join("scripts/inspect");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .map_err(io(format!("making {} executable", script.display())))?;
        }
        let text = serde_json::to_string_pretty(&state).map_err(|e| io(STATE_FILE)(e.into()))?;
        write_if_changed(&state_path, &text)?;
        Ok(report)
    }
}
