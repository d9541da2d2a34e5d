//! The on-disk form of a space's HNSW graph: derived state, saved so that a new process
//! loads a large space's graph in seconds instead of building it for minutes.
//!
//! Two files per space in `<data dir>/hnsw/`, named by a hash of the space:
//! - `<name>.graph`: the USearch index (`Index::save`);
//! - `<name>.keys`: what maps graph keys to units (each point's vector fingerprint and unit
//!   ids), the [`Stamp`] of the vector rows the graph reflects, the graph file's length and
//!   CRC-32, and a CRC-32 of itself.
//!
//! The keys file is written last (both through a temporary file and a rename), so it is
//! the commit point: a crash between the two renames leaves a graph file whose length or
//! checksum the keys file does not name. Anything that does not match (stamp, lengths,
//! checksums, dimensions, counts) is reported as [`LoadError`] and the caller rebuilds
//! from the rows: a graph file can never give an answer the rows would not.
use cairn_core::StoreError;
use sha2::{Digest, Sha256};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 16] = b"cairn-hnsw-keys\x01";

/// What identifies the vector rows of one space at one moment. `changed` is the store's
/// vector change counter at the space's last vector write (it only grows, store-wide, and
/// moves in the write's own transaction, so it is the same for every process); the row
/// count and the highest rowid are a second guard, against writers that do not move it.
/// `store` is a random id made with the database, so a graph never matches another
/// database that happens to reach the same counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub store: String,
    pub space: String,
    pub changed: u64,
    pub rows: u64,
    pub max_rowid: i64,
}

/// One graph point as saved: its vector's fingerprint and its units (empty: a point whose
/// units are all gone, kept so that keys stay positions).
pub(crate) struct SavedPoint {
    pub fingerprint: u128,
    pub units: Vec<Box<str>>,
}

/// What a keys file holds besides its points.
pub(crate) struct KeysHeader {
    pub stamp: Stamp,
    pub dim: u32,
    pub graph_len: u64,
    pub graph_crc: u32,
}

/// Why a saved graph was not used.
#[derive(Debug)]
pub(crate) enum LoadError {
    /// No saved graph: nothing to report.
    Missing,
    /// Saved for other rows than the space holds now (the normal case after writes).
    Stale(String),
    /// Unreadable: truncated, bit-flipped, or of another format.
    Corrupt(String),
}

impl From<std::io::Error> for LoadError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::NotFound {
            LoadError::Missing
        } else {
            LoadError::Corrupt(e.to_string())
        }
    }
}

/// The two files of one space's graph.
pub(crate) struct GraphFiles {
    pub graph: PathBuf,
    pub keys: PathBuf,
}

impl GraphFiles {
    pub fn of(dir: &Path, space: &str) -> Self {
        let hash = Sha256::digest(space.as_bytes());
        let name = hex::encode(&hash[..16]);
        Self {
            graph: dir.join(format!("{name}.graph")),
            keys: dir.join(format!("{name}.keys")),
        }
    }

    pub fn exists(&self) -> bool {
        self.keys.exists()
    }

    /// Deletes both files (and leftovers of an interrupted save); missing files are fine.
    pub fn remove(&self) {
        for p in [&self.keys, &self.graph, &tmp(&self.keys), &tmp(&self.graph)] {
            if let Err(e) = std::fs::remove_file(p) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(path = %p.display(), error = %e, "could not delete a saved vector graph");
                }
            }
        }
    }
}

