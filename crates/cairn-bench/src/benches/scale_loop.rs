//! The live loop at scale (`cairn bench scale --loop N`, issue 52): what an agent that
//! writes every turn pays. In the space `cairn bench scale` filled, each of N iterations
//! times, in one process and one memory:
//!
//! - a recall with nothing written since the last one (the read-only twin),
//! - an append of one exchange (a user's statement about themself and the reply), then the
//!   same recall right after it,
//! - the fact subjects and the user's profile (two knowledge routes) with nothing written
//!   since they were last asked, then each right after another append,
//! - a forget of the first exchange, then the same recall right after it.
//!
//! Every step timed read-only is asked once before (the query's embedding is then cached)
//! and another question is recalled in between, as a write comes in between for its
//! twin: the pairs differ only by the write. The appends go to a live session per ten
//! iterations, as a chat agent's would.
use crate::datasets::chat_history::topic_query;
use crate::run::stopped;
use anyhow::bail;
use cairn::{AppendInput, Memory, Message, RecallOptions, Role, ScopeOptions, WriteOptions};
use cairn_load::stats::{percentiles, Percentiles};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Milliseconds at each step of the loop, over its iterations.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LoopPoint {
    pub iterations: usize,
    /// A recall with no write since the one before it.
    pub recall_read_only_ms: Percentiles,
    /// An append of one exchange (two messages).
    pub append_ms: Percentiles,
    /// The same recall right after an append.
    pub recall_after_append_ms: Percentiles,
    /// p50 after an append over p50 read-only.
    pub after_append_ratio: f64,
    /// The fact subjects with no write since they were last asked.
    #[serde(default)]
    pub subjects_read_only_ms: Percentiles,
    /// The fact subjects right after an append.
    pub subjects_after_append_ms: Percentiles,
    /// The user's profile with no write since it was last asked.
    #[serde(default)]
    pub profile_read_only_ms: Percentiles,
    /// The user's profile right after an append.
    pub profile_after_append_ms: Percentiles,
    /// Forgetting an exchange appended earlier (both its messages).
    pub forget_ms: Percentiles,
    /// The same recall right after a forget.
    pub recall_after_forget_ms: Percentiles,
}

/// What the user says of themself in the loop: a statement whose value changes every
/// time, so each append makes or supersedes a personal fact.
const STATEMENTS: &[&str] = &[
    "I moved to {} last month, the flat is lovely.",
    "These days I work at {} as an engineer.",
    "My favourite dish is {} now.",
    "I just adopted a dog and named her {}.",
];
const VALUES: &[&str] = &[
    "Lisbon", "Kyoto", "Denver", "Nairobi", "Oslo", "Hanoi", "Lima", "Tallinn", "Perth",
    "Montreal", "Seville", "Busan",
];

fn message(id: String, role: Role, text: String) -> Message {
    Message {
        id,
        role: Some(role),
        speaker: None,
        text,
        occurred_at: None,
        metadata: serde_json::Value::Null,
    }
}

/// The `k`-th exchange of the loop, to the live session of its iteration.
fn exchange(iteration: usize, k: usize) -> AppendInput {
    let statement = STATEMENTS[k % STATEMENTS.len()];
    let value = VALUES[(k * 7 + iteration) % VALUES.len()];
    let said = statement.replace("{}", value);
    AppendInput {
        session_id: format!("live-{}", iteration / 10),
        messages: vec![
            message(format!("{k}-said"), Role::User, said),
            message(
                format!("{k}-reply"),
                Role::Assistant,
                format!("Noted: {value}."),
            ),
        ],
        occurred_at: None,
        group: None,
        metadata: serde_json::Value::Null,
    }
}

fn timed<T>(f: impl FnOnce() -> Result<T, cairn::Error>) -> anyhow::Result<(T, f64)> {
    let t = Instant::now();
    let v = f()?;
    Ok((v, t.elapsed().as_secs_f64() * 1000.0))
}

/// Runs `iterations` of the loop against `space`.
pub fn measure(
    memory: &Memory,
    space: &str,
    options: &RecallOptions,
    iterations: usize,
    seed: u64,
) -> anyhow::Result<LoopPoint> {
    let write = WriteOptions::default();
    let scope = ScopeOptions::default();
    let mut read_only = Vec::new();
    let mut append = Vec::new();
    let mut after_append = Vec::new();
    let mut subjects = Vec::new();
    let mut subjects_read_only = Vec::new();
    let mut profile = Vec::new();
    let mut profile_read_only = Vec::new();
    let mut forget = Vec::new();
    let mut after_forget = Vec::new();
    for i in 0..iterations {
        if stopped() {
            bail!("interrupted");
        }
        let q = topic_query(10_000 + i, seed);
        let other = topic_query(20_000 + i, seed);
        let between = || memory.recall(space, &other, options).map(drop);
        memory.recall(space, &q, options)?;
        between()?;
        read_only.push(timed(|| memory.recall(space, &q, options))?.1);
        let first = exchange(i, 3 * i);
        let (session, said) = (first.session_id.clone(), first.messages[0].id.clone());
        append.push(timed(|| memory.append(space, first, &write))?.1);
        after_append.push(timed(|| memory.recall(space, &q, options))?.1);
        memory.fact_subjects(space, &scope)?;
        between()?;
        subjects_read_only.push(timed(|| memory.fact_subjects(space, &scope))?.1);
        memory.profile(space, "user", &scope)?;
        between()?;
        profile_read_only.push(timed(|| memory.profile(space, "user", &scope))?.1);
        memory.append(space, exchange(i, 3 * i + 1), &write)?;
        subjects.push(timed(|| memory.fact_subjects(space, &scope))?.1);
        memory.append(space, exchange(i, 3 * i + 2), &write)?;
        profile.push(timed(|| memory.profile(space, "user", &scope))?.1);
        forget.push(timed(|| memory.forget_message_with(space, &session, &said, true))?.1);
        after_forget.push(timed(|| memory.recall(space, &q, options))?.1);
    }
    let read_only = percentiles(&read_only);
    let after_append = percentiles(&after_append);
    Ok(LoopPoint {
        iterations,
        after_append_ratio: after_append.p50 / read_only.p50.max(1e-9),
        recall_read_only_ms: read_only,
        append_ms: percentiles(&append),
        recall_after_append_ms: after_append,
        subjects_read_only_ms: percentiles(&subjects_read_only),
        subjects_after_append_ms: percentiles(&subjects),
        profile_read_only_ms: percentiles(&profile_read_only),
        profile_after_append_ms: percentiles(&profile),
        forget_ms: percentiles(&forget),
        recall_after_forget_ms: percentiles(&after_forget),
    })
}

/// The loop's line of a point's summary.
pub fn line(l: &LoopPoint) -> String {
    format!(
        "loop x{}: recall p50 {:.1} ms read-only, {:.1} ms after an append ({:.2}x); append {:.1}; subjects {:.1} / {:.1}, profile {:.1} / {:.1} (read-only / after an append); forget {:.1}, recall after it {:.1}",
        l.iterations,
        l.recall_read_only_ms.p50,
        l.recall_after_append_ms.p50,
        l.after_append_ratio,
        l.append_ms.p50,
        l.subjects_read_only_ms.p50,
        l.subjects_after_append_ms.p50,
        l.profile_read_only_ms.p50,
        l.profile_after_append_ms.p50,
        l.forget_ms.p50,
        l.recall_after_forget_ms.p50,
    )
}
