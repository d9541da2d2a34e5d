//! Full and read-only disks: which failures are which, and the reserve that lets a
//! forget run on a full disk.
//!
//! A write that fails for lack of space or permission is told apart from every other
//! failure ([`StoreError::Full`], [`StoreError::ReadOnly`]), so the server can answer a
//! code the operator can act on (507, 503) instead of `internal`, and the engine can keep
//! serving reads of what is committed.
//!
//! Deleting needs room too: SQLite appends the pages a forget rewrites to its write-ahead
//! log, and scrubbing the text index writes the merged segment before it deletes the old
//! ones. So the data directory holds a reserve, a file of [`RESERVE_BYTES`] written
//! before the first write (`RecordStore::hold_reserve`); writes need it in place, so the
//! disk is full for them while that much is still free. A forget deletes it first
//! (`RecordStore::release_reserve`) and runs in the space it gave back; the next write
//! (or the forget's end) writes it again when there is room, and until there is, writes
//! are refused with [`StoreError::Full`].
use cairn_core::StoreError;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The reserve's size: the room a forget has on a full disk (the write-ahead log pages
/// of its deletions, a merged text segment of a small index).
pub const RESERVE_BYTES: u64 = 4 << 20;

/// The reserve's file name in the data directory.
pub const RESERVE_FILE: &str = "disk-reserve";

/// What kind of storage failure an I/O error is, if it is one of the two the operator
/// must act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unwritable {
    Full,
    ReadOnly,
}

/// ENOSPC, EDQUOT (Linux numbers; `ErrorKind` names them on every platform Rust knows),
/// EROFS, and EACCES/EPERM on a write.
pub(crate) fn io_kind(e: &io::Error) -> Option<Unwritable> {
    match e.kind() {
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => Some(Unwritable::Full),
        io::ErrorKind::ReadOnlyFilesystem | io::ErrorKind::PermissionDenied => {
            Some(Unwritable::ReadOnly)
        }
        _ => match e.raw_os_error() {
            Some(28 | 122) => Some(Unwritable::Full),
            Some(30) => Some(Unwritable::ReadOnly),
            _ => None,
        },
    }
}

/// The error for a storage failure of `kind`; `context` says where and what the system
/// answered.
pub(crate) fn unwritable(kind: Unwritable, context: impl std::fmt::Display) -> StoreError {
    match kind {
        Unwritable::Full => StoreError::Full(format!(
            "the store's disk is full ({context}); the write was not stored, and reads still answer. Free space on the data directory's disk (forgetting memories works on a full disk) or move the data directory to a larger one"
        )),
        Unwritable::ReadOnly => StoreError::ReadOnly(format!(
            "the store's files cannot be written ({context}); the write was not stored, and reads still answer. Make the data directory writable by the server's user (or mount it read-write)"
        )),
    }
}

/// An I/O error at `path`, classified.
pub(crate) fn io_error(path: &Path, e: io::Error) -> StoreError {
    match io_kind(&e) {
        Some(kind) => unwritable(kind, format_args!("{}: {e}", path.display())),
        None => StoreError::Backend(format!("{}: {e}", path.display())),
    }
}

/// The reserve of one data directory (see the module's comment).
pub(crate) struct Reserve {
    path: PathBuf,
    /// Whether the file is known to be in place at full size, so a write that finds it
    /// there costs no system call.
    held: Mutex<bool>,
}

impl Reserve {
    pub(crate) fn new(dir: &Path) -> Self {
        let path = dir.join(RESERVE_FILE);
        let held = std::fs::metadata(&path).is_ok_and(|m| m.len() == RESERVE_BYTES);
        Self {
            path,
            held: Mutex::new(held),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, bool> {
        // A panic while writing the file leaves `false` or a stale `true` that the next
        // write checks again: safe to reuse.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the reserve when it is not in place; a disk without room for it is
    /// [`StoreError::Full`] (and no partial file is left).
    pub(crate) fn hold(&self) -> Result<(), StoreError> {
        let mut held = self.held();
        if *held {
            return Ok(());
        }
        match self.write() {
            Ok(()) => {
                *held = true;
                Ok(())
            }
            Err(e) => {
                // A partial file would hold space without being the reserve.
                let _ = std::fs::remove_file(&self.path);
                Err(io_error(&self.path, e))
            }
        }
    }

    /// Bytes written, not a sparse length: a file system allocates only what is written.
    /// They are not zeros either, which a compressing file system would not store.
    fn write(&self) -> io::Result<()> {
        let mut f = std::fs::File::create(&self.path)?;
        let mut block = vec![0u8; 64 << 10];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for b in block.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
        }
        for _ in 0..RESERVE_BYTES / block.len() as u64 {
            f.write_all(&block)?;
        }
        f.sync_all()
    }

    /// Deletes the reserve, giving its space to the file system.
    pub(crate) fn release(&self) -> Result<(), StoreError> {
        let mut held = self.held();
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&self.path, e)),
        }
        *held = false;
        Ok(())
    }
}

/// Refuses at open a data directory this process cannot write, naming it and the cause:
/// SQLite writes its write-ahead log and shared-memory files beside the database even to
/// read it, so a read-only directory otherwise fails later as "unable to open database
/// file", which says neither where nor why.
/// Whether `dir` cannot be written (a read-only mount, another user's directory).
pub(crate) fn is_read_only(dir: &Path) -> bool {
    matches!(check_writable(dir), Err(StoreError::ReadOnly(_)))
}

pub(crate) fn check_writable(dir: &Path) -> Result<(), StoreError> {
    let probe = dir.join(".cairn-write-check");
    match std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) if io_kind(&e) == Some(Unwritable::ReadOnly) => Err(StoreError::ReadOnly(format!(
            "the data directory {} cannot be written ({e}); Cairn keeps its write-ahead logs and indexes there and writes them even to read. Make it writable by this user (or mount it read-write), or serve a writable copy of it",
            dir.display()
        ))),
        // A full disk still opens: reads answer, and writes say the disk is full.
        Err(e) if io_kind(&e) == Some(Unwritable::Full) => Ok(()),
        Err(e) => Err(io_error(&probe, e)),
    }
}
