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
    let agent = cairn_load::client::agent(std::time::Duration::from_secs(120));
    let bearer = Some(key).map(|k| format!("Bearer {k}"));
    let headers: Vec<(&str, &str)> = bearer
        .iter()
        .map(|b| ("Authorization", b.as_str()))
        .collect();
    let body = body.map(|b| b.to_string());
    let body = body.as_deref().map(|b| ("application/json", b.as_bytes()));
    let resp = cairn_load::client::send(&agent, method, url, &headers, body)
        .unwrap_or_else(|e| panic!("{e}"));
    (
        resp.status,
        serde_json::from_str(&resp.text).unwrap_or_default(),
    )
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
