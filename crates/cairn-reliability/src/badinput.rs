//! Bad input through the API: a corpus of malformed and adversarial requests (wrong types,
//! huge bodies, deep nesting, invalid UTF-8, control characters, injection attempts in
//! filters and space names, path traversal in ids, broken HTTP, metadata nested past what
//! reads back, bodies a web page can send cross-site, names URL clients rewrite) and slow
//! or idle clients. Every request must get a 4xx problem document
//! (`application/problem+json` with a `code` and a `detail`), every slow client must be
//! cut off, the server must stay up, nothing refused may be stored, and a canary session
//! must read back unchanged afterwards.
mod cases;
mod corpus;
mod queries;
mod spaces;
mod writes;

pub use cases::{raw_corpus, Case};
pub use corpus::corpus;
pub use spaces::SPACE;

use crate::serve::{encode, Cairn, Client, Resp, ADMIN_KEY};
use anyhow::{bail, Result};
use serde::Serialize;
use serde_json::{json, Value};
use spaces::OTHER;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[derive(Debug, Clone, Default, Serialize)]
pub struct BadInputReport {
    pub requests: usize,
    pub raw_requests: usize,
    /// Answered 4xx with a problem document.
    pub refused_4xx: usize,
    /// Adversarial but well-formed requests answered 2xx, stored exactly as sent (writes),
    /// nothing else touched.
    pub accepted_as_data: usize,
    /// Anything else: a 2xx, a 5xx, or a 4xx without a problem document (must be 0).
    pub wrong_answers: usize,
    pub server_down_after: usize,
    pub canary_changed: usize,
    /// Slow or idle clients the server did not cut off (must be empty).
    pub slow_clients_left_open: Vec<String>,
    pub failures: Vec<String>,
    /// code -> how many requests got it.
    pub codes: std::collections::BTreeMap<String, usize>,
}

impl BadInputReport {
    pub fn passed(&self) -> bool {
        self.wrong_answers == 0
            && self.server_down_after == 0
            && self.canary_changed == 0
            && self.slow_clients_left_open.is_empty()
    }
}

fn problem_ok(r: &Resp) -> bool {
    (400..500).contains(&r.status)
        && r.content_type.starts_with("application/problem+json")
        && r.body["code"].as_str().is_some_and(|c| !c.is_empty())
        && r.body["detail"].as_str().is_some_and(|d| !d.is_empty())
        && r.body["status"].as_u64() == Some(r.status as u64)
}

/// What slow and idle clients are given by the server under test: short, so the probes
/// finish quickly.
const HEADER_TIMEOUT_MS: u64 = 1000;
const BODY_TIMEOUT_MS: u64 = 2000;

/// Clients that send half a request head, nothing, or a body a byte at a time (issue 38:
/// 150 of them stayed open 30-35 s, exhausted file descriptors and stalled a shutdown).
/// Each must be cut off by the server within a few timeouts while `/v1/health` keeps
/// answering; the names of those left open.
fn slow_clients(client: &cairn_load::client::Client) -> Vec<String> {
    let addr = client.base.trim_start_matches("http://").to_string();
    let drip = format!(
        "POST /v1/spaces/{SPACE}/sessions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    let probes: Vec<(String, Vec<u8>, bool)> = (0..10)
        .flat_map(|i| {
            [
                (
                    format!("half-sent head {i}"),
                    b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\n".to_vec(),
                    false,
                ),
                (format!("idle connection {i}"), Vec::new(), false),
                (
                    format!("dripping body {i}"),
                    drip.clone().into_bytes(),
                    true,
                ),
            ]
        })
        .collect();
    let handles: Vec<_> = probes
        .into_iter()
        .map(|(name, first, dripping)| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let Ok(mut s) = TcpStream::connect(&addr) else {
                    return None;
                };
                let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                let _ = s.write_all(&first);
                let start = std::time::Instant::now();
                let limit = Duration::from_millis(5 * (HEADER_TIMEOUT_MS + BODY_TIMEOUT_MS));
                let mut buf = [0u8; 1024];
                while start.elapsed() < limit {
                    if dripping && s.write_all(b" ").is_err() {
                        return None;
                    }
                    match s.read(&mut buf) {
                        Ok(0) => return None,
                        Err(e)
                            if !matches!(
                                e.kind(),
                                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                            ) =>
                        {
                            return None
                        }
                        _ => {}
                    }
                }
                Some(name)
            })
        })
        .collect();
    let mut open = Vec::new();
    if !matches!(client.get("/v1/health"), Ok(r) if r.status == 200) {
        open.push("/v1/health did not answer while slow clients were connected".to_string());
    }
    open.extend(handles.into_iter().filter_map(|h| h.join().ok().flatten()));
    open
}

