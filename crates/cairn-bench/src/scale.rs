//! Recall at scale (`cairn bench scale`): one space filled with generated one-to-one chat
//! history to 10k, 100k and 1M units, on the embedded store and on PostgreSQL, with
//! planted needles. Measured per (store, size): ingest throughput, disk and memory
//! footprint, the first recall (which loads the vector index, and builds HNSW on the
//! embedded store), recall latency with and without the query's embedding, and the
//! recall@k of the needles.
//!
//! The history is generated deterministically (seeded), so every size holds the same
//! sessions up to its end, and vectors computed for one size are cache hits for the next
//! (and for the other store, through the shared `--cache` file). Each (store, size) is
//! one line of `results.jsonl`, written as soon as it is measured; `--resume` skips the
//! ones done.
use crate::env::shell_join;
use crate::metrics::{percentiles, Percentiles};
use crate::protocol::{arm_stop, check_label, open_memory_in, stopped, utc_stamp, RunMeta};
use crate::report::{f3, machine_section, ms};
use anyhow::{bail, Context as _};
use cairn::{Memory, Message, RecallOptions, Role, SessionInput};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `cairn bench scale` options.
#[derive(Debug, Clone, Args)]
pub struct ScaleBenchArgs {
    /// Sizes to fill the space to, in units (run smallest first).
    #[arg(long, value_delimiter = ',', default_values_t = [10_000, 100_000, 1_000_000])]
    pub sizes: Vec<usize>,
    /// Stores to measure: `embedded` (a fresh data directory per size) and/or a
    /// `postgres://` URL (one space per size in that database). Repeatable.
    #[arg(long = "store", value_name = "STORE", default_values_t = ["embedded".to_string()])]
    pub stores: Vec<String>,
    /// Needles planted through the history; each is asked once.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub needles: usize,
    /// Further recall queries (about the generated topics) timed but not scored.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub extra_queries: usize,
    /// Hits per recall; a needle counts as found when one of them cites its turn.
    #[arg(long, default_value_t = 10, value_name = "K")]
    pub top_k: usize,
    /// Token budget of each recall.
    #[arg(long, default_value_t = 600, value_name = "N")]
    pub token_budget: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 11)]
    pub seed: u64,
    /// Embedding cache for the ingest [default: the shared cache]. Queries always use a
    /// fresh scratch cache, so their embedding is computed and timed.
    #[arg(long, value_name = "FILE")]
    pub cache: Option<PathBuf>,
    /// Name of the run folder [default: scale-<UTC timestamp>].
    #[arg(long, value_name = "L")]
    pub run_label: Option<String>,
    /// Folder of run folders.
    #[arg(long, value_name = "DIR", default_value = "bench-out")]
    pub out: PathBuf,
    /// Continue a run: (store, size) points already in results.jsonl are kept.
    #[arg(long)]
    pub resume: bool,
    /// Keep the embedded data directories and the PostgreSQL spaces after measuring.
    #[arg(long)]
    pub keep_data: bool,
    /// Measure the queries only, against the spaces an earlier `--keep-data` run left
    /// (embedded: this run folder's `data/SIZE`; PostgreSQL: the space `scale-SIZE`), to
    /// try ranking changes at scale without filling the space again. Such points have no
    /// ingest figures (marked `ingest_skipped`).
    #[arg(long)]
    pub queries_only: bool,
    /// Engine settings (a `cairn.toml`) for experiments; recorded in METHODOLOGY.md.
    #[arg(long, value_name = "FILE")]
    pub memory_config: Option<PathBuf>,
}

// ---------------------------------------------------------------------------------------
// The generator

/// Rounds (user turn + reply) per generated session.
const ROUNDS: usize = 8;

struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Self {
        let mut r = Self(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }
    // splitmix64: cheap, and good enough that nearby streams look unrelated.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const PEOPLE: &[&str] = &[
    "my sister",
    "my brother",
    "my manager",
    "my landlord",
    "my dentist",
    "our neighbor",
    "my grandmother",
    "my best friend",
    "my cousin",
    "my yoga teacher",
    "my accountant",
    "my roommate",
    "my mentor",
    "my daughter",
    "my son",
    "my partner",
    "my coworker Sam",
    "my old boss",
    "the babysitter",
    "my piano teacher",
    "my uncle",
    "my aunt",
    "my physical therapist",
    "my tax advisor",
];
const ATTRIBUTES: &[&str] = &[
    "wifi password",
    "locker combination",
    "license plate",
    "anniversary date",
    "favorite restaurant",
    "shoe size",
    "food allergy",
    "flight number",
    "gate code",
    "phone number",
    "birthday",
    "blood type",
    "shirt size",
    "favorite wine",
    "new address",
    "parking spot",
    "library card number",
    "coffee order",
    "dog's name",
    "car model",
];
const PLACES: &[&str] = &[
    "Lisbon",
    "Denver",
    "Kyoto",
    "the lake house",
    "Barcelona",
    "Montreal",
    "the coast",
    "Chicago",
    "Austin",
    "the mountains",
    "Berlin",
    "Vancouver",
    "Porto",
    "Seoul",
    "the farmers market",
    "the office",
    "downtown",
    "the airport",
    "Edinburgh",
    "Oaxaca",
];
const FOODS: &[&str] = &[
    "ramen",
    "sourdough",
    "tacos al pastor",
    "green curry",
    "banana bread",
    "paella",
    "lentil soup",
    "dumplings",
    "pho",
    "shakshuka",
    "risotto",
    "falafel",
    "pancakes",
    "chili",
    "lasagna",
    "poke bowls",
    "biryani",
    "gazpacho",
    "pierogi",
    "miso salmon",
];
const ACTIVITIES: &[&str] = &[
    "running",
    "climbing",
    "swimming",
    "pottery",
    "chess",
    "guitar",
    "cycling",
    "birdwatching",
    "yoga",
    "woodworking",
    "baking",
    "photography",
    "gardening",
    "tennis",
    "knitting",
    "hiking",
    "salsa dancing",
    "journaling",
    "painting",
    "rowing",
];
const THINGS: &[&str] = &[
    "laptop",
    "standing desk",
    "espresso machine",
    "road bike",
    "winter coat",
    "noise-cancelling headphones",
    "air fryer",
    "camera lens",
    "hiking boots",
    "blender",
    "e-reader",
    "tent",
    "office chair",
    "electric kettle",
    "backpack",
    "monitor",
];
const DAYS: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "next week",
    "this weekend",
    "tomorrow",
    "in two weeks",
    "at the end of the month",
];

