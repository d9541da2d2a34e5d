//! How a run was made: dataset, build, embedder, machine, config rows, selection and
//! what the protocol noted; written to `run.json` and into `summary.json`.
use crate::env::{self, Machine};
use crate::qa::QaSetup;
use crate::run::rows::ConfigRow;
use cairn::{Memory, Timestamp};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Everything recorded about a run, written to run.json, summary.json and
/// METHODOLOGY.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub dataset: String,
    pub data_path: String,
    pub data_sha256: String,
    pub run_label: String,
    pub run_dir: String,
    pub started_at: Timestamp,
    #[serde(default)]
    pub finished_at: Option<Timestamp>,
    pub command_line: Vec<String>,
    /// Command lines of earlier invocations that this run resumed.
    #[serde(default)]
    pub previous_command_lines: Vec<Vec<String>>,
    pub cairn_version: String,
    pub git_sha: String,
    pub git_sha_source: String,
    pub build_time: String,
    pub embedding_model: String,
    pub embedding_dim: usize,
    pub embedding_cache: Option<String>,
    /// Engine and embedder settings in force (`MemoryConfig` without the cache path).
    #[serde(default)]
    pub memory_settings: serde_json::Value,
    pub machine: Machine,
    pub configs: Vec<ConfigRow>,
    pub as_of_policy: String,
    pub as_of_description: String,
    pub limit: Option<usize>,
    pub questions_filter: Vec<String>,
    #[serde(default)]
    pub max_questions_per_conv: Option<usize>,
    pub questions_in_file: usize,
    pub questions_selected: usize,
    pub keep_data: bool,
    pub load_seconds: f64,
    /// Facts about the data found while preparing the run.
    pub dataset_notes: Vec<String>,
    /// Known limitations of this run's protocol.
    pub limitations: Vec<String>,
    /// Reader and judge of the QA rows (runs with `--reader`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qa: Option<QaSetup>,
}

impl RunMeta {
    /// A run's record with the build, the machine and the embedder filled in and every
    /// protocol field empty, for the caller to set what its protocol has.
    pub fn new(
        dataset: &str,
        run_dir: &Path,
        memory: &Memory,
        embedding_cache: Option<&Path>,
        memory_settings: serde_json::Value,
    ) -> Self {
        Self {
            dataset: dataset.into(),
            data_path: "(generated)".into(),
            data_sha256: "-".into(),
            run_label: run_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            run_dir: run_dir.display().to_string(),
            started_at: chrono::Utc::now(),
            finished_at: None,
            command_line: env::command_line(),
            previous_command_lines: Vec::new(),
            cairn_version: cairn::VERSION.into(),
            git_sha: env::GIT_SHA.into(),
            git_sha_source: env::GIT_SHA_SOURCE.into(),
            build_time: env::BUILD_TIME.into(),
            embedding_model: memory.embedder().model_id().to_string(),
            embedding_dim: memory.embedder().dim(),
            embedding_cache: embedding_cache.map(|c| c.display().to_string()),
            memory_settings,
            machine: Machine::detect(),
            configs: Vec::new(),
            as_of_policy: "none".into(),
            as_of_description: "as_of = none".into(),
            limit: None,
            questions_filter: Vec::new(),
            max_questions_per_conv: None,
            questions_in_file: 0,
            questions_selected: 0,
            keep_data: false,
            load_seconds: 0.0,
            dataset_notes: Vec::new(),
            limitations: Vec::new(),
            qa: None,
        }
    }
}
