//! Crash safety: writers ingest through the HTTP API (sessions, batches, group messages)
//! and forget sessions they wrote while `cairn serve` is killed with SIGKILL at random
//! moments (seeded). After each kill `cairn check` must find the indexes in agreement with
//! the record (a kill inside a forget must not leave its units in an index), and after each
//! restart every acknowledged write must be readable exactly as sent and recallable, every
//! acknowledged forget must stay forgotten (not readable, not recalled), a write in flight
//! at the kill is either absent or whole, and a forget in flight either done or not.
use crate::corpus;
use crate::fuzz::Rng;
use crate::serve::{encode, Cairn, Client, Server};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SESSION_SPACE: &str = "crash";
pub const GROUP_SPACE: &str = "crash-groups";

#[derive(Debug, Clone)]
pub struct CrashOptions {
    pub kills: usize,
    pub seed: u64,
    /// Concurrent writers.
    pub writers: usize,
    /// Each kill comes this long after the restart (uniform in the range).
    pub min_delay: Duration,
    pub max_delay: Duration,
    /// Run `cairn check` after every N-th kill (1: after each).
    pub check_every: usize,
}

impl Default for CrashOptions {
    fn default() -> Self {
        Self {
            kills: 5,
            seed: 1,
            writers: 4,
            min_delay: Duration::from_millis(300),
            max_delay: Duration::from_millis(2000),
            check_every: 1,
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CrashReport {
    pub kills: usize,
    pub seed: u64,
    pub seconds: f64,
    /// Writes answered 200 (each a session, a batch of sessions or a group message).
    pub acknowledged_writes: usize,
    pub acknowledged_sessions: usize,
    pub acknowledged_group_messages: usize,
    /// Writes cut off by a kill: found whole afterwards / absent.
    pub in_flight_found_whole: usize,
    pub in_flight_absent: usize,
    /// Session forgets answered 2xx; forgets cut off by a kill: done afterwards / not.
    pub acknowledged_forgets: usize,
    pub forgets_in_flight_done: usize,
    pub forgets_in_flight_undone: usize,
    /// Acknowledged forgets whose session could be read or recalled after a restart
    /// (must be 0).
    pub forgotten_found: usize,
    /// Reads of acknowledged writes after restarts (each compared with what was sent).
    pub verified_reads: usize,
    pub recall_checks: usize,
    pub check_runs: usize,
    /// Acknowledged writes missing or changed, torn in-flight writes, checks that found
    /// indexes out of agreement, recalls that missed: all must be 0.
    pub lost: usize,
    pub index_disagreements: usize,
    /// Checks that found the text index out of step with the record and mended it
    /// (`text_mended`): the store heals, but something left it so (reported, not failed).
    pub index_mended: usize,
    pub recall_misses: usize,
    /// Non-2xx answers while the server was up (must be 0).
    pub errors: usize,
    pub restart_ms_p50: f64,
    pub restart_ms_max: f64,
    pub failures: Vec<String>,
}

#[derive(Debug, Clone)]
enum Write {
    Session {
        id: String,
        nonce: String,
        texts: Vec<String>,
    },
    Group {
        session: String,
        id: String,
        text: String,
    },
}

#[derive(Default)]
struct Ledger {
    acked: Vec<Write>,
    in_flight: Vec<Write>,
    /// Sessions whose forget was acknowledged / cut off by the kill.
    forgotten: Vec<Write>,
    forgetting: Vec<Write>,
    writes: usize,
    errors: Vec<String>,
}

impl Ledger {
    /// Takes the session `w` out of the acknowledged writes (it is being forgotten).
    fn unack(&mut self, w: &Write) {
        let id = session_id(w);
        self.acked.retain(|a| session_id(a) != id);
    }
}

/// The session a write stored (`None` for a group message).
fn session_id(w: &Write) -> Option<&str> {
    match w {
        Write::Session { id, .. } => Some(id),
        Write::Group { .. } => None,
    }
}

/// Forgets one of the writer's acknowledged sessions (`mine`): `false` when the server
/// is gone.
fn forget_one(
    client: &Client,
    mine: &mut Vec<Write>,
    rng: &mut Rng,
    ledger: &Mutex<Ledger>,
) -> bool {
    let w = mine.swap_remove(rng.below(mine.len()));
    let Some(id) = session_id(&w) else {
        return true;
    };
    let path = format!("/v1/spaces/{SESSION_SPACE}/sessions/{}", encode(id));
    let answer = client.delete(&path);
    let mut l = ledger.lock().unwrap_or_else(|p| p.into_inner());
    match answer {
        Ok(r) if matches!(r.status, 200 | 204) => {
            l.unack(&w);
            l.forgotten.push(w);
            true
        }
        Ok(r) => {
            l.errors
                .push(format!("DELETE {path}: {} {}", r.status, r.text));
            true
        }
        Err(_) => {
            l.unack(&w);
            l.forgetting.push(w);
            false
        }
    }
}

fn writer(
    client: Client,
    w: usize,
    round: usize,
    seed: u64,
    stop: Arc<AtomicBool>,
    ledger: Arc<Mutex<Ledger>>,
) {
    let mut rng = Rng(seed ^ ((round as u64) << 20) ^ w as u64);
    let mut i = 0usize;
    // This writer's acknowledged sessions of this round: what it may forget.
    let mut mine: Vec<Write> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        i += 1;
        let op = rng.below(10);
        if op == 9 && !mine.is_empty() {
            if !forget_one(&client, &mut mine, &mut rng, &ledger) {
                return;
            }
            continue;
        }
        let (path, body, writes) = match op {
            0..=5 => one_session(&mut rng, w, round, i),
            6..=7 => session_batch(&mut rng, w, round, i),
            _ => group_message(&mut rng, w, round, i),
        };
        match client.post(&path, &body) {
            Ok(r) if r.status == 200 => {
                mine.extend(writes.iter().filter(|w| session_id(w).is_some()).cloned());
                let mut l = ledger.lock().unwrap_or_else(|p| p.into_inner());
                l.writes += 1;
                l.acked.extend(writes);
            }
            Ok(r) => {
                let mut l = ledger.lock().unwrap_or_else(|p| p.into_inner());
                l.errors
                    .push(format!("POST {path}: {} {}", r.status, r.text));
            }
            Err(_) => {
                // The server is gone: this write may or may not have been committed.
                let mut l = ledger.lock().unwrap_or_else(|p| p.into_inner());
                l.in_flight.extend(writes);
                return;
            }
        }
    }
}

/// A writer's request: the path, the body, and the writes it carries.
type Request = (String, Value, Vec<Write>);

/// One session, the `i`-th request of writer `w` in `round`.
fn one_session(rng: &mut Rng, w: usize, round: usize, i: usize) -> Request {
    let id = format!("r{round}-w{w}-{i}");
    let nonce = corpus::nonce(rng);
    let (s, texts) = corpus::session(&id, &nonce, rng);
    (
        format!("/v1/spaces/{SESSION_SPACE}/sessions"),
        s,
        vec![Write::Session { id, nonce, texts }],
    )
}

/// A batch of one to four sessions.
fn session_batch(rng: &mut Rng, w: usize, round: usize, i: usize) -> Request {
    let mut sessions = Vec::new();
    let mut writes = Vec::new();
    for j in 0..1 + rng.below(4) {
        let id = format!("r{round}-w{w}-{i}-b{j}");
        let nonce = corpus::nonce(rng);
        let (s, texts) = corpus::session(&id, &nonce, rng);
        sessions.push(s);
        writes.push(Write::Session { id, nonce, texts });
    }
    (
        format!("/v1/spaces/{SESSION_SPACE}/sessions/batch"),
        json!({ "sessions": sessions }),
        writes,
    )
}

/// One group message, to the writer's own group.
fn group_message(rng: &mut Rng, w: usize, round: usize, i: usize) -> Request {
    let nonce = corpus::nonce(rng);
    let id = format!("m-r{round}-w{w}-{i}");
    // Minutes go up per writer and round, so a group's day only grows.
    let minute = (round * 10_000 + i) as i64;
    let (m, session) = corpus::group_message(&format!("team{w}"), &id, &nonce, minute, rng);
    let text = m["text"].as_str().unwrap_or_default().to_string();
    (
        format!("/v1/spaces/{GROUP_SPACE}/group-messages"),
        json!({ "messages": [m] }),
        vec![Write::Group { session, id, text }],
    )
}

/// What the server holds of a write: Some(true) exactly as sent, Some(false) absent,
/// Err a difference (torn or changed).
fn read_back(client: &Client, w: &Write) -> Result<bool> {
    match w {
        Write::Session { id, texts, .. } => {
            let r = client
                .get(&format!(
                    "/v1/spaces/{SESSION_SPACE}/sessions/{}",
                    encode(id)
                ))
                .map_err(anyhow::Error::msg)?;
            if r.status == 404 {
                return Ok(false);
            }
            if r.status != 200 {
                bail!("session {id}: {} {}", r.status, r.text);
            }
            let got: Vec<&str> = r.body["session"]["messages"]
                .as_array()
                .map(|ms| ms.iter().filter_map(|m| m["text"].as_str()).collect())
                .unwrap_or_default();
            if got != texts.iter().map(String::as_str).collect::<Vec<_>>() {
                bail!("session {id}: holds {got:?}, sent {texts:?}");
            }
            Ok(true)
        }
        Write::Group { session, id, text } => {
            let r = client
                .get(&format!(
                    "/v1/spaces/{GROUP_SPACE}/sessions/{}",
                    encode(session)
                ))
                .map_err(anyhow::Error::msg)?;
            if r.status == 404 {
                return Ok(false);
            }
            if r.status != 200 {
                bail!("group day {session}: {} {}", r.status, r.text);
            }
            let found = r.body["session"]["messages"]
                .as_array()
                .and_then(|ms| ms.iter().find(|m| m["id"].as_str() == Some(id.as_str())));
            match found {
                None => Ok(false),
                Some(m) if m["text"].as_str() == Some(text.as_str()) => Ok(true),
                Some(m) => bail!("group message {id}: holds {m}, sent {text:?}"),
            }
        }
    }
}

fn recalled(client: &Client, id: &str, nonce: &str) -> Result<bool> {
    let r = client
        .post(
            &format!("/v1/spaces/{SESSION_SPACE}/recall"),
            &json!({"query": format!("parcel {nonce}"), "top_k": 30}),
        )
        .map_err(anyhow::Error::msg)?;
    if r.status != 200 {
        bail!("recall: {} {}", r.status, r.text);
    }
    Ok(r.body["hits"]
        .as_array()
        .is_some_and(|hs| hs.iter().any(|h| h["session_id"].as_str() == Some(id))))
}

/// Whether a forgotten session can still be read, or recalled by its nonce.
fn still_there(client: &Client, w: &Write) -> Result<bool> {
    let Write::Session { id, nonce, .. } = w else {
        return Ok(false);
    };
    Ok(!matches!(read_back(client, w), Ok(false)) || recalled(client, id, nonce)?)
}

/// Counts an acknowledged forget whose session can still be read or recalled (`when`:
/// after which restart).
fn check_forgotten(client: &Client, w: &Write, when: &str, report: &mut CrashReport) -> Result<()> {
    if still_there(client, w)? {
        report.forgotten_found += 1;
        report
            .failures
            .push(format!("acknowledged forget undone {when}: {w:?}"));
    }
    Ok(())
}

/// After a restart: every acknowledged forget stays forgotten; a forget cut off by the
/// kill is done or not done, never torn. Returns the sessions whose forget was not done:
/// they are acknowledged writes again.
fn verify_forgets(
    client: &Client,
    ledger: &Ledger,
    report: &mut CrashReport,
) -> Result<Vec<Write>> {
    for w in &ledger.forgotten {
        check_forgotten(client, w, "after a kill", report)?;
    }
    let mut kept = Vec::new();
    for w in &ledger.forgetting {
        match read_back(client, w) {
            Ok(true) => {
                report.forgets_in_flight_undone += 1;
                kept.push(w.clone());
            }
            Ok(false) => report.forgets_in_flight_done += 1,
            Err(e) => {
                report.lost += 1;
                report
                    .failures
                    .push(format!("torn in-flight forget: {e:#}"));
            }
        }
    }
    report.acknowledged_forgets += ledger.forgotten.len();
    Ok(kept)
}

fn check(cairn: &Cairn, report: &mut CrashReport) -> Result<()> {
    report.check_runs += 1;
    // `check` exits non-zero when the indexes disagree: a finding, not the driver's error.
    let failed = match cairn.json(&["check"]) {
        Ok(c) if c["consistent"] == Value::Bool(true) => {
            if c["text_mended"].as_u64().unwrap_or(0) > 0 {
                report.index_mended += 1;
            }
            None
        }
        Ok(c) => Some(c.to_string()),
        Err(e) => Some(format!("{e:#}")),
    };
    if let Some(why) = failed {
        report.index_disagreements += 1;
        report.failures.push(format!(
            "cairn check: indexes disagree with the record: {why}"
        ));
    }
    Ok(())
}

/// Runs the crash test over `cairn.dir` (a fresh or existing data directory).
pub fn run(
    cairn: &Cairn,
    opts: &CrashOptions,
    mut progress: impl FnMut(&str),
) -> Result<CrashReport> {
    let start = Instant::now();
    let mut rng = Rng(opts.seed);
    let mut report = CrashReport {
        seed: opts.seed,
        ..Default::default()
    };
    let mut restarts = Vec::new();
    let mut server: Server = cairn.serve(&[])?;
    create_spaces(&server.client)?;
    let mut acked: Vec<Write> = Vec::new();
    let mut forgotten: Vec<Write> = Vec::new();
    for round in 0..opts.kills {
        let (ledger, delay) = write_until_killed(server, opts, round, &mut rng)?;
        report.kills += 1;
        report.acknowledged_writes += ledger.writes;
        report.errors += ledger.errors.len();
        report
            .failures
            .extend(ledger.errors.iter().take(5).cloned());
        if (round + 1) % opts.check_every.max(1) == 0 {
            check(cairn, &mut report)?;
        }
        let t = Instant::now();
        server = cairn.serve(&[]).context("restarting after SIGKILL")?;
        restarts.push(t.elapsed().as_secs_f64() * 1000.0);
        let kept = verify_round(&server.client, &ledger, &acked, &mut rng, &mut report)?;
        acked.extend(ledger.acked);
        acked.extend(kept);
        forgotten.extend(ledger.forgotten);
        progress(&format!(
            "kill {}/{} after {delay} ms: {} acknowledged so far, {} lost",
            round + 1,
            opts.kills,
            acked.len(),
            report.lost
        ));
    }
    // The end: every acknowledged write, read back once more after a clean stop.
    server.stop()?;
    check(cairn, &mut report)?;
    verify_at_end(cairn, &acked, &forgotten, &mut report)?;
    report.acknowledged_sessions = acked
        .iter()
        .filter(|w| matches!(w, Write::Session { .. }))
        .count();
    report.acknowledged_group_messages = acked.len() - report.acknowledged_sessions;
    let restarts = cairn_load::stats::sorted(&restarts);
    report.restart_ms_p50 = cairn_load::stats::percentile(&restarts, 50.0);
    report.restart_ms_max = restarts.last().copied().unwrap_or(0.0);
    report.seconds = start.elapsed().as_secs_f64();
    report.failures.truncate(50);
    Ok(report)
}

/// The two spaces the writers write to (already there is fine).
fn create_spaces(client: &Client) -> Result<()> {
    for space in [SESSION_SPACE, GROUP_SPACE] {
        let r = client
            .post("/v1/spaces", &json!({"name": space}))
            .map_err(anyhow::Error::msg)?;
        if !matches!(r.status, 200 | 201 | 409) {
            bail!("creating space {space}: {} {}", r.status, r.text);
        }
    }
    Ok(())
}

/// One round: the writers write until the server is killed with SIGKILL after a random
/// delay; what they saw, and the delay in milliseconds.
fn write_until_killed(
    server: Server,
    opts: &CrashOptions,
    round: usize,
    rng: &mut Rng,
) -> Result<(Ledger, u64)> {
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..opts.writers)
        .map(|w| {
            let (c, s, l) = (server.client.clone(), stop.clone(), ledger.clone());
            let seed = opts.seed;
            std::thread::spawn(move || writer(c, w, round, seed, s, l))
        })
        .collect();
    let delay = rng.range(
        opts.min_delay.as_millis() as u64,
        opts.max_delay.as_millis() as u64 + 1,
    );
    std::thread::sleep(Duration::from_millis(delay));
    server.kill().context("SIGKILL")?;
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        let _ = t.join();
    }
    let ledger = std::mem::take(&mut *ledger.lock().unwrap_or_else(|p| p.into_inner()));
    Ok((ledger, delay))
}

