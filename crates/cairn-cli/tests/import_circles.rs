//! No two modules of a crate that are not parent and child import each other, directly
//! or around a loop (ARCHITECTURE.md, "Modules within a crate"). Read from the `use`
//! statements of every source file (up to its first `#[cfg(test)]`): `use super::…` and
//! `use crate::…` resolved to the longest module path that is a file of the crate.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, by its module path (`a::b`; the crate root is "").
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<Vec<String>, PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if p.is_dir() {
            let mut next = prefix.to_vec();
            next.push(name);
            modules(&p, &next, out);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            let mut m = prefix.to_vec();
            if !matches!(stem, "mod" | "lib" | "main") {
                m.push(stem.to_string());
            }
            out.insert(m, p);
        }
    }
}

/// The module paths a file's `use` statements name (before its tests).
fn imports(module: &[String], src: &str) -> Vec<Vec<String>> {
    let code = src.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = Vec::new();
    for stmt in code.split(';') {
        // What precedes the statement since the last `;`: comments, attributes, blank lines.
        let stmt = stmt
            .lines()
            .skip_while(|l| {
                let t = l.trim();
                t.is_empty() || t.starts_with("//") || t.starts_with("#[") || t.starts_with('}')
            })
            .collect::<Vec<_>>()
            .join("\n");
        let s = stmt.trim_start();
        let s = s
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub(super) ");
        let s = s.trim_start_matches("pub ");
        let Some(path) = s.strip_prefix("use ") else {
            continue;
        };
        let path: String = path.chars().filter(|c| !c.is_whitespace()).collect();
        let (base, rest) = if let Some(r) = path.strip_prefix("crate::") {
            (Vec::new(), r)
        } else if let Some(r) = path.strip_prefix("super::") {
            (module[..module.len().saturating_sub(1)].to_vec(), r)
        } else {
            continue;
        };
        // `a::b::{c, d::e}`: the path up to the braces, then each name inside them.
        let (head, inner) = match rest.split_once('{') {
            Some((h, i)) => (h.trim_end_matches("::"), Some(i.trim_end_matches('}'))),
            None => (rest, None),
        };
        let mut at = base;
        at.extend(head.split("::").filter(|x| !x.is_empty()).map(String::from));
        match inner {
            None => out.push(at),
            Some(i) => {
                for name in i.split(',').filter(|x| !x.is_empty()) {
                    let mut p = at.clone();
                    p.extend(name.split("::").map(String::from));
                    out.push(p);
                }
            }
        }
    }
    out
}

fn is_prefix(a: &[String], b: &[String]) -> bool {
    a.len() <= b.len() && a == &b[..a.len()]
}

/// The import loops among one crate's modules, each as the modules around it.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut mods = BTreeMap::new();
    modules(src, &[], &mut mods);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, file) in &mods {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for path in imports(m, &text) {
            // The longest prefix of the path that is a module of the crate.
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| mods.contains_key(p))
            else {
                continue;
            };
            // A module and its parent or children: not counted (a parent declares and
            // re-exports its children; a child reads its parent's names).
            if !is_prefix(&target, m) && !is_prefix(m, &target) {
                edges.entry(m.clone()).or_default().insert(target);
            }
        }
    }
    let mut found = Vec::new();
    for start in edges.keys() {
        // Depth-first from `start`, back to `start`.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if next == start {
                    found.push(path.iter().map(|p| p.join("::")).collect());
                } else if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push((next.clone(), p));
                }
            }
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle() {
    let crates = cairn_testkit::fixtures::workspace_root().join("crates");
    let mut all = Vec::new();
    for e in std::fs::read_dir(&crates).expect("crates/").flatten() {
        let src = e.path().join("src");
        for c in circles(&src) {
            all.push(format!(
                "{}: {}",
                e.file_name().to_string_lossy(),
                c.join(" -> ")
            ));
        }
    }
    assert!(all.is_empty(), "import circles: {all:#?}");
}

#[test]
fn the_check_sees_a_circle_of_siblings_and_ignores_parent_and_child() {
    let dir = std::env::temp_dir().join(format!("cairn-circles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\npub use a::A;\n").unwrap();
    std::fs::write(
        dir.join("a/mod.rs"),
        "mod b;\nmod c;\npub use b::B;\npub struct A;\n",
    )
    .unwrap();
    let b = "//! B.\nuse super::c::C;\nuse super::A;\npub struct B;\n";
    std::fs::write(dir.join("a/b.rs"), b).unwrap();
    std::fs::write(dir.join("a/c.rs"), "use super::{b::B, A};\npub struct C;\n").unwrap();
    let found = circles(&dir);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().all(|c| c.iter().all(|m| m.starts_with("a::"))));
    std::fs::write(
        dir.join("a/c.rs"),
        "use super::A;\n#[cfg(test)]\nuse super::b::B;\n",
    )
    .unwrap();
    assert!(circles(&dir).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