/// A user turn: one of several everyday templates, slots filled from the lists.
fn user_turn(r: &mut Rng) -> String {
    let n = 2 + r.below(60);
    let (p, a) = (r.pick(PEOPLE), r.pick(ATTRIBUTES));
    let (pl, f, ac) = (r.pick(PLACES), r.pick(FOODS), r.pick(ACTIVITIES));
    let (th, d) = (r.pick(THINGS), r.pick(DAYS));
    match r.below(16) {
        0 => format!("I'm planning a trip to {pl} {d}, any tips on what to pack?"),
        1 => format!("I tried making {f} last night but it came out bland. What went wrong?"),
        2 => format!("I've been doing {ac} for {n} weeks now and I'm hooked."),
        3 => format!("Can you help me pick a new {th}? My budget is about {n}0 dollars."),
        4 => format!("I keep forgetting {p}'s {a}, remind me to ask again {d}."),
        5 => format!("{p} recommended a place for {f} near {pl}."),
        6 => format!("My {th} broke again, this is the {n}th time this year."),
        7 => format!("I want to get better at {ac}. How should I structure practice?"),
        8 => format!("We're hosting dinner {d}; I'm thinking {f} for {n} people."),
        9 => format!("{p} is moving to {pl} {d} and asked me to help."),
        10 => format!("I need to update the {a} on file for {p}."),
        11 => format!("Is {pl} nice in the spring? I have {n} days off."),
        12 => format!("I signed up for a {ac} class that meets every {d}."),
        13 => format!("Should I return the {th} I bought? It's been {n} days."),
        14 => format!("{p} and I argued about {ac} versus {f} for the weekend plans."),
        _ => format!("Remind me {d} to call {p} about the trip to {pl}."),
    }
}

fn assistant_turn(r: &mut Rng) -> String {
    let (pl, f, ac, th) = (
        r.pick(PLACES),
        r.pick(FOODS),
        r.pick(ACTIVITIES),
        r.pick(THINGS),
    );
    match r.below(8) {
        0 => format!("Good question. For {ac}, consistency matters more than intensity: short sessions several times a week, with one rest day, usually work best."),
        1 => format!("A few ideas: check the reviews, compare warranties, and look at last year's {th} models, which are often much cheaper."),
        2 => format!("For {f}, season more than you think, taste as you go, and let it rest before serving."),
        3 => format!("{pl} is lovely then. Book early, pack layers, and leave a free day for wandering."),
        4 => "I'll keep that in mind. Tell me if you want a reminder or a checklist.".to_string(),
        5 => format!("That sounds like a plan. If it helps, I can draft a schedule around {ac} and your work week."),
        6 => format!("Sorry to hear that. Many people in your spot pick a sturdier {th}; the mid-range ones last longest."),
        _ => format!("Happy to help. People who try {f} in {pl} usually recommend the small places away from the center."),
    }
}

/// A planted fact: a (person, attribute) pair that no other turn states, so exactly one
/// turn answers its question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Needle {
    pub index: usize,
    pub session: String,
    pub message: String,
    pub statement: String,
    pub question: String,
}

/// Needle `k` of `n`: its (person, attribute) pair, statement and question.
fn needle_text(k: usize, seed: u64) -> (String, String) {
    let mut r = Rng::new(seed, 0xA11CE + k as u64);
    let (p, a) = needle_pair(k);
    const WORDS: &[&str] = &[
        "marigold", "falcon", "cobalt", "juniper", "harbor", "saffron", "orchid", "tundra",
        "velvet", "quartz", "maple", "comet",
    ];
    let value = format!("{}-{}", r.pick(WORDS), 100 + r.below(9900));
    (
        format!("Oh, before I forget: {p}'s {a} is {value}, please keep it for me."),
        format!("What is {p}'s {a}?"),
    )
}

