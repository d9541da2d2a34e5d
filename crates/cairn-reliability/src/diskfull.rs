//! A full disk and a read-only one under a real `cairn serve` (issue 54, finding 6), over
//! HTTP as a client meets them. The data directory lives on a tmpfs of a few MiB mounted
//! for the run (root only), most of it taken by a filler file. Then:
//! - appends until one is refused, then again with texts half as long down to a few
//!   bytes (the last room taken by writes of every size): every answer is 200 or
//!   `507 insufficient_storage`, nothing else;
//! - on the full disk: recall answers 200 and finds a memory written before, the stored
//!   sessions are exactly the acknowledged ones (a refused write is not stored), and a
//!   forget succeeds;
//! - once the filler is removed, a write succeeds; after the server stops, `cairn check`
//!   finds the indexes in agreement and a new server counts what was acknowledged;
//! - the same directory remounted read-only: a server starts, recall answers 200, a write
//!   is refused `503 storage_read_only`.
use crate::serve::{encode, Cairn, Client};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone)]
pub struct DiskFullOptions {
    /// Size of the tmpfs (`mount -o size=`).
    pub disk: String,
    /// Bytes left free beside the filler when the appends start.
    pub room: u64,
}

impl Default for DiskFullOptions {
    fn default() -> Self {
        Self {
            disk: "32m".into(),
            room: 3 << 20,
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct DiskFullReport {
    /// Appends answered 200 (the first, before the disk filled, included).
    pub acknowledged: usize,
    /// Appends answered `507 insufficient_storage`.
    pub refused: usize,
    /// Sessions the server counted on the full disk.
    pub stored: usize,
    /// Refused appends that were stored anyway.
    pub refused_but_stored: Vec<String>,
    /// Acknowledged appends that were not stored.
    pub acknowledged_but_missing: Vec<String>,
    pub recall_on_full_disk: u16,
    pub recall_found_earlier_memory: bool,
    pub forget_on_full_disk: u16,
    pub write_after_space_freed: u16,
    pub check_consistent: bool,
    /// Sessions a new server counted after the restart, and how many it should.
    pub stored_after_restart: usize,
    pub expected_after_restart: usize,
    pub read_only_recall: u16,
    pub read_only_write: u16,
    pub read_only_write_code: String,
    /// Answers neither a success nor the promised refusal.
    pub unexpected: Vec<String>,
}

impl DiskFullReport {
    pub fn passed(&self) -> bool {
        self.refused > 0
            && self.acknowledged > 5
            && self.stored == self.acknowledged
            && self.refused_but_stored.is_empty()
            && self.acknowledged_but_missing.is_empty()
            && self.recall_on_full_disk == 200
            && self.recall_found_earlier_memory
            && matches!(self.forget_on_full_disk, 200 | 204)
            && self.write_after_space_freed == 200
            && self.check_consistent
            && self.stored_after_restart == self.expected_after_restart
            && self.read_only_recall == 200
            && self.read_only_write == 503
            && self.read_only_write_code == "storage_read_only"
            && self.unexpected.is_empty()
    }
}

/// The start of the error when the tmpfs cannot be mounted (not root): callers that may
/// skip the run look for it ([`mount_refused`]).
const CANNOT_MOUNT: &str = "needs root to mount a tmpfs";

/// True when `e` says the disk could not be mounted.
pub fn mount_refused(e: &anyhow::Error) -> bool {
    format!("{e:#}").contains(CANNOT_MOUNT)
}

const SPACE: &str = "disk";

/// `work` holds the mount point; the data directory is on the tmpfs.
pub fn run(bin: &Path, work: &Path, opts: &DiskFullOptions) -> Result<DiskFullReport> {
    let disk = Tmpfs::mount(&work.join("disk"), &opts.disk)?;
    let cairn = Cairn::new(bin, disk.dir.join("data"));
    let mut report = DiskFullReport::default();
    let server = cairn.serve(&[])?;
    let c = &server.client;
    let first = append(c, "s0", "the first memory is about kayaks")?;
    if first.status != 200 {
        bail!("the first append answered {}: {}", first.status, first.body);
    }
    let filler = disk.dir.join("filler");
    let fill = disk.available()?.saturating_sub(opts.room);
    std::fs::write(&filler, vec![1u8; fill as usize]).context("writing the filler")?;

    let (acknowledged, refused) = fill_up(c, &mut report)?;
    report.acknowledged = acknowledged.len();
    report.refused = refused.len();
    on_full_disk(c, &acknowledged, &refused, &mut report)?;

    std::fs::remove_file(&filler).context("freeing space")?;
    let again = refused.first().map_or("s-after", String::as_str);
    report.write_after_space_freed = append(c, again, &crate::unique_words(7, 6000))?.status;
    server.stop()?;

    report.check_consistent = cairn
        .json(&["check"])
        .is_ok_and(|v| v["consistent"] == Value::Bool(true));
    // The forget took one acknowledged session; the write after freeing space added one.
    report.expected_after_restart =
        acknowledged.len() - 1 + usize::from(report.write_after_space_freed == 200);
    let server = cairn.serve(&[])?;
    report.stored_after_restart = sessions(&server.client)?;
    server.stop()?;

    disk.remount("ro")?;
    read_only(&cairn, &mut report)?;
    disk.remount("rw")?;
    Ok(report)
}

/// Appends until one is refused, then with texts half as long, down to a few bytes; the
/// sessions acknowledged (`s0` first) and those refused.
fn fill_up(c: &Client, report: &mut DiskFullReport) -> Result<(Vec<String>, Vec<String>)> {
    let mut acknowledged = vec!["s0".to_string()];
    let mut refused = Vec::new();
    let mut size = 6000;
    let mut i = 1;
    while size >= 8 {
        let id = format!("s{i}");
        let r = append(c, &id, &crate::unique_words(i, size))?;
        match (r.status, r.body["code"].as_str()) {
            (200, _) => acknowledged.push(id),
            (507, Some("insufficient_storage")) => {
                refused.push(id);
                size /= 2;
            }
            (s, _) => {
                report
                    .unexpected
                    .push(format!("append {id}: {s} {}", r.body));
                size /= 2;
            }
        }
        i += 1;
        if i > 5000 {
            bail!("the disk never filled up after {i} appends");
        }
    }
    Ok((acknowledged, refused))
}

/// Reads, the ledger and a forget while the disk is full.
fn on_full_disk(
    c: &Client,
    acknowledged: &[String],
    refused: &[String],
    report: &mut DiskFullReport,
) -> Result<()> {
    let r = c
        .post(
            &format!("/v1/spaces/{SPACE}/recall"),
            &json!({"query": "kayaks"}),
        )
        .map_err(anyhow::Error::msg)?;
    report.recall_on_full_disk = r.status;
    report.recall_found_earlier_memory = r.body["hits"]
        .as_array()
        .is_some_and(|h| h.iter().any(|h| h["session_id"] == "s0"));
    report.stored = sessions(c)?;
    for id in acknowledged {
        if session_status(c, id)? != 200 {
            report.acknowledged_but_missing.push(id.clone());
        }
    }
    for id in refused {
        if session_status(c, id)? != 404 {
            report.refused_but_stored.push(id.clone());
        }
    }
    let forgotten = acknowledged.get(1).map_or("s0", String::as_str);
    report.forget_on_full_disk = c
        .delete(&format!(
            "/v1/spaces/{SPACE}/sessions/{}",
            encode(forgotten)
        ))
        .map_err(anyhow::Error::msg)?
        .status;
    Ok(())
}

/// A server on the read-only directory: recall answers, a write is refused.
fn read_only(cairn: &Cairn, report: &mut DiskFullReport) -> Result<()> {
    let server = cairn
        .serve(&[])
        .context("a server on the read-only data directory")?;
    let c = &server.client;
    report.read_only_recall = c
        .post(
            &format!("/v1/spaces/{SPACE}/recall"),
            &json!({"query": "kayaks"}),
        )
        .map_err(anyhow::Error::msg)?
        .status;
    let w = append(c, "s-read-only", "a write to a read-only disk")?;
    report.read_only_write = w.status;
    report.read_only_write_code = w.body["code"].as_str().unwrap_or_default().to_string();
    server.stop()
}

fn append(c: &Client, session: &str, text: &str) -> Result<crate::serve::Resp> {
    c.post(
        &format!("/v1/spaces/{SPACE}/messages"),
        &json!({"session_id": session, "messages": [{"speaker": "user", "text": text}]}),
    )
    .map_err(anyhow::Error::msg)
}

fn sessions(c: &Client) -> Result<usize> {
    let r = c
        .get(&format!("/v1/spaces/{SPACE}/stats"))
        .map_err(anyhow::Error::msg)?;
    r.body["sessions"]
        .as_u64()
        .map(|n| n as usize)
        .with_context(|| format!("stats answered {}: {}", r.status, r.body))
}

fn session_status(c: &Client, id: &str) -> Result<u16> {
    Ok(
        c.get(&format!("/v1/spaces/{SPACE}/sessions/{}", encode(id)))
            .map_err(anyhow::Error::msg)?
            .status,
    )
}

/// A tmpfs mounted for the run, unmounted when dropped (also when the run fails).
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Result<Self> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .with_context(|| format!("{CANNOT_MOUNT}: running mount"))?;
        if !out.status.success() {
            bail!(
                "{CANNOT_MOUNT} on {}: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    fn remount(&self, opts: &str) -> Result<()> {
        let st = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.dir)
            .status()?;
        if !st.success() {
            bail!("remounting {} {opts}", self.dir.display());
        }
        Ok(())
    }

    /// Bytes free on the file system.
    fn available(&self) -> Result<u64> {
        let out = Command::new("df")
            .args(["-B1", "--output=avail"])
            .arg(&self.dir)
            .output()?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .and_then(|l| l.trim().parse().ok())
            .context("df's answer")
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}
