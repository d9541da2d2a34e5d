//! Fuzz targets: every parser of outside input, as `fn(&[u8])`. The same functions are the
//! bodies of the libFuzzer targets in `fuzz/` (cargo-fuzz) and of the stable, dependency-free
//! mutation fuzzer below (`cairn reliability fuzz`), which runs in CI briefly and for as
//! long as asked as the long form. A target must never panic: bad input is an error value.
use anyhow::{bail, Result};
use serde::Serialize;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Fields the server's filters know (`cairn-server` `ops::FILTER_FIELDS`); any other
/// name is read under `metadata`.
const FILTER_FIELDS: &[&str] = &[
    "session_id",
    "group",
    "occurred_at",
    "recorded_at",
    "metadata",
];

/// A target: its name, what it exercises, and its seed inputs.
pub struct Target {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(&[u8]),
    pub seeds: &'static [&'static str],
}

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

fn json(data: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(data).ok()
}

thread_local! {
    static SCRATCH: PathBuf = {
        let dir = std::env::temp_dir().join(format!("cairn-fuzz-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        dir.join(format!("{:?}", std::thread::current().id()).replace(['(', ')'], ""))
    };
}

/// Writes `data` to this thread's scratch file and hands its path to a file loader (the
/// loaders read paths: plain or gzip, which is part of what they parse).
fn with_file<T>(data: &[u8], f: impl FnOnce(&Path) -> T) -> T {
    SCRATCH.with(|p| {
        let mut file = std::fs::File::create(p).expect("fuzz scratch file");
        file.write_all(data).expect("fuzz scratch write");
        drop(file);
        f(p)
    })
}

fn session(data: &[u8]) {
    if let Some(t) = text(data) {
        for (i, line) in t.lines().enumerate() {
            let _ = cairn_formats::parse_session_line(i + 1, line);
        }
    }
    if let Ok(s) = serde_json::from_slice::<cairn_core::SessionInput>(data) {
        let _ = s.validate();
    }
}

fn group_message(data: &[u8]) {
    if let Ok(ms) = serde_json::from_slice::<Vec<cairn_core::GroupMessage>>(data) {
        for (i, m) in ms.iter().enumerate() {
            let _ = m.validate(i);
            let _ = m.session_id();
        }
        for s in cairn_core::group::day_sessions(ms) {
            let _ = s.validate();
        }
    } else if let Ok(m) = serde_json::from_slice::<cairn_core::GroupMessage>(data) {
        if m.validate(0).is_ok() {
            for s in cairn_core::group::day_sessions(vec![m]) {
                let _ = s.validate();
            }
        }
    }
    let _ = with_file(data, |p| cairn_formats::read_group_messages_jsonl(p));
}

fn trajectory(data: &[u8]) {
    if let Ok(t) = serde_json::from_slice::<cairn_core::TrajectoryInput>(data) {
        if let Ok(t) = t.validate() {
            let _ = t.succeeded();
            let _ = t.summary(chrono::DateTime::UNIX_EPOCH);
        }
    }
    let _ = with_file(data, |p| cairn_formats::read_trajectories_jsonl(p));
}

fn longmemeval(data: &[u8]) {
    if let Some(v) = json(data) {
        if let Ok(q) = cairn_formats::LmeQuestion::from_json(&v, 0) {
            let _ = q.check();
            let _ = q.question_time();
            let _ = q.sessions();
            let _ = q.evidence_turns();
        }
    }
    let _ = with_file(data, |p| cairn_formats::load_longmemeval(p));
}

fn locomo(data: &[u8]) {
    if let Some(v) = json(data) {
        if let Ok(s) = cairn_formats::LocomoSample::from_json(&v, 0) {
            let _ = s.sessions_input();
            let _ = s.dangling_evidence();
        }
    }
    let _ = with_file(data, |p| cairn_formats::load_locomo(p));
}

fn evermembench(data: &[u8]) {
    let _ = with_file(data, |p| cairn_formats::load_evermem_dialogue(p));
    if let Ok(qs) = with_file(data, |p| cairn_formats::load_evermem_qa(p)) {
        for q in qs {
            let _ = (q.category(), q.major());
        }
    }
}

fn friendsqa(data: &[u8]) {
    if let Ok(scenes) = with_file(data, |p| cairn_formats::load_friendsqa(p)) {
        let _ = cairn_formats::friendsqa_group_days(&scenes);
    }
}

fn timestamp(data: &[u8]) {
    if let Some(t) = text(data) {
        let _ = cairn_core::time::parse_timestamp(t);
    }
}

fn relative_time(data: &[u8]) {
    if let Some(t) = text(data) {
        let now = chrono::DateTime::parse_from_rfc3339("2024-06-15T12:00:00Z")
            .expect("fixed time")
            .with_timezone(&chrono::Utc);
        let _ = cairn::analyze_query(t, now);
    }
}

fn recall_options(data: &[u8]) {
    if let Ok(o) = serde_json::from_slice::<cairn_core::RecallOptions>(data) {
        let _ = o.validate();
    }
}

fn filter(data: &[u8]) {
    if let Some(v) = json(data) {
        if let Ok(f) = cairn_core::Filter::parse(&v, FILTER_FIELDS) {
            let doc = serde_json::json!({
                "session_id": "s1", "group": "g", "occurred_at": "2024-01-01T00:00:00Z",
                "recorded_at": "2024-01-02T00:00:00Z", "metadata": {"a": 1, "b": ["x", "y"], "c": {"d": true}}
            });
            let _ = f.matches(&doc);
        }
    }
}

/// Every target. Seeds are valid (and a few nearly valid) inputs the mutator starts from.
pub const TARGETS: &[Target] = &[
    Target {
        name: "session_json",
        about: "SessionInput JSON / JSONL lines + validate",
        run: session,
        seeds: &[
            r#"{"id":"s1","date":"2024-01-05 10:00","messages":[{"role":"user","text":"I moved to Oslo."},{"role":"assistant","text":"Nice."}],"metadata":{"k":1}}"#,
            r#"{"id":"s2","group":"g","messages":[{"speaker":"Ann","text":"hi","time":"2024-02-01T10:00:00Z","id":"m1"}]}"#,
        ],
    },
    Target {
        name: "group_message",
        about: "GroupMessage JSON (single, array, JSONL file) + validate + day sessions",
        run: group_message,
        seeds: &[
            r#"[{"speaker":"Maya","group":"Atlas","time":"2025-03-03 09:00","text":"The budget is $120,000."},{"speaker":"Tom","group":"Atlas","time":"2025-03-03 09:05","text":"ok","id":"x"}]"#,
            r#"{"speaker":"Maya","group":"Atlas","timestamp":"2025-03-03","dialogue":"hi","metadata":{}}"#,
        ],
    },
    Target {
        name: "trajectory",
        about: "TrajectoryInput JSON + validate, trajectory JSONL loader",
        run: trajectory,
        seeds: &[
            r#"{"id":"t1","domain":"shop","goal":"buy a kettle","start_url":"http://a/","outcome":true,"states":[{"url":"http://a/","action":"click [3]","thought":"find it","accessibility_tree":"[1] link 'Kettles'\n[3] button 'Buy'"}]}"#,
        ],
    },
    Target {
        name: "longmemeval",
        about: "LongMemEval question records and file loader",
        run: longmemeval,
        seeds: &[
            r#"[{"question_id":"q1","question_type":"single-session-user","question":"Where do I live?","answer":"Oslo","question_date":"2023/05/30 (Tue) 23:40","haystack_session_ids":["a"],"haystack_dates":["2023/05/20 (Sat) 02:21"],"haystack_sessions":[[{"role":"user","content":"I live in Oslo.","has_answer":true},{"role":"assistant","content":"Nice."}]],"answer_session_ids":["a"]}]"#,
        ],
    },
    Target {
        name: "locomo",
        about: "LoCoMo samples and file loader",
        run: locomo,
        seeds: &[
            r#"[{"sample_id":"conv-1","conversation":{"speaker_a":"Ann","speaker_b":"Bob","session_1_date_time":"1:56 pm on 8 May, 2023","session_1":[{"speaker":"Ann","dia_id":"D1:1","text":"I adopted a dog."},{"speaker":"Bob","dia_id":"D1:2","text":"Cool!"}]},"qa":[{"question":"What did Ann adopt?","answer":"a dog","evidence":["D1:1"],"category":1}]}]"#,
        ],
    },
    Target {
        name: "evermembench",
        about: "EverMemBench dialogue and QA files",
        run: evermembench,
        seeds: &[
            r#"{"dialogues":{"2025-01-06":{"Group 1":[{"speaker":"Ann","time":"2025-01-06 09:00","dialogue":"Budget is 10k."}]}}}"#,
            r#"{"qars":[{"id":"F_SH_Top004_001","Q":"What is the budget?","A":"B","options":{"A":"5k","B":"10k"}}]}"#,
        ],
    },
    Target {
        name: "friendsqa",
        about: "FriendsQA file loader + mapping onto group days",
        run: friendsqa,
        seeds: &[
            r#"{"data":[{"title":"s01_e01_c01","paragraphs":[{"utterances:":[{"utterance":"Hi Ross.","speakers":["Monica Geller"],"uid":"s01_e01_c01_u001"}],"qas":[{"question":"Who says hi?","id":"q1","answers":[{"answer_text":"Monica","utterance_id":0,"answer_start":0,"answer_end":0,"is_speaker":true}]}]}]}]}"#,
        ],
    },
    Target {
        name: "timestamp",
        about: "parse_timestamp (every accepted date shape)",
        run: timestamp,
        seeds: &[
            "2024-01-05 10:00",
            "2023/05/20 (Sat) 02:21",
            "1:56 pm on 8 May, 2023",
            "2024-02-01T10:00:00+02:00",
            "2024-13-45",
        ],
    },
    Target {
        name: "relative_time",
        about: "analyze_query: content words and relative time expressions",
        run: relative_time,
        seeds: &[
            "What did I buy three days ago?",
            "where was I last week",
            "what happened in May 2023 or the weekend before last",
            "2 months ago on a Tuesday",
        ],
    },
    Target {
        name: "recall_options",
        about: "RecallOptions JSON + validate",
        run: recall_options,
        seeds: &[
            r#"{"top_k":5,"token_budget":600,"format":"raw","as_of":"2024-01-01T00:00:00Z","sessions":["a"],"kinds":["round","fact"],"quotas":{"note":2}}"#,
        ],
    },
    Target {
        name: "filter",
        about: "filter expressions (parse + match)",
        run: filter,
        seeds: &[
            r#"{"and":[{"field":"group","op":"eq","value":"g"},{"not":{"field":"a","op":"in","value":[1,2]}}]}"#,
            r#"{"or":[{"field":"occurred_at","op":"gte","value":"2024-01-01"},{"field":"b","op":"contains","value":"x"}]}"#,
        ],
    },
];

pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// Small deterministic generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(pub u64);
impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo).max(1)
    }
}

