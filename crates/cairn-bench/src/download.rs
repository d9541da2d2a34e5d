//! `bench download`: where the official benchmark files come from and where to put them.
//! This machine cannot reach the hosting sites, so nothing is fetched: the command prints
//! the sources and checks the files already in place.
use crate::Dataset;
use cairn::formats::sha256_file;
use std::fmt::Write as _;
use std::path::Path;

/// An official file of a benchmark.
pub struct OfficialFile {
    pub name: &'static str,
    pub url: &'static str,
    /// Pinned sha256, when known.
    pub sha256: Option<&'static str>,
    pub what: &'static str,
}

pub const LONGMEMEVAL_ORACLE_SHA256: &str =
    "821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c";

pub struct Source {
    pub folder: &'static str,
    pub about: &'static str,
    pub files: &'static [OfficialFile],
}

pub fn source(d: Dataset) -> Source {
    match d {
        Dataset::Longmemeval => Source {
            folder: "longmemeval",
            about: "LongMemEval (Wu et al., ICLR 2025), cleaned release (2025-09), MIT licence.\n  code: https://github.com/xiaowu0162/LongMemEval\n  data: https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned",
            files: &[
                OfficialFile {
                    name: "longmemeval_oracle.json",
                    url: "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_oracle.json",
                    sha256: Some(LONGMEMEVAL_ORACLE_SHA256),
                    what: "500 questions, haystack = evidence sessions only",
                },
                OfficialFile {
                    name: "longmemeval_s_cleaned.json",
                    url: "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json",
                    sha256: None,
                    what: "LongMemEval_S: 500 questions, ~48 sessions (~115k tokens) each",
                },
                OfficialFile {
                    name: "longmemeval_m_cleaned.json",
                    url: "https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_m_cleaned.json",
                    sha256: None,
                    what: "LongMemEval_M: 500 questions, ~500 sessions each (large)",
                },
            ],
        },
        Dataset::Locomo => Source {
            folder: "locomo",
            about: "LoCoMo (Maharana et al., ACL 2024), CC BY-NC 4.0.\n  code and data: https://github.com/snap-research/locomo",
            files: &[OfficialFile {
                name: "locomo10.json",
                url: "https://raw.githubusercontent.com/snap-research/locomo/main/data/locomo10.json",
                sha256: None,
                what: "10 conversations with their QA (data/locomo10.json in the repository)",
            }],
        },
    }
}

/// Prints sources and checks files in `<dir>/<dataset folder>/`; an error when a file in
/// place does not match its pinned hash.
pub(crate) fn run(d: Dataset, dir: &Path, stdout: &mut dyn std::io::Write) -> anyhow::Result<()> {
    let (text, mismatches) = describe(d, dir)?;
    write!(stdout, "{text}")?;
    if mismatches > 0 {
        anyhow::bail!("{mismatches} file(s) do not match their pinned sha256");
    }
    Ok(())
}

pub(crate) fn describe(d: Dataset, dir: &Path) -> anyhow::Result<(String, usize)> {
    let src = source(d);
    let target = dir.join(src.folder);
    let mut out = String::new();
    let mut mismatches = 0;
    let _ = writeln!(out, "{}\n", src.about);
    let _ = writeln!(
        out,
        "This machine does not download: fetch the files elsewhere and put them in\n  {}/\n(the bench takes any path with --data; tests look in $CAIRN_DATA_DIR, default ../shared/data).\n",
        target.display()
    );
    for f in src.files {
        let path = target.join(f.name);
        let _ = writeln!(out, "{} — {}", f.name, f.what);
        let _ = writeln!(out, "  source: {}", f.url);
        let _ = writeln!(out, "  fetch:  curl -L -o {} {}", path.display(), f.url);
        match f.sha256 {
            Some(h) => {
                let _ = writeln!(out, "  pinned sha256: {h}");
            }
            None => {
                let _ = writeln!(
                    out,
                    "  pinned sha256: none (record the hash the bench prints in METHODOLOGY.md)"
                );
            }
        }
        if path.is_file() {
            let got = sha256_file(&path)?;
            let verdict = match f.sha256 {
                Some(h) if h == got => "OK, matches the pinned hash".to_string(),
                Some(_) => {
                    mismatches += 1;
                    "MISMATCH: not the official file".to_string()
                }
                None => "present".to_string(),
            };
            let _ = writeln!(
                out,
                "  in place: {} sha256 {got} — {verdict}",
                path.display()
            );
        } else {
            let _ = writeln!(out, "  in place: no ({} not found)", path.display());
        }
        let _ = writeln!(out);
    }
    // Other files already in the folder (e.g. development splits).
    if let Ok(entries) = std::fs::read_dir(&target) {
        let mut others: Vec<_> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .filter(|p| {
                let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                !src.files.iter().any(|f| f.name == n)
            })
            .collect();
        others.sort();
        for p in others {
            let _ = writeln!(
                out,
                "also in {}: {} sha256 {}",
                target.display(),
                p.display(),
                sha256_file(&p)?
            );
        }
    }
    Ok((out, mismatches))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_files_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let (text, bad) = describe(Dataset::Longmemeval, dir.path()).unwrap();
        assert_eq!(bad, 0);
        assert!(text.contains(LONGMEMEVAL_ORACLE_SHA256));
        assert!(text.contains("longmemeval_s_cleaned.json"));
        std::fs::create_dir_all(dir.path().join("longmemeval")).unwrap();
        std::fs::write(dir.path().join("longmemeval/longmemeval_oracle.json"), "[]").unwrap();
        let (text, bad) = describe(Dataset::Longmemeval, dir.path()).unwrap();
        assert_eq!(bad, 1);
        assert!(text.contains("MISMATCH"));
        let (text, bad) = describe(Dataset::Locomo, dir.path()).unwrap();
        assert_eq!(bad, 0);
        assert!(text.contains("snap-research/locomo"));
    }
}
