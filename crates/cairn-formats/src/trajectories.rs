//! Agent trajectories as JSONL (the LongMemEval-V2 `trajectories.jsonl` shape): one
//! `{id, domain, goal, start_url, outcome, states: [{url, action, thought,
//! accessibility_tree, screenshot}]}` per line.
use crate::error::split_json_error;
use crate::io::open_reader;
use crate::FormatError;
use cairn_core::{InputError, TrajectoryInput};
use std::io::BufRead;
use std::path::Path;

/// Reads every trajectory of a JSONL file (plain or gzip), validated. Errors name the
/// file, the line and the field.
pub fn read_trajectories_jsonl(
    path: impl AsRef<Path>,
) -> Result<Vec<TrajectoryInput>, FormatError> {
    let path = path.as_ref();
    let mut out = Vec::new();
    for (i, line) in open_reader(path)?.lines().enumerate() {
        let line = line.map_err(|e| FormatError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let rec = format!("line {}", i + 1);
        let t: TrajectoryInput = serde_json::from_str(&line).map_err(|e| {
            FormatError::record(path, InputError::new(&rec, split_json_error(&e).0))
        })?;
        let t = t
            .validate()
            .map_err(|e| FormatError::record(path, InputError::new(&rec, e.to_string())))?;
        out.push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_and_names_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trajectories.jsonl");
        std::fs::write(
            &p,
            "{\"id\":\"t1\",\"goal\":\"g\",\"outcome\":true,\"states\":[{\"url\":\"u\",\"accessibility_tree\":\"[1] x\"}]}\n\n",
        )
        .unwrap();
        let t = read_trajectories_jsonl(&p).unwrap();
        assert_eq!(t[0].states[0].observation.as_deref(), Some("[1] x"));
        std::fs::write(&p, "{\"id\":\"t1\",\"goal\":\"g\",\"states\":[]}\n").unwrap();
        let e = read_trajectories_jsonl(&p).unwrap_err().to_string();
        assert!(
            e.contains("line 1") && e.contains("`states` is empty"),
            "{e}"
        );
    }
}