/// Queries about the generated topics: timed, not scored (many turns answer them).
fn topic_query(k: usize, seed: u64) -> String {
    let mut r = Rng::new(seed, 0xB0B + k as u64);
    match r.below(4) {
        0 => format!(
            "What did I say about {} in {}?",
            r.pick(FOODS),
            r.pick(PLACES)
        ),
        1 => format!("How long have I been doing {}?", r.pick(ACTIVITIES)),
        2 => format!("Which {} did I want to buy?", r.pick(THINGS)),
        _ => format!("When is {} moving?", r.pick(PEOPLE)),
    }
}

/// Whether `text` names both the person and the attribute of a needle, in any
/// phrasing: the filler must not, so exactly one turn is about each needle's pair.
fn is_needle_pair(text: &str, needles: usize) -> bool {
    (0..needles).any(|k| {
        let (p, a) = needle_pair(k);
        text.contains(p) && text.contains(a)
    })
}

/// The (person, attribute) of needle `k`: distinct for every k below 24 x 20.
fn needle_pair(k: usize) -> (&'static str, &'static str) {
    let (q, r) = (k / PEOPLE.len(), k % PEOPLE.len());
    (PEOPLE[r], ATTRIBUTES[(q + r) % ATTRIBUTES.len()])
}

/// Session `i` of the history; `needle` replaces its fourth user turn.
fn session(i: usize, seed: u64, needle: Option<&str>, needles: usize) -> SessionInput {
    let mut r = Rng::new(seed, i as u64);
    let start =
        chrono::DateTime::from_timestamp(1_640_995_200 + i as i64 * 5_400, 0).unwrap_or_default();
    let mut messages = Vec::with_capacity(2 * ROUNDS);
    for round in 0..ROUNDS {
        let mut user = user_turn(&mut r);
        while is_needle_pair(&user, needles) {
            user = user_turn(&mut r);
        }
        if round == 3 {
            if let Some(n) = needle {
                user = n.to_string();
            }
        }
        messages.push(message(2 * round, Role::User, user));
        messages.push(message(
            2 * round + 1,
            Role::Assistant,
            assistant_turn(&mut r),
        ));
    }
    SessionInput {
        id: format!("s{i:07}"),
        occurred_at: Some(start),
        group: None,
        messages,
        metadata: serde_json::Value::Null,
    }
}

fn message(pos: usize, role: Role, text: String) -> Message {
    Message {
        id: pos.to_string(),
        role: Some(role),
        speaker: None,
        text,
        occurred_at: None,
        metadata: serde_json::Value::Null,
    }
}

/// Units one generated session derives into, about: a turn per message, a round per user
/// turn, the session's episode, and (measured) a fact and two profile units. Only plans
/// where needles go: the ingest runs until the size is reached.
const UNITS_PER_SESSION: usize = 3 * ROUNDS + 4;

/// Sessions to generate for `size` units, and where the needles go (spread evenly
/// through the history, the last one before its final tenth).
fn plan(size: usize, needles: usize, seed: u64) -> (usize, Vec<Needle>) {
    // Twice as many sessions as needles keeps every needle in a session of its own.
    let sessions = size.div_ceil(UNITS_PER_SESSION).max(2 * needles.max(1));
    let span = sessions - sessions / 10;
    let planted = (0..needles)
        .map(|k| {
            let at = (k * span) / needles.max(1);
            let (statement, question) = needle_text(k, seed);
            Needle {
                index: k,
                session: format!("s{at:07}"),
                message: "6".into(),
                statement,
                question,
            }
        })
        .collect();
    (sessions, planted)
}

// ---------------------------------------------------------------------------------------
// The run

impl ScaleBenchArgs {
    /// Spaces another run filled are never removed by a queries-only run.
    fn keeps_data(&self) -> bool {
        self.keep_data || self.queries_only
    }
}

/// One store at one size, measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScalePoint {
    /// `embedded` or `postgres`.
    pub store: String,
    pub size: usize,
    pub sessions: usize,
    pub units: usize,
    pub vectors_computed: usize,
    pub vectors_cached: usize,
    /// Every ingest call and the final flush.
    pub ingest_seconds: f64,
    pub ingest_units_per_second: f64,
    /// The data directory, or the growth of the PostgreSQL database during the ingest.
    pub disk_bytes: u64,
    /// Resident memory of the bench process after the ingest and its peak during it.
    pub ingest_rss_bytes: u64,
    pub ingest_peak_rss_bytes: u64,
    /// Reopening the memory for the queries.
    pub open_ms: f64,
    /// The first recall: loads the space's vectors (and builds HNSW on the embedded
    /// store above its threshold). Not among the latencies.
    pub first_recall_ms: f64,
    pub queries: usize,
    /// Wall time of `recall`, the query's embedding computed (never cached).
    pub latency_ms: Percentiles,
    /// The same minus the time spent embedding the query.
    pub latency_without_embedding_ms: Percentiles,
    pub stage_means_ms: BTreeMap<String, f64>,
    /// Resident memory while serving the queries (model, indexes, vectors) and its peak.
    pub serving_rss_bytes: u64,
    pub serving_peak_rss_bytes: u64,
    pub needles: usize,
    pub needles_found: usize,
    pub needle_recall: f64,
    pub missed_needles: Vec<usize>,
    /// Measured with `--queries-only`: the ingest fields are empty.
    #[serde(default)]
    pub ingest_skipped: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleBenchSummary {
    pub meta: RunMeta,
    pub complete: bool,
    pub top_k: usize,
    pub token_budget: usize,
    pub points: Vec<ScalePoint>,
}

