//! Retries raced against each other: a client that retries a write under one
//! `Idempotency-Key`, as the docs tell it to, must get exactly one write however its
//! tries land. Each round sends `retries` identical appends under one key and `retries`
//! appends with different bodies under another, all released at once, while other
//! clients keep the write lock busy with appends to another space (so that tries queue
//! up and are written by one group commit). Then it reads the sessions back:
//! - identical tries: every answer 200, exactly one of them not a replay, the message
//!   stored once;
//! - different bodies: exactly one 200, every other one `422 idempotency_key_reused`, one
//!   message stored.
use crate::serve::{encode, Cairn, Client};
use anyhow::Result;
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};

#[derive(Debug, Clone)]
pub struct RacesOptions {
    pub rounds: usize,
    /// Tries per key and round.
    pub retries: usize,
    /// Clients appending to another space meanwhile.
    pub busy_clients: usize,
}

impl Default for RacesOptions {
    fn default() -> Self {
        Self {
            rounds: 10,
            retries: 8,
            busy_clients: 2,
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct RacesReport {
    pub rounds: usize,
    pub tries: usize,
    /// Rounds whose identical tries were stored more than once (or not at all).
    pub duplicated: usize,
    /// Rounds where more than one different body was accepted under one key.
    pub reused_key_accepted: usize,
    /// Answers that were neither what exactly-once allows.
    pub unexpected: Vec<String>,
    /// Appends to the other space meanwhile.
    pub busy_appends: usize,
}

impl RacesReport {
    pub fn passed(&self) -> bool {
        self.rounds > 0
            && self.duplicated == 0
            && self.reused_key_accepted == 0
            && self.unexpected.is_empty()
    }
}

const SPACE: &str = "races";
const BUSY: &str = "busy";

/// One try's answer: status, error code, whether it was a replay.
type Answer = (u16, String, bool);

pub fn run(cairn: &Cairn, opts: &RacesOptions, say: impl Fn(&str)) -> Result<RacesReport> {
    let server = cairn.serve(&[])?;
    let base = server.client.base().to_string();
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..opts.busy_clients)
        .map(|c| {
            let (client, stop) = (server.client.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let body = json!({"session_id": format!("busy{c}"),
                        "messages": [{"speaker": "user", "text": format!("busy {c} {n}")}]});
                    if client
                        .post(&format!("/v1/spaces/{BUSY}/messages"), &body)
                        .is_ok_and(|r| r.status == 200)
                    {
                        n += 1;
                    }
                }
                n
            })
        })
        .collect();
    let mut report = RacesReport::default();
    for round in 0..opts.rounds {
        let same = json!({"session_id": format!("same{round}"),
            "messages": [{"speaker": "user", "text": format!("I moved to Oslo in round {round}")}]});
        let mut tries: Vec<(String, Value)> = (0..opts.retries)
            .map(|_| (format!("same-{round}"), same.clone()))
            .collect();
        tries.extend((0..opts.retries).map(|i| {
            let body = json!({"session_id": format!("other{round}"),
                "messages": [{"speaker": "user", "text": format!("body {i} of round {round}")}]});
            (format!("other-{round}"), body)
        }));
        let answers = race(&base, tries);
        report.tries += answers.len();
        let (same_answers, other_answers) = answers.split_at(opts.retries);
        let written = same_answers.iter().filter(|a| a.0 == 200 && !a.2).count();
        let stored_same = messages(&server.client, &format!("same{round}"))?;
        if written != 1 || stored_same != 1 {
            report.duplicated += 1;
        }
        for a in same_answers.iter().filter(|a| a.0 != 200) {
            report
                .unexpected
                .push(format!("round {round}, identical try: {a:?}"));
        }
        let accepted = other_answers.iter().filter(|a| a.0 == 200).count();
        let stored_other = messages(&server.client, &format!("other{round}"))?;
        if accepted != 1 || stored_other != 1 {
            report.reused_key_accepted += 1;
        }
        for a in other_answers
            .iter()
            .filter(|a| a.0 != 200 && !(a.0 == 422 && a.1 == "idempotency_key_reused"))
        {
            report
                .unexpected
                .push(format!("round {round}, other body: {a:?}"));
        }
        report.rounds += 1;
    }
    stop.store(true, Ordering::Relaxed);
    report.busy_appends = busy.into_iter().filter_map(|h| h.join().ok()).sum();
    say(&format!(
        "races: {} rounds, {} tries, {} duplicated, {} reused keys accepted",
        report.rounds, report.tries, report.duplicated, report.reused_key_accepted
    ));
    server.stop()?;
    Ok(report)
}

/// Sends every `(key, body)` append at once, each from its own thread and client.
fn race(base: &str, tries: Vec<(String, Value)>) -> Vec<Answer> {
    let start = Arc::new(Barrier::new(tries.len()));
    let handles: Vec<_> = tries
        .into_iter()
        .map(|(key, body)| {
            let (base, start) = (base.to_string(), start.clone());
            std::thread::spawn(move || {
                let agent = cairn_load::client::agent(std::time::Duration::from_secs(120));
                let url = format!("{base}/v1/spaces/{SPACE}/messages");
                let bearer = format!("Bearer {}", crate::serve::ADMIN_KEY);
                let headers = [
                    ("Authorization", bearer.as_str()),
                    ("Idempotency-Key", key.as_str()),
                ];
                let text = body.to_string();
                start.wait();
                match cairn_load::client::send(
                    &agent,
                    "POST",
                    &url,
                    &headers,
                    Some(("application/json", text.as_bytes())),
                ) {
                    Ok(r) => {
                        let code = serde_json::from_str::<Value>(&r.text)
                            .ok()
                            .and_then(|v| v["code"].as_str().map(str::to_string))
                            .unwrap_or_default();
                        let replayed = r.header("idempotency-replayed") == Some("true");
                        (r.status, code, replayed)
                    }
                    Err(e) => (0, e, false),
                }
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or((0, "thread panicked".into(), false)))
        .collect()
}

/// Messages stored in a session of [`SPACE`] (0 when it is not stored).
fn messages(client: &Client, session: &str) -> Result<usize> {
    let r = client
        .get(&format!("/v1/spaces/{SPACE}/sessions/{}", encode(session)))
        .map_err(anyhow::Error::msg)?;
    Ok(match r.status {
        200 => r.body["session"]["messages"].as_array().map_or(0, Vec::len),
        _ => 0,
    })
}
