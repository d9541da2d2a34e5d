//! A plain blocking HTTP client for a running `cairn serve`: every request answers with
//! its status and body, whatever the status, so drivers judge the answer themselves.
use serde_json::Value;
use std::io::Read;
use std::time::Duration;

/// A response: status, content type, body (JSON when it parses, else a string).
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    pub content_type: String,
    pub body: Value,
    pub text: String,
}

/// One server and the key its requests carry.
#[derive(Clone)]
pub struct Client {
    pub base: String,
    key: Option<String>,
    agent: ureq::Agent,
}

/// Percent-encodes one path segment (every byte outside the unreserved set).
pub fn encode(s: &str) -> String {
    encode_bytes(s.as_bytes())
}

/// [`encode`] for raw bytes (paths that are not UTF-8, for bad-input tests).
pub fn encode_bytes(s: &[u8]) -> String {
    s.iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Client {
    /// A client of `base` (e.g. `http://127.0.0.1:7700`) with a 120 s request timeout.
    pub fn new(base: &str, key: Option<&str>) -> Self {
        Self::with_timeout(base, key, Duration::from_secs(120))
    }

    pub fn with_timeout(base: &str, key: Option<&str>, timeout: Duration) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            key: key.map(str::to_string),
            agent: ureq::AgentBuilder::new().timeout(timeout).build(),
        }
    }

    /// A request to `path` (already encoded); `Err` only when no HTTP answer came
    /// (connection refused or reset: the server is down).
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
        key: Option<&str>,
    ) -> Result<Resp, String> {
        let url = format!("{}{path}", self.base);
        let mut req = self.agent.request(method, &url);
        if path == "/mcp" {
            // MCP's streamable HTTP answers 406 unless a client accepts both.
            req = req.set("Accept", "application/json, text/event-stream");
        }
        // `Some("")`: no Authorization header at all.
        if let Some(k) = key.or(self.key.as_deref()).filter(|k| !k.is_empty()) {
            req = req.set("Authorization", &format!("Bearer {k}"));
        }
        let result = match body {
            Some((ctype, b)) => req.set("Content-Type", ctype).send_bytes(b),
            None => req.call(),
        };
        let resp = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => return Err(format!("{method} {url}: {e}")),
        };
        let status = resp.status();
        let content_type = resp.header("content-type").unwrap_or("").to_string();
        let mut bytes = Vec::new();
        resp.into_reader()
            .take(64 << 20)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{method} {url}: reading the body: {e}"))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        Ok(Resp {
            status,
            content_type,
            body,
            text,
        })
    }

    pub fn get(&self, path: &str) -> Result<Resp, String> {
        self.request("GET", path, None, None)
    }

    pub fn post(&self, path: &str, json: &Value) -> Result<Resp, String> {
        self.request(
            "POST",
            path,
            Some(("application/json", json.to_string().as_bytes())),
            None,
        )
    }

    pub fn delete(&self, path: &str) -> Result<Resp, String> {
        self.request("DELETE", path, None, None)
    }

    /// A JSON request that must succeed (2xx): its body, else the status and text.
    pub fn call_ok(&self, method: &str, path: &str, json: Option<&Value>) -> Result<Value, String> {
        let body = json.map(Value::to_string);
        let r = self.request(
            method,
            path,
            body.as_deref().map(|b| ("application/json", b.as_bytes())),
            None,
        )?;
        if (200..300).contains(&r.status) {
            Ok(r.body)
        } else {
            Err(format!("{method} {path}: HTTP {}: {}", r.status, r.text))
        }
    }
}