/// Store kind of a `--store` value.
fn store_kind(store: &str) -> anyhow::Result<&'static str> {
    if store == "embedded" {
        Ok("embedded")
    } else if store.starts_with("postgres://") || store.starts_with("postgresql://") {
        Ok("postgres")
    } else {
        bail!("--store {store}: expected `embedded` or a postgres:// URL")
    }
}

fn proc_status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Current and peak resident memory of this process, in bytes (0 where unknown).
fn rss() -> (u64, u64) {
    (
        proc_status_kib("VmRSS:") * 1024,
        proc_status_kib("VmHWM:") * 1024,
    )
}

/// Starts a new peak-memory window (Linux: writing 5 to clear_refs resets VmHWM).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn remove_sqlite(file: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

struct Ctx<'a> {
    args: &'a ScaleBenchArgs,
    dir: PathBuf,
    cache: Option<PathBuf>,
}

impl Ctx<'_> {
    fn open(&self, store: &str, size: usize, cache: Option<&Path>) -> anyhow::Result<Memory> {
        let (data_dir, url) = match store_kind(store)? {
            "embedded" => (self.dir.join("data").join(size.to_string()), None),
            _ => (self.dir.join("data").join("postgres-local"), Some(store)),
        };
        std::fs::create_dir_all(&data_dir)?;
        let (m, _, _) = open_memory_in(&data_dir, url, cache, self.args.memory_config.as_deref())?;
        Ok(m)
    }

    fn space(size: usize) -> String {
        format!("scale-{size}")
    }

    /// Fills a fresh space to `size` units; returns the point with its ingest fields.
    fn ingest(&self, store: &str, size: usize, needles: &[Needle]) -> anyhow::Result<ScalePoint> {
        let args = self.args;
        let kind = store_kind(store)?;
        if kind == "embedded" {
            let d = self.dir.join("data").join(size.to_string());
            if d.exists() {
                std::fs::remove_dir_all(&d)?;
            }
        }
        let memory = self.open(store, size, self.cache.as_deref())?;
        let space = Self::space(size);
        memory.forget_space(&space)?;
        let disk_before = if kind == "postgres" {
            memory.disk_bytes()?
        } else {
            0
        };
        let (sessions, _) = plan(size, args.needles, args.seed);
        let by_session: BTreeMap<&str, &str> = needles
            .iter()
            .map(|n| (n.session.as_str(), n.statement.as_str()))
            .collect();
        reset_peak_rss();
        let pb = indicatif::ProgressBar::with_draw_target(
            Some(sessions as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        pb.set_message(format!("{kind} {size}"));
        let mut p = ScalePoint::empty(kind, size, needles.len());
        let t = Instant::now();
        const BATCH: usize = 64;
        let last_needle = needles
            .iter()
            .filter_map(|n| n.session.strip_prefix('s')?.parse::<usize>().ok())
            .max()
            .unwrap_or(0);
        let mut start = 0;
        while p.units < size || start <= last_needle {
            if stopped() {
                bail!("interrupted");
            }
            let batch: Vec<SessionInput> = (start..start + BATCH)
                .map(|i| {
                    let id = format!("s{i:07}");
                    session(
                        i,
                        args.seed,
                        by_session.get(id.as_str()).copied(),
                        args.needles,
                    )
                })
                .collect();
            let r = memory.ingest_sessions(&space, batch)?;
            p.sessions += r.sessions;
            p.units += r.units;
            p.vectors_computed += r.vectors_computed;
            p.vectors_cached += r.vectors_cached;
            pb.inc(r.sessions as u64);
            start += BATCH;
        }
        memory.flush()?;
        pb.finish_and_clear();
        p.ingest_seconds = t.elapsed().as_secs_f64();
        p.ingest_units_per_second = p.units as f64 / p.ingest_seconds.max(1e-9);
        (p.ingest_rss_bytes, p.ingest_peak_rss_bytes) = rss();
        p.disk_bytes = memory.disk_bytes()?.saturating_sub(disk_before);
        Ok(p)
    }

    /// The point of a space filled by an earlier run (`--queries-only`).
    fn kept(&self, store: &str, size: usize, needles: &[Needle]) -> anyhow::Result<ScalePoint> {
        let kind = store_kind(store)?;
        let memory = self.open(store, size, self.cache.as_deref())?;
        let stats = memory.stats(&Self::space(size)).with_context(|| {
            format!("--queries-only: no space of {size} units was kept for {kind} (run with --keep-data first)")
        })?;
        let mut p = ScalePoint::empty(kind, size, needles.len());
        p.units = stats.units;
        p.sessions = stats.sessions;
        p.ingest_skipped = true;
        Ok(p)
    }

    /// Reopens the memory with a scratch embedding cache and times the queries.
    fn query(&self, store: &str, p: &mut ScalePoint, needles: &[Needle]) -> anyhow::Result<()> {
        let args = self.args;
        let scratch = self
            .dir
            .join(format!("query-cache-{}-{}.sqlite3", p.store, p.size));
        remove_sqlite(&scratch);
        reset_peak_rss();
        let t = Instant::now();
        let memory = self.open(store, p.size, Some(&scratch))?;
        p.open_ms = t.elapsed().as_secs_f64() * 1000.0;
        let space = Self::space(p.size);
        let options = RecallOptions {
            top_k: args.top_k,
            token_budget: args.token_budget,
            ..RecallOptions::default()
        };
        let t = Instant::now();
        memory.recall(
            &space,
            "warm up: what did I plan for the weekend?",
            &options,
        )?;
        p.first_recall_ms = t.elapsed().as_secs_f64() * 1000.0;
        let mut with = Vec::new();
        let mut without = Vec::new();
        let mut stages: BTreeMap<String, f64> = BTreeMap::new();
        let extra = (0..args.extra_queries).map(|k| topic_query(k, args.seed));
        let questions: Vec<(Option<&Needle>, String)> = needles
            .iter()
            .map(|n| (Some(n), n.question.clone()))
            .chain(extra.map(|q| (None, q)))
            .collect();
        for (needle, q) in &questions {
            if stopped() {
                bail!("interrupted");
            }
            let t = Instant::now();
            let r = memory.recall(&space, q, &options)?;
            with.push(t.elapsed().as_secs_f64() * 1000.0);
            // Again, now that the query's embedding is in the cache.
            let t = Instant::now();
            memory.recall(&space, q, &options)?;
            without.push(t.elapsed().as_secs_f64() * 1000.0);
            for (k, v) in [
                ("embed", r.timings.embed_ms),
                ("lexical", r.timings.lexical_ms),
                ("dense", r.timings.dense_ms),
                ("rank", r.timings.rank_ms),
                ("pack", r.timings.pack_ms),
            ] {
                *stages.entry(k.into()).or_default() += v / questions.len() as f64;
            }
            if let Some(n) = needle {
                let found = r.hits.iter().take(args.top_k).any(|h| {
                    h.session_id.as_deref() == Some(n.session.as_str())
                        && h.turn_ids.contains(&n.message)
                });
                if found {
                    p.needles_found += 1;
                } else {
                    p.missed_needles.push(n.index);
                }
            }
        }
        (p.serving_rss_bytes, p.serving_peak_rss_bytes) = rss();
        p.queries = questions.len();
        p.latency_ms = percentiles(&with);
        p.latency_without_embedding_ms = percentiles(&without);
        p.stage_means_ms = stages;
        p.needle_recall = p.needles_found as f64 / p.needles.max(1) as f64;
        if !args.keeps_data() && p.store == "postgres" {
            memory.forget_space(&space)?;
        }
        drop(memory);
        remove_sqlite(&scratch);
        if !args.keeps_data() && p.store == "embedded" {
            let _ = std::fs::remove_dir_all(self.dir.join("data").join(p.size.to_string()));
        }
        Ok(())
    }
}

impl ScalePoint {
    fn empty(store: &str, size: usize, needles: usize) -> Self {
        Self {
            store: store.into(),
            size,
            sessions: 0,
            units: 0,
            vectors_computed: 0,
            vectors_cached: 0,
            ingest_seconds: 0.0,
            ingest_units_per_second: 0.0,
            disk_bytes: 0,
            ingest_rss_bytes: 0,
            ingest_peak_rss_bytes: 0,
            open_ms: 0.0,
            first_recall_ms: 0.0,
            queries: 0,
            latency_ms: Percentiles::default(),
            latency_without_embedding_ms: Percentiles::default(),
            stage_means_ms: BTreeMap::new(),
            serving_rss_bytes: 0,
            serving_peak_rss_bytes: 0,
            needles,
            needles_found: 0,
            needle_recall: 0.0,
            missed_needles: Vec::new(),
            ingest_skipped: false,
        }
    }
}

fn read_points(file: &Path) -> anyhow::Result<Vec<ScalePoint>> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Ok(Vec::new());
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("reading {}", file.display())))
        .collect()
}

