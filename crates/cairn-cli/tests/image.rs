//! The container image (`scripts/image.sh`): its root filesystem holds everything `cairn`
//! needs, and nothing from the machine that built it. No container can start here, so the
//! root filesystem is tested by `chroot`: inside it, the binary answers `--version` and
//! `cairn serve` (with the image's environment) answers `/v1/health`, which needs the
//! dynamic loader, every shared library and the embedding model to be there.
//!
//! First the folder `image.sh --rootfs` assembles; then, with `buildah` installed, the
//! image itself: built, its configuration read back, its root filesystem mounted and run
//! the same way. Needs root (chroot, buildah mount); without root or the model it says
//! SKIPPED; without buildah too, unless `CAIRN_REQUIRE_IMAGE` is set (`.ci/run`).
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn repo() -> PathBuf {
    cairn_testkit::fixtures::workspace_root()
}

fn root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Where `tool` is on PATH (the chrooted commands run with a cleared environment, so by
/// the full path).
fn which(tool: &str) -> Option<PathBuf> {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
}

fn have(tool: &str) -> bool {
    which(tool).is_some()
}

fn chroot() -> Command {
    Command::new(which("chroot").expect("chroot"))
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `image.sh` with the binary under test.
fn image_sh(args: &[&str]) -> std::process::Output {
    Command::new(repo().join("scripts/image.sh"))
        .args(args)
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .output()
        .unwrap()
}

/// `cairn --version` and a served `/v1/health` from inside `rootfs`, with only `env`.
fn serves_from(rootfs: &Path, env: &[(String, String)]) {
    let version = run(chroot()
        .arg(rootfs)
        .args(["/usr/local/bin/cairn", "--version"])
        .env_clear());
    assert_eq!(version, format!("cairn {}", env!("CARGO_PKG_VERSION")));

    let mut server = chroot()
        .arg(rootfs)
        .args([
            "/usr/local/bin/cairn",
            "serve",
            "--no-auth",
            "--bind",
            "127.0.0.1:0",
        ])
        .env_clear()
        .envs(env.iter().cloned())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A readiness wait, no clock asserted: the first stdout line names the address once
    // the server listens (nothing when it exits first). The watchdog only turns a server
    // that never starts into a failure rather than a hang.
    let stdout = server.stdout.take().unwrap();
    let (line_tx, line_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = line_tx.send(line);
    });
    let line = line_rx.recv_timeout(Duration::from_secs(300));
    let url = match line
        .as_deref()
        .map(|l| l.trim().strip_prefix("cairn serve: listening on "))
    {
        Ok(Some(url)) => url.to_string(),
        _ => {
            let _ = server.kill();
            let status = server.wait().unwrap();
            let mut err = String::new();
            std::io::Read::read_to_string(server.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!(
                "cairn serve in {} did not start listening ({line:?}, {status}): {err}",
                rootfs.display()
            );
        }
    };
    let agent = cairn_load::client::agent(Duration::from_secs(120));
    let health = cairn_load::client::send(&agent, "GET", &format!("{url}/v1/health"), &[], None)
        .unwrap_or_else(|e| panic!("/v1/health from the chrooted server: {e}"));
    assert_eq!(health.status, 200, "{}", health.text);
    let health = health.text;
    let _ = server.kill();
    let _ = server.wait();
    let v: serde_json::Value = serde_json::from_str(&health).unwrap();
    assert_eq!(v["status"], "ok", "{health}");
    // The model came from the image: the server created its data directory there.
    assert!(rootfs.join("data/records.sqlite3").exists());
}

#[test]
fn the_image_root_filesystem_runs_cairn() {
    if !root() || !have("chroot") {
        eprintln!("SKIPPED: the image test runs cairn by chroot, which needs root");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let rootfs = tmp.path().join("rootfs");
    let out = image_sh(&["--rootfs", rootfs.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("no model at") {
        return cairn_testkit::model_missing(err.trim());
    }
    assert!(out.status.success(), "{err}");
    // Nothing but what the image is made of.
    let mut top: Vec<String> = std::fs::read_dir(&rootfs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert!(
        top.iter()
            .all(|d| ["data", "etc", "lib", "lib64", "models", "tmp", "usr"].contains(&d.as_str())),
        "{top:?}"
    );
    let image_env = |dir: &str| {
        vec![
            ("CAIRN_DIR".to_string(), dir.to_string()),
            (
                "CAIRN_MODEL_DIR".to_string(),
                "/models/all-MiniLM-L6-v2".to_string(),
            ),
            ("HF_HUB_OFFLINE".to_string(), "1".to_string()),
        ]
    };
    serves_from(&rootfs, &image_env("/data"));

    if !have("buildah") {
        assert!(
            std::env::var_os("CAIRN_REQUIRE_IMAGE").is_none(),
            "CAIRN_REQUIRE_IMAGE is set but buildah is missing"
        );
        eprintln!("SKIPPED: the image itself (needs buildah: apt-get install buildah)");
        return;
    }
    let tag = format!(
        "localhost/cairn-image-test:{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let archive = tmp.path().join("cairn.oci.tar");
    let out = image_sh(&["--tag", &tag, "--oci-archive", archive.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(archive.metadata().unwrap().len() > 10_000_000);
    let image = Image { tag: tag.clone() };
    let config: serde_json::Value = serde_json::from_str(&run(
        Command::new("buildah").args(["inspect", "--type", "image", &tag])
    ))
    .unwrap();
    let c = &config["OCIv1"]["config"];
    assert_eq!(c["Entrypoint"], serde_json::json!(["/usr/local/bin/cairn"]));
    assert_eq!(
        c["Cmd"],
        serde_json::json!(["serve", "--bind", "0.0.0.0:7700"])
    );
    assert_eq!(c["User"], "10001:10001");
    let env: Vec<(String, String)> = c["Env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str()?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert!(
        env.contains(&("CAIRN_DIR".into(), "/data".into())),
        "{env:?}"
    );
    // The image's own root filesystem: a working container of it, mounted.
    let ctr = run(Command::new("buildah").args(["from", &tag]));
    let mount = Mount {
        ctr: ctr.clone(),
        path: PathBuf::from(run(Command::new("buildah").args(["mount", &ctr]))),
    };
    serves_from(&mount.path, &env);
    drop(mount);
    drop(image);
}

/// Removes the test's image when the test ends, passed or not.
struct Image {
    tag: String,
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = Command::new("buildah")
            .args(["rmi", "-f", &self.tag])
            .output();
    }
}

/// Unmounts and removes the test's working container.
struct Mount {
    ctr: String,
    path: PathBuf,
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("buildah").args(["umount", &self.ctr]).output();
        let _ = Command::new("buildah").args(["rm", &self.ctr]).output();
    }
}
