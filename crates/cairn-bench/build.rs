//! Records the git revision and the build time of this build, for the METHODOLOGY.md of
//! every benchmark run. The revision is read with `git rev-parse --short HEAD` at build
//! time, with `-dirty` when tracked files differ from it; "unknown" when git or the
//! repository is unavailable (or has no commit yet).
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let sha = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| !o.stdout.is_empty());
    let sha = match (sha.as_str(), dirty) {
        ("unknown", _) => sha,
        (_, Some(true)) => format!("{sha}-dirty"),
        _ => sha,
    };
    println!("cargo:rustc-env=CAIRN_BENCH_GIT_SHA={sha}");
    println!(
        "cargo:rustc-env=CAIRN_BENCH_BUILD_TIME={}",
        chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
    );
    // Rerun when the checked-out revision moves (only for paths that exist: a missing path
    // would rerun this script, and rebuild the crate, on every build). The git directory
    // is asked of git: in a worktree `.git` is a file naming it elsewhere.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let git = Command::new("git")
        .args(["rev-parse", "--absolute-git-dir"])
        .current_dir(&manifest)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()))
        .unwrap_or_else(|| Path::new(&manifest).join("../../.git"));
    for p in ["HEAD", "index"] {
        let path = git.join(p);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    // And when a source file changes without a commit, so `-dirty` is said of a build of
    // edited code (a directory is watched for changes anywhere inside it).
    let root = Path::new(&manifest).join("../..");
    for p in ["crates", "Cargo.toml", "Cargo.lock"] {
        let path = root.join(p);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
