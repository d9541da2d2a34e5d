//! Backup: `cairn export` of every space, `cairn import` into a fresh data directory, and
//! the same queries against both must give identical recall results (hit unit ids, their
//! order, and the packed context).
use crate::corpus;
use crate::fuzz::Rng;
use crate::serve::Cairn;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;

#[derive(Debug, Clone, Default, Serialize)]
pub struct BackupReport {
    pub spaces: usize,
    pub exported_lines: usize,
    pub queries: usize,
    pub identical: usize,
    pub differences: Vec<String>,
    /// The exports of the original and of the restored store are byte-identical.
    pub exports_identical: bool,
}

impl BackupReport {
    pub fn passed(&self) -> bool {
        self.identical == self.queries && self.differences.is_empty() && self.exports_identical
    }
}

fn write_lines(path: &Path, lines: &[Value]) -> Result<()> {
    let mut f = std::fs::File::create(path)?;
    for l in lines {
        writeln!(f, "{l}")?;
    }
    Ok(())
}

fn recall_all(cairn: &Cairn, queries: &[(String, String, Value)]) -> Result<Vec<Value>> {
    let server = cairn.serve(&[])?;
    let mut out = Vec::new();
    for (space, q, extra) in queries {
        let mut body = json!({"query": q, "top_k": 8, "token_budget": 500});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        let r = server
            .client
            .post(&format!("/v1/spaces/{space}/recall"), &body)
            .map_err(anyhow::Error::msg)?;
        if r.status != 200 {
            bail!("recall {q:?}: {} {}", r.status, r.text);
        }
        let hits: Vec<Value> = r.body["hits"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|h| {
                json!([
                    h["unit_id"],
                    h["session_id"],
                    h["turn_ids"],
                    h["occurred_at"]
                ])
            })
            .collect();
        out.push(json!({"hits": hits, "context": r.body["context"], "units": r.body["context_unit_ids"]}));
    }
    server.stop()?;
    Ok(out)
}

/// Builds a store under `work/original` (sessions, group chat, trajectories in two spaces),
/// exports it, imports into `work/restored`, and compares recall.
pub fn run(bin: &Path, work: &Path, sessions: usize, seed: u64) -> Result<BackupReport> {
    let original = Cairn::new(bin, work.join("original"));
    let restored = Cairn::new(bin, work.join("restored"));
    let mut rng = Rng(seed);
    let mut questions = Vec::new();
    let spaces = ["alpha", "beta"];
    for space in spaces {
        ingest_sessions(&original, work, space, sessions, &mut rng, &mut questions)?;
        ingest_group(&original, work, space, sessions, &mut rng)?;
        ingest_trajectory(&original, work, space)?;
        for (q, extra) in [
            ("Which crate leaves for Oslo tomorrow?", json!({})),
            ("What is the kayak insured for?", json!({"format": "raw"})),
            (
                "why did buying the kettle fail",
                json!({"kinds": ["note", "event", "slice"]}),
            ),
            ("parcels shipped in March", json!({"as_of": "2024-12-31"})),
            ("team update", json!({"groups": ["crew"], "top_k": 3})),
        ] {
            questions.push((space.to_string(), q.to_string(), extra));
        }
    }
    let mut report = BackupReport {
        spaces: spaces.len(),
        queries: questions.len(),
        ..Default::default()
    };
    let mut exports = Vec::new();
    for space in spaces {
        let f = work.join(format!("{space}.export.jsonl"));
        original.run(&[
            "export",
            "--space",
            space,
            "-o",
            f.to_str().context("path")?,
        ])?;
        report.exported_lines += std::fs::read_to_string(&f)?.lines().count();
        restored.run(&["import", f.to_str().context("path")?])?;
        exports.push(f);
    }
    let a = recall_all(&original, &questions)?;
    let b = recall_all(&restored, &questions)?;
    for ((q, x), y) in questions.iter().zip(&a).zip(&b) {
        if x == y {
            report.identical += 1;
        } else {
            report
                .differences
                .push(format!("{} {:?}: {x} vs {y}", q.0, q.1));
        }
    }
    report.exports_identical = true;
    for (space, f) in spaces.iter().zip(&exports) {
        exported_again(&restored, work, space, f, &mut report)?;
    }
    Ok(report)
}

/// `cairn ingest` of the file `path` into `space`, in the format named.
fn ingest(cairn: &Cairn, space: &str, format: &str, path: &Path) -> Result<()> {
    cairn.run(&[
        "ingest",
        "--space",
        space,
        "--format",
        format,
        path.to_str().context("path")?,
    ])
}

/// `sessions` sessions ingested into `space`; every fifth one's parcel asked about.
fn ingest_sessions(
    cairn: &Cairn,
    work: &Path,
    space: &str,
    sessions: usize,
    rng: &mut Rng,
    questions: &mut Vec<(String, String, Value)>,
) -> Result<()> {
    let mut lines = Vec::new();
    for i in 0..sessions {
        let nonce = corpus::nonce(rng);
        let (s, _) = corpus::session(&format!("{space}-{i}"), &nonce, rng);
        if i % 5 == 0 {
            questions.push((
                space.to_string(),
                format!("Where was parcel {nonce} shipped?"),
                json!({}),
            ));
        }
        lines.push(s);
    }
    let f = work.join(format!("{space}.jsonl"));
    write_lines(&f, &lines)?;
    ingest(cairn, space, "jsonl", &f)
}

/// `sessions` group messages of the crew ingested into `space`.
fn ingest_group(
    cairn: &Cairn,
    work: &Path,
    space: &str,
    sessions: usize,
    rng: &mut Rng,
) -> Result<()> {
    let group: Vec<Value> = (0..sessions)
        .map(|i| {
            corpus::group_message(
                "crew",
                &format!("g{i}"),
                &corpus::nonce(rng),
                (i * 97) as i64,
                rng,
            )
            .0
        })
        .collect();
    let g = work.join(format!("{space}-group.jsonl"));
    write_lines(&g, &group)?;
    ingest(cairn, space, "group-jsonl", &g)
}

/// One failed shopping run ingested into `space`.
fn ingest_trajectory(cairn: &Cairn, work: &Path, space: &str) -> Result<()> {
    let t = work.join(format!("{space}-traj.jsonl"));
    write_lines(
        &t,
        &[
            json!({"id": format!("{space}-t1"), "goal": "buy a blue kettle", "outcome": false, "start_url": "http://shop/",
            "states": [
                {"url": "http://shop/", "action": "click [3]", "thought": "open kettles", "accessibility_tree": "[1] link 'Kettles'\n[3] button 'Search'"},
                {"url": "http://shop/kettles", "action": "click [9]", "thought": "buy", "accessibility_tree": "[9] button 'Buy'\nError: out of stock"}
            ]}),
        ],
    )?;
    ingest(cairn, space, "trajectories", &t)
}

/// The restored store's export of `space` compared byte for byte with the original's
/// (`first`); a difference is recorded in the report.
fn exported_again(
    restored: &Cairn,
    work: &Path,
    space: &str,
    first: &Path,
    report: &mut BackupReport,
) -> Result<()> {
    let again = work.join(format!("{space}.export2.jsonl"));
    restored.run(&[
        "export",
        "--space",
        space,
        "-o",
        again.to_str().context("path")?,
    ])?;
    if std::fs::read(first)? != std::fs::read(&again)? {
        report.exports_identical = false;
        report
            .differences
            .push(format!("export of {space} differs after the round trip"));
    }
    Ok(())
}