pub fn run(cairn: &Cairn, mut progress: impl FnMut(&str)) -> Result<BadInputReport> {
    let server = cairn.serve(&[
        "--header-timeout-ms",
        &HEADER_TIMEOUT_MS.to_string(),
        "--body-timeout-ms",
        &BODY_TIMEOUT_MS.to_string(),
    ])?;
    let client = server.client.clone();
    plant_canaries(&client)?;
    let before = read_canaries(&client).map_err(anyhow::Error::msg)?;
    let stats_before = bystander(&client).map_err(anyhow::Error::msg)?;
    let mut report = BadInputReport::default();
    send_corpus(&client, &mut report, &mut progress);
    send_raw_corpus(&client, &mut report);
    progress("slow and idle clients");
    report.slow_clients_left_open = slow_clients(&client);
    report.failures.extend(
        report
            .slow_clients_left_open
            .iter()
            .map(|n| format!("slow client not cut off: {n}")),
    );
    refused_writes_left_nothing(&client, &mut report)?;
    let after = read_canaries(&client).map_err(anyhow::Error::msg)?;
    if after != before {
        report.canary_changed += 1;
        report
            .failures
            .push(format!("canary changed: {before:?} -> {after:?}"));
    }
    let stats_after = bystander(&client).map_err(anyhow::Error::msg)?;
    if stats_after != stats_before {
        report.canary_changed += 1;
        report
            .failures
            .push(format!("stats changed: {stats_before} -> {stats_after}"));
    }
    accepted_stays_readable(&client, &mut report)?;
    server.stop()?;
    Ok(report)
}

/// A canary session in [`SPACE`] and in the bystander space, to read back unchanged.
fn plant_canaries(client: &Client) -> Result<()> {
    for space in [SPACE, OTHER] {
        let canary = json!({"id": "canary", "date": "2024-05-01 10:00", "metadata": {"k": "v"}, "messages": [
            {"role": "user", "text": format!("The canary of {space} sings at dawn; vault code 4417.")},
            {"role": "assistant", "text": "Noted, the canary sings at dawn."}]});
        let r = client
            .post(&format!("/v1/spaces/{space}/sessions"), &canary)
            .map_err(anyhow::Error::msg)?;
        if r.status != 200 {
            bail!("canary: {} {}", r.status, r.text);
        }
    }
    Ok(())
}

/// Both canaries as they read back.
fn read_canaries(client: &Client) -> Result<Vec<Value>, String> {
    [SPACE, OTHER]
        .iter()
        .map(|s| {
            client
                .get(&format!("/v1/spaces/{s}/sessions/canary"))
                .map(|r| r.body)
        })
        .collect()
}

/// The bystander space's stats.
fn bystander(client: &Client) -> Result<Value, String> {
    client
        .get(&format!("/v1/spaces/{OTHER}/stats"))
        .map(|r| r.body)
}