/// Tokens worth splicing into JSON and text: structure, edge numbers, odd unicode.
const DICT: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\"",
    "\\",
    "\\u0000",
    "\\ud800",
    "null",
    "true",
    "false",
    "-1",
    "0",
    "1e309",
    "18446744073709551616",
    "-9223372036854775809",
    "1.5",
    "\"\"",
    "\u{0}",
    "\u{7f}",
    "\u{feff}",
    "\u{202e}",
    "é",
    "日本",
    "😀",
    "\n",
    "\r\n",
    "\t",
    "\"id\":",
    "\"messages\":",
    "\"role\":\"user\"",
    "\"text\":",
    "\"time\":",
    "\"date\":",
    "\"speaker\":",
    "\"group\":",
    "\"states\":",
    "\"op\":",
    "\"field\":",
    "\"value\":",
    "\"and\":",
    "\"or\":",
    "\"not\":",
    "\"top_k\":",
    "\"as_of\":",
    "\"since\":",
    "\"quotas\":",
    "2024-02-30",
    "0000-01-01",
    "9999-12-31 23:59",
    "+99999",
    "T25:61",
    "ago",
    "last",
    "yesterday",
    "weeks",
    "May",
    "Tuesday",
    "before",
    "../",
    "%2e%2e",
    "$where",
    "' OR 1=1 --",
];