pub(crate) fn run(args: &ScaleBenchArgs) -> anyhow::Result<()> {
    if args.sizes.is_empty() || args.sizes.contains(&0) || args.needles == 0 || args.top_k == 0 {
        bail!("need at least one size above 0, one needle and top-k above 0");
    }
    if args.needles > PEOPLE.len() * ATTRIBUTES.len() {
        bail!(
            "--needles {}: at most {} (each needle has its own person and attribute)",
            args.needles,
            PEOPLE.len() * ATTRIBUTES.len()
        );
    }
    for s in &args.stores {
        store_kind(s)?;
    }
    let label = match &args.run_label {
        Some(l) => l.clone(),
        None => format!("scale-{}", utc_stamp(chrono::Utc::now())),
    };
    check_label(&label)?;
    let dir = args.out.join(&label);
    let results = dir.join("results.jsonl");
    if results.exists() && !args.resume {
        bail!(
            "{} already holds results: pass --resume or another --run-label",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut points = read_points(&results)?;
    let resumed_points = points.len();
    let cache = args
        .cache
        .clone()
        .or_else(crate::env::default_embedding_cache);
    let ctx = Ctx {
        args,
        dir: dir.clone(),
        cache: cache.clone(),
    };
    let mut sizes = args.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    arm_stop();
    let mut meta = None;
    for store in &args.stores {
        let kind = store_kind(store)?;
        if kind == "postgres" {
            Memory::migrate_postgres(store).map_err(|e| anyhow::anyhow!("migrating {e}"))?;
        }
        for &size in &sizes {
            if meta.is_none() {
                let m = ctx.open(store, size, cache.as_deref())?;
                meta = Some(run_meta(args, &dir, &m, cache.as_deref()));
            }
            if points.iter().any(|p| p.store == kind && p.size == size) {
                continue;
            }
            let (_, needles) = plan(size, args.needles, args.seed);
            eprintln!("scale: {kind}, {size} units");
            let mut p = if args.queries_only {
                ctx.kept(store, size, &needles)?
            } else {
                ctx.ingest(store, size, &needles)?
            };
            ctx.query(store, &mut p, &needles)?;
            eprintln!("{}", point_line(&p));
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&results)?;
            writeln!(f, "{}", serde_json::to_string(&p)?)?;
            points.push(p);
            if stopped() {
                break;
            }
        }
    }
    if !args.keeps_data() {
        let _ = std::fs::remove_dir_all(dir.join("data"));
    }
    let Some(mut meta) = meta else {
        bail!("nothing to run");
    };
    // A resumed run lists the invocations that measured its earlier points.
    if let Ok(prev) = std::fs::read_to_string(dir.join("summary.json")) {
        if let Ok(prev) = serde_json::from_str::<ScaleBenchSummary>(&prev) {
            meta.previous_command_lines = prev.meta.previous_command_lines;
            meta.previous_command_lines.push(prev.meta.command_line);
            meta.started_at = prev.meta.started_at;
            // The build that measured the points is what the record must name.
            if points.len() == resumed_points {
                meta.git_sha = prev.meta.git_sha;
                meta.build_time = prev.meta.build_time;
            } else if prev.meta.git_sha != meta.git_sha {
                meta.git_sha = format!("{} (earlier points: {})", meta.git_sha, prev.meta.git_sha);
            }
        }
    }
    meta.finished_at = Some(chrono::Utc::now());
    let summary = ScaleBenchSummary {
        meta,
        complete: !stopped(),
        top_k: args.top_k,
        token_budget: args.token_budget,
        points,
    };
    std::fs::write(
        dir.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    std::fs::write(dir.join("summary.md"), render_summary(&summary))?;
    std::fs::write(dir.join("METHODOLOGY.md"), render_methodology(&summary))?;
    std::fs::write(dir.join("latency.svg"), render_plot(&summary.points))?;
    eprintln!("wrote {}", dir.display());
    Ok(())
}

fn run_meta(args: &ScaleBenchArgs, dir: &Path, m: &Memory, cache: Option<&Path>) -> RunMeta {
    let settings =
        serde_json::json!({"engine": "see memory_config", "memory_config": args.memory_config});
    let mut meta = RunMeta::new("scale", dir, m, cache, settings);
    meta.keep_data = args.keep_data;
    meta.questions_in_file = args.needles + args.extra_queries;
    meta.questions_selected = meta.questions_in_file;
    meta.dataset_notes = vec![format!(
        "Generated (seed {}): one-to-one chat sessions of {ROUNDS} rounds (user turn + assistant reply), {UNITS_PER_SESSION} units each (about: the ingest runs until the size is reached); {} needles, {} topic queries.",
        args.seed, args.needles, args.extra_queries
    )];
    meta.limitations = vec![
        "Generated text from templates: its vocabulary is narrower than real chat, which makes lexical and dense neighbours denser than in real data (harder for needles, easier for caches).".into(),
        "Stores are measured one after the other on one machine; PostgreSQL runs on the same 2 cores as the bench.".into(),
    ];
    meta
}

fn gib(b: u64) -> String {
    let mib = b as f64 / (1024.0 * 1024.0);
    if mib < 1024.0 {
        format!("{mib:.0} MiB")
    } else {
        format!("{:.2} GiB", mib / 1024.0)
    }
}

fn point_line(p: &ScalePoint) -> String {
    format!(
        "{} {}: {} units in {} s ({} units/s, {} vectors computed); recall p50 {} / p95 {} / p99 {} ms (without embedding p50 {}); needles {}/{}; disk {}, serving RSS {}",
        p.store,
        p.size,
        p.units,
        ingest_figure(p, p.ingest_seconds),
        ingest_figure(p, p.ingest_units_per_second),
        p.vectors_computed,
        ms(p.latency_ms.p50),
        ms(p.latency_ms.p95),
        ms(p.latency_ms.p99),
        ms(p.latency_without_embedding_ms.p50),
        p.needles_found,
        p.needles,
        gib(p.disk_bytes),
        gib(p.serving_rss_bytes),
    )
}

/// An ingest figure of the summary table; "kept" for a space filled by an earlier run.
fn ingest_figure(p: &ScalePoint, v: f64) -> String {
    if p.ingest_skipped {
        "kept".into()
    } else {
        format!("{v:.0}")
    }
}

pub fn render_summary(s: &ScaleBenchSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Scale: {}\n", s.meta.run_label);
    if !s.complete {
        let _ = writeln!(
            o,
            "**Interrupted: the points below are the ones measured.**\n"
        );
    }
    let _ = writeln!(
        o,
        "| store | units | sessions | ingest s | units/s | vectors computed / cached | disk | first recall ms | p50 ms | p95 ms | p99 ms | p50 w/o embed | p99 w/o embed | needle recall@{} | serving RSS | peak RSS (ingest / serving) |",
        s.top_k
    );
    let _ = writeln!(
        o,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for p in &s.points {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} | {} | {} | {} | {} ({}/{}) | {} | {} / {} |",
            p.store,
            p.units,
            p.sessions,
            ingest_figure(p, p.ingest_seconds),
            ingest_figure(p, p.ingest_units_per_second),
            p.vectors_computed,
            p.vectors_cached,
            gib(p.disk_bytes),
            ms(p.first_recall_ms),
            ms(p.latency_ms.p50),
            ms(p.latency_ms.p95),
            ms(p.latency_ms.p99),
            ms(p.latency_without_embedding_ms.p50),
            ms(p.latency_without_embedding_ms.p99),
            f3(p.needle_recall),
            p.needles_found,
            p.needles,
            gib(p.serving_rss_bytes),
            gib(p.ingest_peak_rss_bytes),
            gib(p.serving_peak_rss_bytes),
        );
    }
    let _ = writeln!(o, "\nMean time per recall stage (ms):\n");
    let _ = writeln!(
        o,
        "| store | units | embed | lexical | dense | rank | pack |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|");
    for p in &s.points {
        let st = |k: &str| ms(p.stage_means_ms.get(k).copied().unwrap_or(0.0));
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} |",
            p.store,
            p.units,
            st("embed"),
            st("lexical"),
            st("dense"),
            st("rank"),
            st("pack")
        );
    }
    o
}

