//! Where tests find their data: the workspace, the benchmark data folder shared beside
//! the checkout (read-only, never copied into the repository), the fixtures committed in
//! the repository, and the literal inputs tests build.
use cairn_core::{Provenance, SessionInput, SpaceId, TextQuery, Unit, UnitKind};
use std::path::{Path, PathBuf};

/// The workspace root (the folder holding `crates/`): two levels above the crate under
/// test, as cargo names it when it runs the test. Not this crate's compile-time folder
/// alone: a target directory shared by two checkouts (CI reuses one under `$HOME`) keeps
/// this crate built in whichever was built first, and its data would be looked for there.
pub fn workspace_root() -> PathBuf {
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    crate_dir.join("../..")
}

/// The benchmark data folder: `$CAIRN_DATA_DIR`, else `../shared/data` beside the
/// workspace. Tests that need a file from it say SKIPPED when it is absent
/// ([`data_file`]).
pub fn data_dir() -> PathBuf {
    std::env::var_os("CAIRN_DATA_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("../shared/data"))
}

/// `data_dir()/<relative>` when it exists; else `None` after saying SKIPPED (benchmark
/// data is optional on a bare checkout), or a panic under `CAIRN_REQUIRE_DATA`
/// (`.ci/run` sets it where the data folder is present, so a path that went wrong
/// cannot pass as a skip).
#[track_caller]
pub fn data_file(relative: &str) -> Option<PathBuf> {
    use crate::switches::{switch_on, REQUIRE_DATA};
    let p = data_dir().join(relative);
    if p.exists() {
        return Some(p);
    }
    assert!(
        !switch_on(REQUIRE_DATA),
        "{REQUIRE_DATA} is set but benchmark file {} is missing",
        p.display()
    );
    eprintln!(
        "SKIPPED: benchmark file {} not found (set CAIRN_DATA_DIR; {REQUIRE_DATA}=1 makes \
         this a failure)",
        p.display()
    );
    None
}

/// A fixture committed under `crates/<crate>/fixtures/`, e.g.
/// `fixture("cairn-bench", "evermembench/qa_fixture.json")`.
pub fn fixture(krate: &str, relative: &str) -> PathBuf {
    workspace_root()
        .join("crates")
        .join(krate)
        .join("fixtures")
        .join(relative)
}

/// A session from its JSON (a test's literal input).
#[track_caller]
pub fn session(json: &str) -> SessionInput {
    serde_json::from_str(json).expect("test session json")
}

/// A turn of `session` (its message "0") with its key, text and embedded text: the unit
/// the storage tests write, read and search.
pub fn unit(space: &SpaceId, id: &str, session: &str, key: &str, text: &str) -> Unit {
    Unit {
        id: id.into(),
        space: space.clone(),
        kind: UnitKind::Turn,
        text: text.into(),
        key: key.into(),
        embed_text: Some(text.into()),
        provenance: Provenance {
            session_id: Some(session.into()),
            message_ids: vec!["0".into()],
            ..Default::default()
        },
        part_of: None,
        occurred_at: None,
        recorded_at: chrono::Utc::now(),
        detail: None,
    }
}

/// A lexical search of `space` for `text` as the storage tests make it: every kind and
/// session, the default text weight, ten hits.
pub fn text_query<'a>(space: &'a SpaceId, text: &'a str) -> TextQuery<'a> {
    TextQuery {
        space,
        text,
        kinds: None,
        sessions: None,
        text_weight: 0.35,
        limit: 10,
    }
}

/// Every file under `dir` (recursively) whose bytes hold `needle`, as paths relative to
/// `dir`: what a forget test greps a data directory with.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                let n = needle.as_bytes();
                if bytes.windows(n.len()).any(|w| w == n) {
                    let shown = p.strip_prefix(dir).unwrap_or(&p);
                    found.push(shown.display().to_string());
                }
            }
        }
    }
    found.sort();
    found
}