/// One mutation of `input`: byte flips, inserts, deletes, dictionary splices, duplication,
/// or a crossover with another corpus entry.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], max_len: usize) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = rng.next_u64() as u8;
            }
            2 => {
                let i = rng.below(len + 1);
                out.insert(i, rng.next_u64() as u8);
            }
            3 if len > 0 => {
                let i = rng.below(len);
                let n = 1 + rng.below((len - i).min(16));
                out.drain(i..i + n);
            }
            4 | 5 => {
                let i = rng.below(len + 1);
                let tok = DICT[rng.below(DICT.len())].as_bytes();
                out.splice(i..i, tok.iter().copied());
            }
            6 if len > 1 => {
                let a = rng.below(len);
                let b = a + rng.below(len - a);
                let chunk = out[a..=b.min(len - 1)].to_vec();
                let i = rng.below(len + 1);
                out.splice(i..i, chunk);
            }
            7 if !other.is_empty() => {
                let cut = rng.below(len + 1);
                let from = rng.below(other.len());
                out.truncate(cut);
                out.extend_from_slice(&other[from..]);
            }
            _ => {
                // Nest: wrap in brackets (deep nesting is a classic parser crash).
                let depth = 1 + rng.below(64);
                let mut v = Vec::with_capacity(out.len() + depth * 2);
                v.extend(std::iter::repeat_n(b'[', depth));
                v.extend_from_slice(&out);
                v.extend(std::iter::repeat_n(b']', depth));
                out = v;
            }
        }
    }
    out.truncate(max_len);
    out
}