pub fn render_methodology(s: &ScaleBenchSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Methodology: {}\n", s.meta.run_label);
    let _ = writeln!(
        o,
        "What was measured, per store and size (`cairn bench scale`):\n\n\
- **Data.** {} The sessions are ingested 64 at a time into one space (`scale-<size>`) until the size is reached; a session's content depends only on its index, so every size holds the same history up to its end. Each needle replaces the fourth user turn of a session spread evenly through the first nine tenths of the history; its (person, attribute) pair is stated by no other turn, while both words occur in thousands of other turns.\n\
- **Ingest.** Wall time of every `ingest_sessions` call plus the final flush. Vectors come from the embedding cache `{}` where an earlier run computed them: the table gives vectors computed and cached, so a cached ingest is not mistaken for a cold one. A point marked \"kept\" was measured with `--queries-only` on a space an earlier run filled (no ingest figures).\n\
- **Disk.** Embedded: the data directory (the embedding cache is elsewhere). PostgreSQL: growth of `pg_database_size` during the ingest.\n\
- **Memory.** Resident memory (`VmRSS`) of the bench process after the ingest and after the queries, and the peak (`VmHWM`, reset before each phase). The process holds the embedding model (about 0.1 GB) and, on the embedded store, every index. PostgreSQL's own processes are not included.\n\
- **Queries.** The memory is reopened with an empty scratch embedding cache, so every query's embedding is computed and timed. The first recall (loading the vectors; building HNSW on the embedded store above 50k vectors) is reported apart and not counted. Then each needle's question and each topic query is recalled, in order: `top_k` {}, `token_budget` {}, raw format, no filters. Latency is the wall time of `Memory::recall`. \"Without embedding\" is a second recall of the same query right after, its embedding now cached (the engine computes the query's embedding while it searches the lexical index, so subtracting `embed_ms` would not measure it). Percentiles are nearest-rank.\n\
- **Needle recall@k.** A needle is found when one of the first k hits cites its session and turn (a turn or a round containing it).",
        s.meta.dataset_notes.join(" "),
        s.meta.embedding_cache.as_deref().unwrap_or("-"),
        s.top_k,
        s.token_budget
    );
    let _ = writeln!(o, "\n## Limitations\n");
    for l in &s.meta.limitations {
        let _ = writeln!(o, "- {l}");
    }
    machine_section(&mut o, &s.meta);
    let _ = writeln!(
        o,
        "- cairn {} (git {}), embedding model `{}` ({} dimensions)",
        s.meta.cairn_version, s.meta.git_sha, s.meta.embedding_model, s.meta.embedding_dim,
    );
    for c in &s.meta.previous_command_lines {
        let _ = writeln!(o, "- earlier points measured by: `{}`", shell_join(c));
    }
    o
}

