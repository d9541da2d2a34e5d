//! The append-only `results.jsonl` of a run: written a line at a time, read back whole.
use anyhow::Context as _;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The append-only `results.jsonl`.
pub struct ResultsFile {
    path: PathBuf,
    file: File,
}

impl ResultsFile {
    /// Opens for appending. A last line cut short by a crash is removed first, so what
    /// follows starts on a fresh line.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        repair_tail(path)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends one record as a line and hands it to the OS at once.
    pub fn append<T: Serialize>(&mut self, r: &T) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(r)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .with_context(|| format!("writing {}", self.path.display()))
    }
}

fn repair_tail(path: &Path) -> anyhow::Result<()> {
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    f.set_len(keep as u64)
        .with_context(|| format!("truncating the cut-short last line of {}", path.display()))?;
    tracing::warn!(path = %path.display(), "dropped a cut-short last line");
    Ok(())
}

/// Reads every record of a results file (none if it does not exist). Lines that do not
/// parse (a line cut short by a crash) are skipped and counted.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> anyhow::Result<(Vec<T>, usize)> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    let mut out = Vec::new();
    let mut bad = 0;
    for line in BufReader::new(file).lines() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&line) {
            Ok(r) => out.push(r),
            Err(_) => bad += 1,
        }
    }
    Ok((out, bad))
}