/// After a restart: everything acknowledged in this round and a sample of earlier rounds
/// read back, writes cut off whole or absent, two sessions recalled, the forgets checked
/// (see [`verify_forgets`], whose sessions not forgotten this returns).
fn verify_round(
    client: &Client,
    ledger: &Ledger,
    acked: &[Write],
    rng: &mut Rng,
    report: &mut CrashReport,
) -> Result<Vec<Write>> {
    let mut to_read: Vec<&Write> = ledger.acked.iter().collect();
    for _ in 0..20.min(acked.len()) {
        to_read.push(&acked[rng.below(acked.len())]);
    }
    for w in to_read {
        report.verified_reads += 1;
        match read_back(client, w) {
            Ok(true) => {}
            Ok(false) => {
                report.lost += 1;
                report
                    .failures
                    .push(format!("acknowledged write lost: {w:?}"));
            }
            Err(e) => {
                report.lost += 1;
                report.failures.push(format!("{e:#}"));
            }
        }
    }
    for w in &ledger.in_flight {
        match read_back(client, w) {
            Ok(true) => report.in_flight_found_whole += 1,
            Ok(false) => report.in_flight_absent += 1,
            Err(e) => {
                report.lost += 1;
                report.failures.push(format!("torn in-flight write: {e:#}"));
            }
        }
    }
    let sessions: Vec<&Write> = ledger
        .acked
        .iter()
        .filter(|w| matches!(w, Write::Session { .. }))
        .collect();
    for _ in 0..2.min(sessions.len()) {
        if let Write::Session { id, nonce, .. } = sessions[rng.below(sessions.len())] {
            report.recall_checks += 1;
            if !recalled(client, id, nonce)? {
                report.recall_misses += 1;
                report
                    .failures
                    .push(format!("acknowledged session {id} ({nonce}) not recalled"));
            }
        }
    }
    verify_forgets(client, ledger, report)
}

/// After the last round and a clean stop: every acknowledged write read back once more,
/// every acknowledged forget still forgotten.
fn verify_at_end(
    cairn: &Cairn,
    acked: &[Write],
    forgotten: &[Write],
    report: &mut CrashReport,
) -> Result<()> {
    let server = cairn.serve(&[])?;
    for w in acked {
        report.verified_reads += 1;
        if !matches!(read_back(&server.client, w), Ok(true)) {
            report.lost += 1;
            report
                .failures
                .push(format!("acknowledged write lost at the end: {w:?}"));
        }
    }
    for w in forgotten {
        check_forgotten(&server.client, w, "at the end", report)?;
    }
    server.stop()
}

impl CrashReport {
    /// Nothing lost, nothing forgotten come back, nothing torn, indexes in agreement, no
    /// errors.
    pub fn passed(&self) -> bool {
        self.lost == 0
            && self.forgotten_found == 0
            && self.index_disagreements == 0
            && self.recall_misses == 0
            && self.errors == 0
    }
}