/// Latency (p50 and p99, query embedding included) against units, log-log, one line per
/// store and percentile.
pub fn render_plot(points: &[ScalePoint]) -> String {
    let (w, h, l, r, t, b) = (720.0, 440.0, 70.0, 170.0, 30.0, 60.0);
    let (pw, ph) = (w - l - r, h - t - b);
    let xs: Vec<f64> = points
        .iter()
        .map(|p| (p.units.max(1) as f64).log10())
        .collect();
    let ys: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.latency_ms.p50, p.latency_ms.p99])
        .map(|v| v.max(0.1).log10())
        .collect();
    let (x0, x1) = (
        xs.iter()
            .cloned()
            .fold(f64::INFINITY, f64::min)
            .floor()
            .min(4.0),
        // 1,000,079 units is 10^6.00003: its decade, not the next one.
        (xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max) - 0.01)
            .ceil()
            .max(5.0),
    );
    let (y0, y1) = (
        ys.iter()
            .cloned()
            .fold(f64::INFINITY, f64::min)
            .floor()
            .min(0.0),
        ys.iter()
            .cloned()
            .fold(f64::NEG_INFINITY, f64::max)
            .ceil()
            .max(2.0),
    );
    let px = |x: f64| l + (x - x0) / (x1 - x0) * pw;
    let py = |y: f64| t + ph - (y - y0) / (y1 - y0) * ph;
    let mut o = format!("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n");
    let _ = writeln!(o, "<text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">Recall latency (query embedding included) against space size</text>", l + pw / 2.0);
    for e in (x0 as i32)..=(x1 as i32) {
        let x = px(e as f64);
        let _ = writeln!(o, "<line x1=\"{x}\" y1=\"{t}\" x2=\"{x}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">1e{e}</text>", t + ph, t + ph + 18.0);
    }
    for e in (y0 as i32)..=(y1 as i32) {
        let y = py(e as f64);
        let _ = writeln!(o, "<line x1=\"{l}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{} ms</text>", l + pw, l - 6.0, y + 4.0, 10f64.powi(e));
    }
    let _ = writeln!(
        o,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">units in the space (log)</text>",
        l + pw / 2.0,
        h - 15.0
    );
    let mut series: BTreeMap<(String, &str), Vec<(f64, f64)>> = BTreeMap::new();
    for p in points {
        let x = (p.units.max(1) as f64).log10();
        for (name, v) in [("p50", p.latency_ms.p50), ("p99", p.latency_ms.p99)] {
            series
                .entry((p.store.clone(), name))
                .or_default()
                .push((x, v.max(0.1).log10()));
        }
    }
    for (i, ((store, pct), mut pts)) in series.into_iter().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = if store == "embedded" {
            "#1f77b4"
        } else {
            "#d62728"
        };
        let dash = if pct == "p99" {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let _ = writeln!(
            o,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            path.join(" ")
        );
        for (x, y) in &pts {
            let _ = writeln!(
                o,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                px(*x),
                py(*y)
            );
        }
        let ly = t + 20.0 + i as f64 * 20.0;
        let _ = writeln!(o, "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/><text x=\"{}\" y=\"{}\">{store} {pct}</text>", l + pw + 15.0, l + pw + 45.0, l + pw + 52.0, ly + 4.0);
    }
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needles_are_planted_once_and_filler_never_states_their_pair() {
        let (sessions, needles) = plan(10_000, 20, 3);
        assert_eq!(sessions, 358);
        let (_, few) = plan(100, 20, 3);
        let distinct: std::collections::HashSet<_> = few.iter().map(|n| &n.session).collect();
        assert_eq!(distinct.len(), 20, "needles must not share a session");
        let mut seen = std::collections::HashSet::new();
        for n in &needles {
            assert!(
                seen.insert(n.session.clone()),
                "two needles in {}",
                n.session
            );
            let i: usize = n.session[1..].parse().unwrap();
            let s = session(i, 3, Some(&n.statement), 20);
            assert_eq!(s.messages[6].text, n.statement);
        }
        for i in 0..sessions {
            let s = session(i, 3, None, 20);
            assert!(s.messages.iter().all(|m| !is_needle_pair(&m.text, 20)));
        }
    }

    #[test]
    fn needle_pairs_are_distinct() {
        let n = PEOPLE.len() * ATTRIBUTES.len();
        let pairs: std::collections::HashSet<_> = (0..n).map(needle_pair).collect();
        assert_eq!(pairs.len(), n);
    }

    #[test]
    fn generation_is_deterministic_per_session() {
        assert_eq!(session(17, 5, None, 10), session(17, 5, None, 10));
        assert_ne!(
            session(17, 5, None, 10).messages,
            session(18, 5, None, 10).messages
        );
    }

    #[test]
    fn store_values_are_checked() {
        assert_eq!(store_kind("embedded").unwrap(), "embedded");
        assert_eq!(store_kind("postgres://u@h/db").unwrap(), "postgres");
        assert!(store_kind("mysql://x").is_err());
    }

    #[test]
    fn the_plot_draws_a_line_per_store_and_percentile() {
        let mut a = ScalePoint::empty("embedded", 10_000, 1);
        a.units = 10_000;
        a.latency_ms.p50 = 8.0;
        a.latency_ms.p99 = 30.0;
        let mut b = a.clone();
        b.units = 100_000;
        let mut c = a.clone();
        c.store = "postgres".into();
        let svg = render_plot(&[a, b, c]);
        assert_eq!(svg.matches("<polyline").count(), 4);
        assert!(svg.contains("postgres p99"));
    }
}