#[derive(Debug, Clone, Serialize)]
pub struct FuzzReport {
    pub target: String,
    pub seconds: f64,
    pub executions: u64,
    pub corpus: usize,
    /// Inputs that panicked (saved under `crashes/` when a directory is given).
    pub crashes: usize,
    pub crash_files: Vec<String>,
}

/// Runs one target for `duration` (or `max_runs`), mutating its seeds and any regression
/// inputs in `corpus_dir/<target>/`. Inputs that panic are written to
/// `crash_dir/<target>-<n>.bin`. Deterministic for a seed (apart from the time bound).
pub fn run(
    t: &Target,
    duration: Duration,
    max_runs: u64,
    seed: u64,
    corpus_dir: Option<&Path>,
    crash_dir: Option<&Path>,
) -> Result<FuzzReport> {
    let mut corpus: Vec<Vec<u8>> = t.seeds.iter().map(|s| s.as_bytes().to_vec()).collect();
    if let Some(dir) = corpus_dir.map(|d| d.join(t.name)) {
        if dir.is_dir() {
            let mut files: Vec<_> = std::fs::read_dir(&dir)?
                .flatten()
                .map(|e| e.path())
                .collect();
            files.sort();
            for f in files {
                corpus.push(std::fs::read(f)?);
            }
        }
    }
    // Quiet the default hook: a panic is a finding, reported below, not noise.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed
        ^ t.name
            .bytes()
            .fold(0u64, |h, b| h.wrapping_mul(31) ^ b as u64));
    let start = Instant::now();
    let mut runs = 0u64;
    let mut crash_files = Vec::new();
    let mut crashes = 0;
    // Every corpus entry as is first (regressions), then mutations.
    let mut pending: Vec<Vec<u8>> = corpus.clone();
    loop {
        if runs >= max_runs || (runs.is_multiple_of(64) && start.elapsed() >= duration) {
            break;
        }
        let input = match pending.pop() {
            Some(i) => i,
            None => {
                let a = &corpus[rng.below(corpus.len())];
                let b = &corpus[rng.below(corpus.len())];
                mutate(&mut rng, a, b, 64 << 10)
            }
        };
        runs += 1;
        if catch_unwind(AssertUnwindSafe(|| (t.run)(&input))).is_err() {
            crashes += 1;
            if let Some(dir) = crash_dir {
                std::fs::create_dir_all(dir)?;
                let p = dir.join(format!("{}-{crashes}.bin", t.name));
                std::fs::write(&p, &input)?;
                crash_files.push(p.display().to_string());
            }
        } else if rng.below(256) == 0 && corpus.len() < 4096 {
            // Keep some mutants as parents: walks further from the seeds.
            corpus.push(input);
        }
    }
    std::panic::set_hook(hook);
    let report = FuzzReport {
        target: t.name.to_string(),
        seconds: start.elapsed().as_secs_f64(),
        executions: runs,
        corpus: corpus.len(),
        crashes,
        crash_files,
    };
    if crashes > 0 {
        bail!(
            "fuzz target {} panicked on {crashes} input(s): {:?}",
            t.name,
            report.crash_files
        );
    }
    Ok(report)
}
