//! Two `cairn serve` processes on one PostgreSQL database serve the same spaces: what one
//! writes the other reads at once, what one forgets the other no longer shows. Runs when
//! `CAIRN_TEST_DATABASE_URL` names a database with pgvector (`scripts/postgres.sh`) and
//! the embedding model is installed; says SKIPPED otherwise. API keys live in the database.
use cairn_store_postgres::PgStore;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const ADMIN: &str = "two-servers-admin-key-0123456789";

fn cairn(dir: &Path, store: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("--dir")
        .arg(dir)
        .arg("--store")
        .arg(store)
        .env_remove("CAIRN_ADMIN_KEY");
    c
}

/// A schema of its own in the test database, dropped at the end.
struct Schema {
    admin: PgStore,
    name: String,
}

impl Drop for Schema {
    fn drop(&mut self) {
        let _ = self
            .admin
            .execute_sql(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name));
    }
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cairn serve` on a free port: Ok(url), or Err(stderr) when it did not start.
fn serve(dir: &Path, store: &str) -> Result<(Server, String), String> {
    let mut child = cairn(dir, store)
        .args(["serve", "--bind", "127.0.0.1:0", "--admin-key", ADMIN])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    match line.trim().strip_prefix("cairn serve: listening on ") {
        Some(url) => Ok((Server(child), url.to_string())),
        None => {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            let _ = child.wait();
            Err(err)
        }
    }
}

fn request(method: &str, url: &str, body: Option<serde_json::Value>) -> (u16, serde_json::Value) {
    request_as(ADMIN, method, url, body)
}

fn request_as(
    key: &str,
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    // No base: the path given is the whole URL.
    let client = cairn_load::Client::new("", Some(key));
    let body = body.map(|b| b.to_string());
    let body = body.as_deref().map(|b| ("application/json", b.as_bytes()));
    let r = client
        .request(method, url, body, None)
        .unwrap_or_else(|e| panic!("{e}"));
    (r.status, r.body)
}

fn recall(url: &str, query: &str) -> String {
    let (status, body) = request(
        "POST",
        &format!("{url}/v1/spaces/shared/recall"),
        Some(serde_json::json!({"query": query, "top_k": 3})),
    );
    assert_eq!(status, 200, "{body}");
    body["context"].as_str().unwrap_or_default().to_string()
}

#[test]
fn two_servers_on_one_database_serve_the_same_spaces() {
    let Some(base) = cairn_testkit::database_url("two servers on postgres") else {
        return;
    };
    let admin = PgStore::connect(&base).expect("CAIRN_TEST_DATABASE_URL: cannot connect");
    let schema = Schema {
        name: format!("cairn_cli_test_{}", std::process::id()),
        admin,
    };
    schema
        .admin
        .execute_sql(&format!(
            "DROP SCHEMA IF EXISTS {0} CASCADE; CREATE SCHEMA {0}",
            schema.name
        ))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let store = format!(
        "{base}{sep}options=-c%20search_path%3D{},public",
        schema.name
    );
    let tmp = tempfile::tempdir().unwrap();
    let (dir_a, dir_b) = (tmp.path().join("a"), tmp.path().join("b"));

    // An unmigrated database is refused, naming the fix.
    match serve(&dir_a, &store) {
        Ok(_) => panic!("serve started on an unmigrated database"),
        Err(err) if err.contains("embedding model") => {
            return cairn_testkit::model_missing(err.trim());
        }
        Err(err) => assert!(err.contains("cairn migrate"), "{err}"),
    }
    let out = cairn(&dir_a, &store).arg("migrate").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("applied migration(s) 1, 2, 3, 4"));
    let out = cairn(&dir_a, &store).arg("migrate").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("up to date"));

    let (_a, url_a) = serve(&dir_a, &store).unwrap_or_else(|e| panic!("serve a: {e}"));
    let (_b, url_b) = serve(&dir_b, &store).unwrap_or_else(|e| panic!("serve b: {e}"));

    // Written through A, read through B.
    let session = serde_json::json!({"id": "s1", "messages": [
        {"role": "user", "text": "My sister Noor lives in Tangier."},
        {"role": "assistant", "text": "Tangier is lovely."}]});
    let (status, body) = request(
        "POST",
        &format!("{url_a}/v1/spaces/shared/sessions"),
        Some(session),
    );
    assert_eq!(status, 200, "{body}");
    assert!(recall(&url_b, "Where does Noor live?").contains("Tangier"));
    let (_, spaces) = request("GET", &format!("{url_b}/v1/spaces"), None);
    assert!(spaces.to_string().contains("shared"), "{spaces}");

    // Written through B (an append to the same session), read through A.
    let appended = serde_json::json!({"id": "s1", "messages": [
        {"role": "user", "text": "My sister Noor lives in Tangier."},
        {"role": "assistant", "text": "Tangier is lovely."},
        {"role": "user", "text": "My brother Idris keeps bees in Chefchaouen."}]});
    let (status, body) = request(
        "POST",
        &format!("{url_b}/v1/spaces/shared/sessions"),
        Some(appended),
    );
    assert_eq!(status, 200, "{body}");
    assert!(recall(&url_a, "Who keeps bees?").contains("Chefchaouen"));

    // A key made with `cairn keys --store` lives in the database: both servers know it,
    // and its revocation reaches both at once.
    let out = cairn(&dir_a, &store)
        .args(["keys", "create", "--space", "shared"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    for url in [&url_a, &url_b] {
        let (status, body) = request_as(
            &token,
            "POST",
            &format!("{url}/v1/spaces/shared/recall"),
            Some(serde_json::json!({"query": "bees"})),
        );
        assert_eq!(status, 200, "{body}");
        let (status, _) = request_as(&token, "GET", &format!("{url}/v1/spaces/other/stats"), None);
        assert_eq!(status, 403);
    }
    assert!(
        !dir_b.join("keys.sqlite3").exists(),
        "keys are not kept in the data directory"
    );
    let listed = cairn(&dir_b, &store)
        .args(["--json", "keys", "list"])
        .output()
        .unwrap();
    let keys: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let id = keys[0]["id"].as_str().unwrap().to_string();
    assert!(cairn(&dir_b, &store)
        .args(["keys", "revoke", &id])
        .status()
        .unwrap()
        .success());
    for url in [&url_a, &url_b] {
        let (status, _) = request_as(&token, "GET", &format!("{url}/v1/spaces"), None);
        assert_eq!(status, 401);
    }

    // Forgotten through A, gone through B.
    let (status, body) = request(
        "DELETE",
        &format!("{url_a}/v1/spaces/shared/sessions/s1"),
        None,
    );
    assert!(status == 200 || status == 204, "{status} {body}");
    let after = recall(&url_b, "Where does Noor live?");
    assert!(!after.contains("Tangier"), "{after}");
}

/// `deploy/compose.yaml` as JSON (through Python's yaml), or None (SKIPPED) without it.
fn compose() -> Option<serde_json::Value> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/compose.yaml");
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
        ])
        .arg(&file)
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(out) = out else {
        eprintln!("SKIPPED: the compose file's check needs python3 with PyYAML");
        return None;
    };
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

fn command_of(service: &serde_json::Value) -> Vec<String> {
    service["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The compose deployment (PostgreSQL, a migration, two servers behind a proxy), checked
/// as far as a machine without a container engine allows: its services use the image
/// `scripts/image.sh` tags, their commands are `cairn` command lines, and, run as processes
/// with the compose file's environment against a local PostgreSQL, they make a working
/// deployment (what one server writes, the other reads).
#[test]
fn the_compose_deployment_runs_as_processes() {
    let Some(c) = compose() else {
        return;
    };
    let s = &c["services"];
    let version = env!("CARGO_PKG_VERSION");
    for name in ["migrate", "cairn-a", "cairn-b"] {
        assert_eq!(s[name]["image"], format!("cairn:{version}"), "{name}");
        let env = &s[name]["environment"];
        assert!(env["CAIRN_STORE"]
            .as_str()
            .unwrap()
            .contains("@postgres:5432/"));
        assert!(env["CAIRN_ADMIN_KEY"].is_string());
        // Every command is one the binary takes.
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(command_of(&s[name]))
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
    }
    assert_eq!(command_of(&s["migrate"]), ["migrate"]);
    assert_eq!(
        command_of(&s["cairn-a"]),
        ["serve", "--bind", "0.0.0.0:7700"]
    );
    let proxy = command_of(&s["proxy"]).join(" ");
    assert!(
        proxy.contains("--to cairn-a:7700 --to cairn-b:7700"),
        "{proxy}"
    );
    assert!(s["postgres"]["image"]
        .as_str()
        .unwrap()
        .starts_with("pgvector/pgvector:"));

    let Some(base) = cairn_testkit::database_url("the compose deployment") else {
        return;
    };
    let admin = PgStore::connect(&base).expect("CAIRN_TEST_DATABASE_URL: cannot connect");
    let schema = Schema {
        name: format!("cairn_compose_test_{}", std::process::id()),
        admin,
    };
    schema
        .admin
        .execute_sql(&format!(
            "DROP SCHEMA IF EXISTS {0} CASCADE; CREATE SCHEMA {0}",
            schema.name
        ))
        .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    let store = format!(
        "{base}{sep}options=-c%20search_path%3D{},public",
        schema.name
    );
    let tmp = tempfile::tempdir().unwrap();
    // A service: its command and environment, the database and a local port in place of
    // the compose network's.
    let service = |name: &str| {
        let mut args = command_of(&s[name]);
        if let Some(bind) = args.iter().position(|a| a == "0.0.0.0:7700") {
            args[bind] = "127.0.0.1:0".into();
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.args(args)
            .current_dir(tmp.path())
            .env("CAIRN_DIR", tmp.path().join(name))
            .env("CAIRN_STORE", &store)
            .env("CAIRN_ADMIN_KEY", ADMIN)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    };
    let out = service("migrate").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "migrate: {err}");
    let start = |name: &str| -> (Server, String) {
        let mut child = service(name).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        match line.trim().strip_prefix("cairn serve: listening on ") {
            Some(url) => (Server(child), url.to_string()),
            None => {
                let mut err = String::new();
                std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
                panic!("{name}: {err}")
            }
        }
    };
    let (_a, url_a) = start("cairn-a");
    let (_b, url_b) = start("cairn-b");
    let (status, body) = request(
        "POST",
        &format!("{url_a}/v1/spaces/shared/messages"),
        Some(serde_json::json!({"session_id": "c1", "messages": [
            {"role": "user", "text": "The staging database runs on port 6543."}]})),
    );
    assert_eq!(status, 200, "{body}");
    assert!(recall(&url_b, "Which port does the staging database use?").contains("6543"));
}