/// Every case of [`corpus`], each answer judged and the server's health checked after
/// it; stops at the first case the server does not survive.
fn send_corpus(client: &Client, report: &mut BadInputReport, progress: &mut impl FnMut(&str)) {
    let corpus = corpus();
    let n = corpus.len();
    for (i, c) in corpus.into_iter().enumerate() {
        report.requests += 1;
        let resp = send_case(client, &c);
        judge(client, &c, resp, report);
        match client.get("/v1/health") {
            Ok(r) if r.status == 200 => {}
            _ => {
                report.server_down_after += 1;
                report
                    .failures
                    .push(format!("server down after {}", c.name));
                break;
            }
        }
        if (i + 1) % 50 == 0 {
            progress(&format!("{}/{n} requests", i + 1));
        }
    }
}

/// One case sent, with the admin key, no key, or its own Authorization header.
fn send_case(client: &Client, c: &Case) -> Result<Resp, String> {
    match (&c.auth, &c.body) {
        (Some(h), body) if !h.is_empty() => {
            // A custom Authorization header: through ureq with the raw value.
            let url = format!("{}{}", client.base, c.path);
            let agent = cairn_load::client::agent(std::time::Duration::from_secs(120));
            let body = body.as_deref().map(|b| (c.content_type, b));
            cairn_load::client::send(&agent, c.method, &url, &[("Authorization", h)], body).map(
                |r| Resp {
                    status: r.status,
                    content_type: r.header("content-type").unwrap_or("").to_string(),
                    body: serde_json::from_str(&r.text).unwrap_or(Value::Null),
                    text: r.text,
                },
            )
        }
        _ => client.request(
            c.method,
            &c.path,
            c.body.as_deref().map(|b| (c.content_type, b)),
            if c.auth.is_some() { Some("") } else { None },
        ),
    }
}

/// Counts the answer to one case: accepted as data, refused with a problem document, or
/// wrong.
fn judge(client: &Client, c: &Case, resp: Result<Resp, String>, report: &mut BadInputReport) {
    match resp {
        Ok(r) if c.accept => judge_accepted(client, c, &r, report),
        Ok(r) if problem_ok(&r) => {
            report.refused_4xx += 1;
            *report
                .codes
                .entry(r.body["code"].as_str().unwrap_or("").to_string())
                .or_default() += 1;
        }
        Ok(r) => {
            report.wrong_answers += 1;
            let text: String = r.text.chars().take(300).collect();
            report.failures.push(format!(
                "{}: {} {} -> {} {text}",
                c.name,
                c.method,
                trunc(&c.path),
                r.status
            ));
        }
        Err(e) => {
            report.wrong_answers += 1;
            report
                .failures
                .push(format!("{}: no answer: {}", c.name, trunc(&e)));
        }
    }
}

/// An adversarial but well-formed case: answered 2xx, stored under its literal id (a
/// session write), and the bystander's canary not in the answer.
fn judge_accepted(client: &Client, c: &Case, r: &Resp, report: &mut BadInputReport) {
    let id = c
        .body
        .as_deref()
        .and_then(|b| serde_json::from_slice::<Value>(b).ok())
        .and_then(|v| v["id"].as_str().map(str::to_string));
    let stored = match (&id, c.path.ends_with("/sessions")) {
        (Some(id), true) => client
            .get(&format!("/v1/spaces/{SPACE}/sessions/{}", encode(id)))
            .is_ok_and(|g| g.status == 200 && g.body["session"]["id"].as_str() == Some(id)),
        _ => true,
    };
    let leaked = r.text.contains(&format!("canary of {OTHER}"));
    if (200..300).contains(&r.status) && stored && !leaked {
        report.accepted_as_data += 1;
    } else {
        report.wrong_answers += 1;
        let text: String = r.text.chars().take(300).collect();
        report.failures.push(format!(
            "{} (well-formed): {} stored={stored} leaked={leaked} {text}",
            c.name, r.status
        ));
    }
}

