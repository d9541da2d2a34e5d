//! ARCHITECTURE.md names files, folders and `Type::member` paths of the code; each must
//! exist, so the map fails here the day a rename leaves it behind (issue 55: "a map that
//! stays true").
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Names the map gives to what lives in a data directory at run time, not in the
/// repository.
const RUNTIME: &[&str] = &["cairn.toml", "hnsw/"];

const FILE_ENDINGS: &[&str] = &[
    ".rs", ".md", ".toml", ".json", ".sh", ".py", ".ts", ".mjs", ".js", ".yml", ".yaml",
];

fn root() -> PathBuf {
    cairn_testkit::fixtures::workspace_root()
}

/// Every file of the checkout (build outputs, dependencies and git's own left out), as
/// paths relative to the root with `/` between their parts.
fn files(dir: &Path, rel: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if matches!(
            name.as_str(),
            "target" | "node_modules" | ".git" | "dist" | "build"
        ) {
            continue;
        }
        let path = format!("{rel}{name}");
        if e.path().is_dir() {
            files(&e.path(), &format!("{path}/"), out);
        } else {
            out.push(path);
        }
    }
}

/// The spans between backticks.
fn spans(doc: &str) -> BTreeSet<&str> {
    doc.split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| !s.contains('\n'))
        .collect()
}

fn is_path(s: &str) -> bool {
    let chars = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    s.chars().all(chars)
        && !s.starts_with('/')
        && (s.ends_with('/') && s.len() > 1 || FILE_ENDINGS.iter().any(|e| s.ends_with(e)))
}

/// `Type::member`, both parts plain identifiers.
fn member_path(s: &str) -> Option<(&str, &str)> {
    let (t, m) = s.split_once("::")?;
    let ident = |x: &str| !x.is_empty() && x.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (t.starts_with(|c: char| c.is_ascii_uppercase())
        && ident(t)
        && m.starts_with(|c: char| c.is_ascii_lowercase())
        && ident(m))
    .then_some((t, m))
}

/// Whether `src` holds `word` as a whole word right after `before` (one of them).
fn declares(src: &str, before: &[&str], word: &str) -> bool {
    before.iter().any(|b| {
        src.match_indices(&format!("{b} {word}")).any(|(at, m)| {
            let next = src[at + m.len()..].chars().next();
            !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    })
}

#[test]
fn every_path_and_member_the_map_names_exists() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let mut all = Vec::new();
    files(&root, "", &mut all);
    let folders: Vec<String> = all
        .iter()
        .flat_map(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (1..parts.len())
                .map(|i| format!("{}/", parts[..i].join("/")))
                .collect::<Vec<_>>()
        })
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let ends = |have: &[String], p: &str| {
        let suffix = format!("/{p}");
        have.iter().any(|f| f == p || f.ends_with(&suffix))
    };
    let source: String = all
        .iter()
        .filter(|f| f.starts_with("crates/") && f.ends_with(".rs"))
        .filter_map(|f| std::fs::read_to_string(root.join(f)).ok())
        .collect();
    let mut missing = Vec::new();
    for s in spans(&doc) {
        if RUNTIME.contains(&s) {
            continue;
        }
        if is_path(s) {
            let p = s.trim_start_matches("./");
            let found = if p.ends_with('/') {
                ends(&folders, p)
            } else {
                ends(&all, p)
            };
            if !found {
                missing.push(format!("path `{s}`"));
            }
        } else if let Some((t, m)) = member_path(s) {
            let typed = declares(&source, &["struct", "enum", "trait", "type"], t);
            let member = declares(&source, &["fn", "const"], m)
                || source.contains(&format!("    {m}:"))
                || source.contains(&format!("    {}", to_variant(m)));
            if !typed || !member {
                missing.push(format!("member `{s}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what the code does not have: {missing:#?}"
    );
}

/// A member written in snake case may name an enum variant's serialized form; the
/// variant is its camel case.
fn to_variant(m: &str) -> String {
    m.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn the_checker_sees_a_missing_path_and_a_missing_member() {
    let doc = "`crates/nowhere.rs` and `Engine::no_such_method` and `a b.rs`";
    let got: Vec<&str> = spans(doc).into_iter().collect();
    assert_eq!(
        got,
        ["Engine::no_such_method", "a b.rs", "crates/nowhere.rs"]
    );
    assert!(is_path("crates/nowhere.rs") && !is_path("a b.rs") && is_path("facts/"));
    assert_eq!(member_path("Engine::recall"), Some(("Engine", "recall")));
    assert_eq!(member_path("engine::recall"), None);
    assert!(declares("pub fn recall(", &["fn"], "recall"));
    assert!(!declares("pub fn recall_all(", &["fn"], "recall"));
}
