//! What the bad-input corpus is made of: a case, the helpers that build one, the routes
//! the cases write to, and the raw HTTP sent over a socket (the cases themselves are in
//! `queries.rs` and `writes.rs`, gathered by `corpus.rs`).
use super::spaces::SPACE;
use crate::serve::ADMIN_KEY;
use serde_json::{json, Value};

/// One request of the corpus.
pub struct Case {
    pub name: String,
    pub method: &'static str,
    /// Already percent-encoded where it needs to be.
    pub path: String,
    pub content_type: &'static str,
    pub body: Option<Vec<u8>>,
    /// `None`: the admin key; `Some(v)`: this Authorization header value ("" for none).
    pub auth: Option<String>,
    /// Adversarial but well-formed: must be answered 2xx, stored (if a write) as exactly
    /// what was sent under its literal id, and touch nothing else.
    pub accept: bool,
}

pub(super) fn case(
    name: impl Into<String>,
    method: &'static str,
    path: impl Into<String>,
    body: Option<Vec<u8>>,
) -> Case {
    Case {
        name: name.into(),
        method,
        path: path.into(),
        content_type: "application/json",
        body,
        auth: None,
        accept: false,
    }
}

pub(super) fn accepted(mut c: Case) -> Case {
    c.accept = true;
    c
}

pub(super) fn post_json(name: impl Into<String>, path: impl Into<String>, v: Value) -> Case {
    case(name, "POST", path, Some(v.to_string().into_bytes()))
}

pub(super) fn post_raw(
    name: impl Into<String>,
    path: impl Into<String>,
    b: impl Into<Vec<u8>>,
) -> Case {
    case(name, "POST", path, Some(b.into()))
}

pub(super) fn msgs() -> Value {
    json!([{"role": "user", "text": "hello"}])
}

/// The routes of [`SPACE`] the cases write to.
pub(super) struct Routes {
    pub(super) s: String,
    pub(super) sessions: String,
    pub(super) recall: String,
}

impl Routes {
    pub(super) fn new() -> Self {
        let s = format!("/v1/spaces/{SPACE}");
        Self {
            sessions: format!("{s}/sessions"),
            recall: format!("{s}/recall"),
            s,
        }
    }
}

/// Requests that are not well-formed HTTP, sent over a raw socket.
pub fn raw_corpus() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("garbage request line", b"HELLO\r\n\r\n".to_vec()),
        ("HTTP/0.9", b"GET /v1/health\r\n\r\n".to_vec()),
        ("header without colon", b"GET /v1/health HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n".to_vec()),
        ("content-length lies (short body, then close)", b"POST /v1/spaces/bad/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"id\":".to_vec()),
        ("two content-lengths", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\n{}".to_vec()),
        ("huge content-length", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n".to_vec()),
        ("bad chunked encoding", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec()),
        ("1 MiB header", [b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ".to_vec(), vec![b'a'; 1 << 20], b"\r\n\r\n".to_vec()].concat()),
        ("body over the limit (9 MiB declared, 1 MiB sent)", [format!("POST /v1/spaces/bad/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", 9 << 20).into_bytes(), vec![b' '; 1 << 20]].concat()),
        ("NUL in the path", b"GET /v1/\0health HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        ("request smuggling attempt", b"POST /v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /v1/spaces HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
    ]
}