pub(crate) fn tmp(p: &Path) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Length and CRC-32 of a file, read once.
pub(crate) fn file_crc(path: &Path) -> std::io::Result<(u64, u32)> {
    let mut r = BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0u64;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        len += n as u64;
    }
    Ok((len, h.finalize()))
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Writes the keys file through a temporary file and a rename.
pub(crate) fn write_keys<'a>(
    path: &Path,
    header: &KeysHeader,
    points: impl ExactSizeIterator<Item = (u128, &'a [Box<str>])>,
) -> Result<(), StoreError> {
    let mut out = Vec::with_capacity(64 + points.len() * 64);
    out.extend_from_slice(MAGIC);
    let s = &header.stamp;
    put_str(&mut out, &s.store);
    put_str(&mut out, &s.space);
    out.extend_from_slice(&s.changed.to_le_bytes());
    out.extend_from_slice(&s.rows.to_le_bytes());
    out.extend_from_slice(&s.max_rowid.to_le_bytes());
    out.extend_from_slice(&header.dim.to_le_bytes());
    out.extend_from_slice(&header.graph_len.to_le_bytes());
    out.extend_from_slice(&header.graph_crc.to_le_bytes());
    out.extend_from_slice(&(points.len() as u64).to_le_bytes());
    for (fingerprint, units) in points {
        out.extend_from_slice(&fingerprint.to_le_bytes());
        out.extend_from_slice(&(units.len() as u32).to_le_bytes());
        for u in units {
            put_str(&mut out, u);
        }
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    let t = tmp(path);
    let io = |e: std::io::Error| crate::io_err(&t, e);
    let mut f = std::fs::File::create(&t).map_err(io)?;
    f.write_all(&out).map_err(io)?;
    drop(f);
    std::fs::rename(&t, path).map_err(io)
}

/// Reads past the end report a truncated file, never a panic.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], LoadError> {
        if self.0.len() < n {
            return Err(LoadError::Corrupt("keys file ends early".into()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], LoadError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32, LoadError> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, LoadError> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    fn str(&mut self) -> Result<Box<str>, LoadError> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?)
            .map(Box::from)
            .map_err(|_| LoadError::Corrupt("keys file holds a unit id that is not UTF-8".into()))
    }
}

/// Reads a keys file: its header, checked against `expect` (stale otherwise), then its
/// points. The whole file's checksum is verified before anything in it is trusted.
pub(crate) fn read_keys(
    path: &Path,
    expect: &Stamp,
) -> Result<(KeysHeader, Vec<SavedPoint>), LoadError> {
    let bytes = std::fs::read(path)?;
    if bytes.len() < MAGIC.len() + 4 || &bytes[..MAGIC.len()] != MAGIC {
        return Err(LoadError::Corrupt("not a keys file of this version".into()));
    }
    let (body, trailer) = bytes.split_at(bytes.len() - 4);
    if crc32fast::hash(body).to_le_bytes() != trailer {
        return Err(LoadError::Corrupt(
            "keys file checksum does not match".into(),
        ));
    }
    let mut c = Cursor(&body[MAGIC.len()..]);
    let stamp = Stamp {
        store: c.str()?.into(),
        space: c.str()?.into(),
        changed: c.u64()?,
        rows: c.u64()?,
        max_rowid: i64::from_le_bytes(c.arr()?),
    };
    if &stamp != expect {
        return Err(LoadError::Stale(format!(
            "saved for {stamp:?}, the rows are now {expect:?}"
        )));
    }
    let header = KeysHeader {
        stamp,
        dim: c.u32()?,
        graph_len: c.u64()?,
        graph_crc: c.u32()?,
    };
    let n = c.u64()? as usize;
    // Each point takes at least 20 bytes: a count beyond that is corrupt, not a reason to
    // reserve memory for it.
    if n > c.0.len() / 20 {
        return Err(LoadError::Corrupt(
            "keys file counts more points than it holds".into(),
        ));
    }
    let mut points = Vec::with_capacity(n);
    for _ in 0..n {
        let fingerprint = u128::from_le_bytes(c.arr()?);
        let k = c.u32()? as usize;
        let mut units = Vec::with_capacity(k.min(c.0.len() / 4));
        for _ in 0..k {
            units.push(c.str()?);
        }
        points.push(SavedPoint { fingerprint, units });
    }
    if !c.0.is_empty() {
        return Err(LoadError::Corrupt(
            "keys file has bytes past its points".into(),
        ));
    }
    Ok((header, points))
}
