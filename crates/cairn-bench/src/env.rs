//! Facts about the build and the machine, recorded with every run.
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Git revision of the workspace at build time (`git rev-parse --short HEAD`, run by
/// build.rs; `-dirty` when tracked files had changes; "unknown" without git or commits).
pub const GIT_SHA: &str = env!("CAIRN_BENCH_GIT_SHA");
/// When build.rs last ran (UTC).
pub const BUILD_TIME: &str = env!("CAIRN_BENCH_BUILD_TIME");
/// How [`GIT_SHA`] was obtained, for METHODOLOGY.md.
pub const GIT_SHA_SOURCE: &str = "build time (build.rs runs `git rev-parse --short HEAD`)";

/// The machine a run ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Logical CPUs available to the process.
    pub nproc: usize,
    /// `model name` from /proc/cpuinfo.
    pub cpu_model: String,
    /// `MemTotal` from /proc/meminfo, in GiB.
    pub memory_gib: Option<f64>,
    pub os: String,
    pub arch: String,
}

impl Machine {
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_else(|| "unknown".into());
        let memory_gib = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find(|l| l.starts_with("MemTotal:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
            .map(|kb| (kb / 1024.0 / 1024.0 * 10.0).round() / 10.0);
        Self {
            nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_model,
            memory_gib,
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
        }
    }
}

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `$CAIRN_HOME`, else `${XDG_CACHE_HOME:-$HOME/.cache}/cairn`.
pub fn cairn_home() -> Option<PathBuf> {
    var("CAIRN_HOME")
        .or_else(|| var("XDG_CACHE_HOME").map(|x| x.join("cairn")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("cairn")))
}

/// The shared embedding cache of benchmark runs: `$CAIRN_HOME/embedding-cache.sqlite3`.
pub fn default_embedding_cache() -> Option<PathBuf> {
    cairn_home().map(|h| h.join("embedding-cache.sqlite3"))
}

/// Default folder of the benchmark files: `$CAIRN_DATA_DIR`, else `../shared/data`.
pub fn default_data_dir() -> PathBuf {
    var("CAIRN_DATA_DIR").unwrap_or_else(|| PathBuf::from("../shared/data"))
}

/// The process's command line, shell-quoted where needed.
pub fn command_line() -> Vec<String> {
    std::env::args().collect()
}

/// Joins arguments into one line a shell would read back the same.
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Bytes of every file under `p` (the facade's measure of a data directory).
pub use cairn::dir_size;

fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Current and peak resident memory of this process, in bytes (0 where unknown).
pub fn rss() -> (u64, u64) {
    (
        proc_status_kib("VmRSS:") * 1024,
        proc_status_kib("VmHWM:") * 1024,
    )
}

/// Starts a new peak-memory window (Linux: writing 5 to clear_refs resets VmHWM).
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Removes an SQLite file with its WAL and shared-memory files (what is not there is
/// skipped).
pub fn remove_sqlite(file: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        let args: Vec<String> = ["cairn", "bench", "--questions", "a b", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            shell_join(&args),
            r"cairn bench --questions 'a b' 'it'\''s'"
        );
        assert!(Machine::detect().nproc >= 1);
    }
}
