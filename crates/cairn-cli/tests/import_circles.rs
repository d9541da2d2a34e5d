//! No two modules of a crate import each other, directly or around a loop, a module and
//! its own children included: a parent declares and re-exports its children, so a child
//! importing from its parent file closes a loop, and what children share lives in a child
//! module of its own (ARCHITECTURE.md, "Modules within a crate"). Read from the `use`
//! statements of every source file (up to its first `#[cfg(test)]`): `use crate::…`,
//! `use super::…`, `use self::…` and `use child::…` resolved to the longest module path
//! that is a file of the crate, and from the `crate::…` and `super::…` paths its code
//! writes inline (a call, a type, a macro's list of handlers).
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
        } else if !path.contains("::") {
            continue;
        } else {
            // A path from this module: `child::Name`, `self::…`, `super::super::…`; a crate
            // outside this one resolves to no module of the crate and is dropped by the
            // caller.
            let mut at = module.to_vec();
            let mut r = path.as_str();
            loop {
                if let Some(x) = r.strip_prefix("super::") {
                    at.pop();
                    r = x;
                } else if let Some(x) = r.strip_prefix("self::") {
                    r = x;
                } else {
                    break;
                }
            }
            (at, r)
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

/// The module paths a file names in its code outside `use` statements (before its
/// tests): `crate::a::f(...)`, `super::b::C`, as in a call, a type or a macro's list of
/// handlers. A dependency written inline is a dependency all the same.
fn inline_paths(module: &[String], src: &str) -> Vec<Vec<String>> {
    let code = src.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = Vec::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("").trim_start();
        if line.starts_with("use ") || line.starts_with("pub use ") || line.contains(" use ") {
            continue;
        }
        for (at, _) in line
            .match_indices("crate::")
            .chain(line.match_indices("super::"))
        {
            // Only where a path starts: not the `super::` inside `super::super::` or
            // `crate::a::super`.
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = line[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut here = module.to_vec();
            let mut rest = path.as_str();
            if let Some(r) = rest.strip_prefix("crate::") {
                here.clear();
                rest = r;
            }
            while let Some(r) = rest.strip_prefix("super::") {
                here.pop();
                rest = r;
            }
            here.extend(rest.split("::").filter(|x| !x.is_empty()).map(String::from));
            out.push(here);
        }
    }
    out
}

/// The import loops among one crate's modules, each as the modules around it.
fn circles(src: &Path) -> Vec<Vec<String>> {
    let mut mods = BTreeMap::new();
    modules(src, &[], &mut mods);
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, file) in &mods {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for path in imports(m, &text).into_iter().chain(inline_paths(m, &text)) {
            // The longest prefix of the path that is a module of the crate.
            let Some(target) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| mods.contains_key(p))
            else {
                continue;
            };
            // A module's own names are no edge; its parent's and children's are.
            if target != *m {
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
fn the_check_sees_a_circle_of_siblings_and_one_of_parent_and_child() {
    let dir = std::env::temp_dir().join(format!("cairn-circles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod a;\npub use a::A;\n").unwrap();
    let write = |file: &str, text: &str| std::fs::write(dir.join(file), text).unwrap();
    let names =
        |found: &[Vec<String>]| -> Vec<String> { found.iter().map(|c| c.join(" -> ")).collect() };
    // Siblings around a loop, no parent involved.
    write("a/mod.rs", "mod b;\nmod c;\npub struct A;\n");
    write("a/b.rs", "//! B.\nuse super::c::C;\npub struct B;\n");
    write("a/c.rs", "use super::{b::B};\npub struct C;\n");
    let found = circles(&dir);
    assert_eq!(names(&found), ["a::b -> a::c", "a::c -> a::b"], "{found:?}");
    // A parent re-exporting a child that imports from the parent: a loop.
    write("a/mod.rs", "mod b;\nmod c;\npub use b::B;\npub struct A;\n");
    write("a/b.rs", "use super::A;\npub struct B;\n");
    write("a/c.rs", "pub struct C;\n");
    let found = circles(&dir);
    assert_eq!(names(&found), ["a -> a::b", "a::b -> a"], "{found:?}");
    // The same through `self::` and from a grandchild through `super::super::`.
    write(
        "a/mod.rs",
        "mod b;\nmod c;\npub use self::b::B;\npub struct A;\n",
    );
    let found = circles(&dir);
    assert_eq!(names(&found), ["a -> a::b", "a::b -> a"], "{found:?}");
    std::fs::create_dir_all(dir.join("a/b")).unwrap();
    write("a/b.rs", "mod d;\npub use d::B;\n");
    write("a/b/d.rs", "use super::super::A;\npub struct B;\n");
    let found = circles(&dir);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found.iter().all(|c| c.contains(&"a::b::d".to_string())));
    // A path written inline is a dependency too: a child calling `super::f()` of a parent
    // that re-exports it (a comment naming one is not).
    write("a/mod.rs", "mod b;\nmod c;\npub use b::B;\npub fn f() {}\n");
    write(
        "a/b.rs",
        "pub struct B;\nfn g() { super::f() }\n// crate::a::c\n",
    );
    let found = circles(&dir);
    assert_eq!(names(&found), ["a -> a::b", "a::b -> a"], "{found:?}");
    // A child importing a sibling while the parent re-exports the child: no loop; nor is
    // an import under `#[cfg(test)]`.
    let _ = std::fs::remove_dir_all(dir.join("a/b"));
    write("a/mod.rs", "mod b;\nmod c;\npub use b::B;\npub use c::C;\n");
    write("a/b.rs", "use super::c::C;\npub struct B;\n");
    write("a/c.rs", "pub struct C;\n#[cfg(test)]\nuse super::b::B;\n");
    assert!(circles(&dir).is_empty(), "{:?}", circles(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}