/// Every request of [`raw_corpus`] over a raw socket: a 4xx or a closed connection,
/// never a 2xx or a 5xx, and the server up after each.
fn send_raw_corpus(client: &Client, report: &mut BadInputReport) {
    for (name, bytes) in raw_corpus() {
        report.raw_requests += 1;
        let addr = client.base.trim_start_matches("http://").to_string();
        if let Ok(mut s) = TcpStream::connect(&addr) {
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.write_all(&bytes);
            let _ = s.shutdown(std::net::Shutdown::Write);
            let mut answer = Vec::new();
            let _ = s.take(1 << 20).read_to_end(&mut answer);
            let head = String::from_utf8_lossy(&answer[..answer.len().min(12)]).to_string();
            // Either a 4xx or the connection closed without an answer; never a 2xx/5xx.
            if head.starts_with("HTTP/1.1 2") || head.starts_with("HTTP/1.1 5") {
                // The smuggled second request may be answered 2xx only if the first was refused.
                if !(name == "request smuggling attempt"
                    && String::from_utf8_lossy(&answer).contains(" 4"))
                {
                    report.wrong_answers += 1;
                    report.failures.push(format!("raw {name}: {head}"));
                }
            }
        }
        match client.get("/v1/health") {
            Ok(r) if r.status == 200 => {}
            _ => {
                report.server_down_after += 1;
                report
                    .failures
                    .push(format!("server down after raw {name}"));
            }
        }
    }
}

/// Refused writes left nothing: not the session before a refused import line, not what a
/// cross-site body or too-deep metadata carried; and an offset past every row is an
/// empty page.
fn refused_writes_left_nothing(client: &Client, report: &mut BadInputReport) -> Result<()> {
    for id in ["half", "evil", "deep", "big", "dots"] {
        match client.get(&format!("/v1/spaces/{SPACE}/sessions/{id}")) {
            Ok(r) if r.status == 404 => {}
            Ok(r) => {
                report.canary_changed += 1;
                report.failures.push(format!(
                    "a refused write left session {id:?}: {} {}",
                    r.status,
                    trunc(&r.text)
                ));
            }
            Err(e) => bail!("session {id}: {e}"),
        }
    }
    match client.get(&format!(
        "/v1/spaces/{SPACE}/memories?offset=18446744073709551615"
    )) {
        Ok(r) if r.status == 200 && r.body["items"] == json!([]) => {}
        Ok(r) => {
            report.wrong_answers += 1;
            report.failures.push(format!(
                "an offset past every row answered {} {}",
                r.status,
                trunc(&r.text)
            ));
        }
        Err(e) => bail!("offset: {e}"),
    }
    Ok(())
}

/// Whatever was accepted stays readable: every read of both spaces answers 200, and the
/// canary is still recalled.
fn accepted_stays_readable(client: &Client, report: &mut BadInputReport) -> Result<()> {
    for path in [
        format!("/v1/spaces/{SPACE}/export"),
        format!("/v1/spaces/{SPACE}/sessions"),
        format!("/v1/spaces/{SPACE}/stats"),
        format!(
            "/v1/spaces/{SPACE}/memories?filter={}",
            encode("{\"k\": \"v\"}")
        ),
        "/v1/stats".to_string(),
    ] {
        match client.get(&path) {
            Ok(r) if r.status == 200 => {}
            Ok(r) => {
                report.canary_changed += 1;
                report.failures.push(format!(
                    "{path} unreadable: {} {}",
                    r.status,
                    trunc(&r.text)
                ));
            }
            Err(e) => bail!("{path}: {e}"),
        }
    }
    let r = client
        .post(
            &format!("/v1/spaces/{SPACE}/recall"),
            &json!({"query": "When does the canary sing?", "filter": {"k": "v"}, "as_of": "2030-01-01"}),
        )
        .map_err(anyhow::Error::msg)?;
    if !r.text.contains("dawn") {
        report.canary_changed += 1;
        report
            .failures
            .push(format!("canary not recalled: {}", trunc(&r.text)));
    }
    Ok(())
}

fn trunc(s: &str) -> String {
    if s.len() > 200 {
        format!("{}...", &s[..s.floor_char_boundary_compat(200)])
    } else {
        s.to_string()
    }
}

trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}
impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, mut i: usize) -> usize {
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}
