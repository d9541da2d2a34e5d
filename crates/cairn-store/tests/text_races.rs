//! The text index under the engine's protocol, raced (issue 54, finding 4): writers add
//! batches of sessions and forget whole sessions under one write lock, a committer
//! commits meanwhile, and each forget scrubs after letting the lock go, as the engine
//! does. However the merges, scrubs and commits interleave, the index ends holding
//! exactly the entries written and not forgotten: none left behind, none lost.
use cairn_core::{SpaceId, TextIndex, Unit};
use cairn_store::TantivyTextIndex;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

fn units(space: &SpaceId, session: &str, n: usize) -> Vec<Unit> {
    (0..n)
        .map(|i| {
            cairn_testkit::fixtures::unit(
                space,
                &format!("turn:{session}:{i}"),
                session,
                &format!("word{i} ledger {session}"),
                &format!("text of {session} number {i}"),
            )
        })
        .collect()
}

/// xorshift: a fixed sequence per writer.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What the writers share: the index, the write lock, and what should be indexed.
struct Shared {
    index: TantivyTextIndex,
    space: SpaceId,
    lock: Mutex<()>,
    live: Mutex<BTreeSet<String>>,
    sessions: Mutex<Vec<(String, usize)>>,
    seq: AtomicU64,
}

impl Shared {
    /// A batch of one to four new sessions, as an ingest writes it.
    fn write(&self, rng: &mut Rng, name: &str) {
        let mut batch = Vec::new();
        let mut made = Vec::new();
        for j in 0..1 + rng.below(4) {
            let session = format!("{name}-b{j}");
            let n = 3 + rng.below(6);
            batch.extend(units(&self.space, &session, n));
            made.push((session, n));
        }
        let _w = self.lock.lock().unwrap();
        self.index.upsert(&batch).unwrap();
        self.seq.fetch_add(1, Ordering::SeqCst);
        let mut live = self.live.lock().unwrap();
        live.extend(batch.into_iter().map(|u| u.id));
        self.sessions.lock().unwrap().extend(made);
    }

    /// A session forgotten, committed under the lock, scrubbed after it.
    fn forget(&self, rng: &mut Rng) {
        let w = self.lock.lock().unwrap();
        let picked = {
            let mut sessions = self.sessions.lock().unwrap();
            let n = sessions.len();
            (n > 0).then(|| sessions.swap_remove(rng.below(n)))
        };
        let Some((session, n)) = picked else {
            return;
        };
        let ids: Vec<String> = units(&self.space, &session, n)
            .into_iter()
            .map(|u| u.id)
            .collect();
        self.index.remove_forgotten(&self.space, &ids).unwrap();
        let mut live = self.live.lock().unwrap();
        for id in &ids {
            live.remove(id);
        }
        drop(live);
        self.index
            .commit(self.seq.fetch_add(1, Ordering::SeqCst) + 1)
            .unwrap();
        drop(w);
        self.index.scrub().unwrap();
    }
}

#[test]
fn raced_writes_forgets_and_scrubs_leave_exactly_what_was_not_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let shared = Arc::new(Shared {
        // Small segments: commits, merges and scrubs of several segments interleave.
        index: TantivyTextIndex::open_with(&dir.path().join("text"), 60).unwrap(),
        space: SpaceId::new("crash").unwrap(),
        lock: Mutex::new(()),
        live: Mutex::default(),
        sessions: Mutex::default(),
        seq: AtomicU64::new(0),
    });
    let done = Arc::new(AtomicBool::new(false));
    let committer = {
        let (shared, done) = (shared.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                std::thread::yield_now();
                let _w = shared.lock.lock().unwrap();
                if shared.index.has_pending() {
                    shared
                        .index
                        .commit(shared.seq.load(Ordering::SeqCst))
                        .unwrap();
                }
            }
        })
    };
    let writers: Vec<_> = (0..3u64)
        .map(|w| {
            let shared = shared.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((w + 1) * 7919));
                for i in 0..300 {
                    if rng.below(10) >= 8 {
                        shared.forget(&mut rng);
                    } else {
                        shared.write(&mut rng, &format!("w{w}-{i}"));
                    }
                }
            })
        })
        .collect();
    for t in writers {
        t.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    committer.join().unwrap();
    let index = &shared.index;
    index.commit(shared.seq.load(Ordering::SeqCst)).unwrap();
    let held: BTreeSet<String> = index
        .ids(&shared.space)
        .unwrap()
        .unwrap()
        .into_iter()
        .collect();
    let live = shared.live.lock().unwrap().clone();
    let left: Vec<_> = held.difference(&live).take(5).collect();
    let lost: Vec<_> = live.difference(&held).take(5).collect();
    assert!(
        left.is_empty() && lost.is_empty(),
        "{} held, {} expected; left behind {left:?}, lost {lost:?}",
        held.len(),
        live.len()
    );
    assert!(live.len() > 1000, "{} entries: too few to race", live.len());
}
