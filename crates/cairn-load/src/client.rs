//! A plain blocking HTTP client for a running `cairn serve`: every request answers with
//! its status and body, whatever the status, so drivers judge the answer themselves.
use serde_json::Value;
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

/// An agent whose requests answer with their status and body whatever the status, within
/// `timeout` each.
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into()
}

/// What came back: the status, the headers and the body as text (lossy UTF-8).
#[derive(Debug, Clone)]
pub struct Raw {
    pub status: u16,
    headers: ureq::http::HeaderMap,
    pub text: String,
}

impl Raw {
    /// A header's value, when present and text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Bodies read back at most (a driver never needs more).
const MAX_BODY_BYTES: u64 = 64 << 20;

/// One request with any method, headers and optional body (content type, bytes) through
/// an [`agent`]; `Err` only when no HTTP answer came (refused, reset, timed out, or a
/// header the HTTP library will not send).
pub fn send(
    agent: &ureq::Agent,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<(&str, &[u8])>,
) -> Result<Raw, String> {
    let mut req = ureq::http::Request::builder().method(method).uri(url);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    if let Some((ctype, _)) = body {
        req = req.header("Content-Type", ctype);
    }
    let req = req
        .body(body.map(|(_, b)| b.to_vec()).unwrap_or_default())
        .map_err(|e| format!("{method} {url}: {e}"))?;
    let resp = agent.run(req).map_err(|e| format!("{method} {url}: {e}"))?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp
        .into_body()
        .with_config()
        .limit(MAX_BODY_BYTES)
        .read_to_vec()
        .map_err(|e| format!("{method} {url}: reading the body: {e}"))?;
    Ok(Raw {
        status,
        headers,
        text: String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// Percent-encodes one path segment (every byte outside the unreserved set).
pub fn encode(s: &str) -> String {
    encode_bytes(s.as_bytes())
}

/// [`encode`] for raw bytes (paths that are not UTF-8, for bad-input tests).
pub fn encode_bytes(s: &[u8]) -> String {
    percent_encoding::percent_encode(s, NOT_UNRESERVED).to_string()
}

/// Every byte but RFC 3986's unreserved characters (letters, digits, `-`, `.`, `_`, `~`).
const NOT_UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

impl Client {
    /// A client of `base` (e.g. `http://127.0.0.1:7700`) with a 120 s request timeout.
    pub fn new(base: &str, key: Option<&str>) -> Self {
        Self::with_timeout(base, key, Duration::from_secs(120))
    }

    pub fn with_timeout(base: &str, key: Option<&str>, timeout: Duration) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            key: key.map(str::to_string),
            agent: agent(timeout),
        }
    }

    /// The server's base URL.
    pub fn base(&self) -> &str {
        &self.base
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
        // `Some("")`: no Authorization header at all.
        let bearer = key
            .or(self.key.as_deref())
            .filter(|k| !k.is_empty())
            .map(|k| format!("Bearer {k}"));
        let mut headers: Vec<(&str, &str)> = bearer
            .iter()
            .map(|b| ("Authorization", b.as_str()))
            .collect();
        if path == "/mcp" {
            // MCP's streamable HTTP answers 406 unless a client accepts both.
            headers.push(("Accept", "application/json, text/event-stream"));
        }
        let raw = send(&self.agent, method, &url, &headers, body)?;
        Ok(Resp {
            status: raw.status,
            content_type: raw.header("content-type").unwrap_or("").to_string(),
            body: serde_json::from_str(&raw.text).unwrap_or(Value::String(raw.text.clone())),
            text: raw.text,
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
