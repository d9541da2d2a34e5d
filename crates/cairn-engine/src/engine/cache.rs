//! The engine's one cache of derived reads (issue 54, finding 7; issue 55): a space's
//! session catalog, the sessions a scope admits, entity graphs, facts and profile
//! contributions, the fact index. Each entry is keyed by its space and the SHA-256 of
//! what it is (a kind and the canonical text of the scope it was built for), so a key
//! costs the same few bytes whatever the size of the filter that made it; it is valid
//! for one generation of its space (`RecordStore::generation`), so a write to the space
//! makes it stale and a write to another space does not; and all entries together hold
//! at most a byte budget, by the weight each value reports, the least recently used
//! going first. Before, each site kept a map keyed by the whole serialized scope (a
//! 6 MiB filter made a 6 MiB key) and bounded only by a count of entries, so 150 recalls
//! with distinct large filters held over a GiB.
use super::flight::Flights;
use cairn_core::SpaceId;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::mem::size_of;
use std::sync::{Arc, Mutex};

/// Bytes (as the values weigh themselves, see [`Weigh`]) the derived caches of one engine
/// hold together. A value weighing more than this is built for its request and not kept.
pub(super) const DERIVED_CACHE_BYTES: usize = 512 << 20;

/// What a cached value reports as its size: an approximation of the heap it holds
/// (strings, collections), counted once when it is cached.
pub(super) trait Weigh {
    fn weight(&self) -> usize;
}

/// A cache key: the space and a hash of what is cached for it. Never holds the scope's
/// text, so its size does not depend on the scope's.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) struct Key {
    space: SpaceId,
    hash: [u8; 32],
}

impl Key {
    /// The key of `kind` (a name of what is cached: `"catalog"`, `"graph"`, ...) built
    /// for `canonical`, a value whose JSON text says what it depends on (a scope's
    /// parts). The text is streamed into the hash, never held.
    pub(super) fn new(space: &SpaceId, kind: &str, canonical: &impl Serialize) -> Self {
        let mut h = Sha256::new();
        h.update(kind.as_bytes());
        // A separator no kind holds, so ("ab", "c") and ("a", "bc") differ.
        h.update([0u8]);
        // Serializing plain data (strings, numbers, JSON values) to a writer that cannot
        // fail does not fail; were it to, the key would still name kind and space.
        let _ = serde_json::to_writer(HashWriter(&mut h), canonical);
        Self {
            space: space.clone(),
            hash: h.finalize().into(),
        }
    }

    /// What the key itself costs: its struct and the space's name.
    pub(super) fn bytes(&self) -> usize {
        size_of::<Self>() + self.space.as_str().len()
    }
}

/// Feeds serialized bytes to a hash.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The bytes of `v`'s JSON text, counted without writing it anywhere: a value's weight
/// where its heap is mostly its strings (units, session headers).
pub(super) fn json_len(v: &impl Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    // As above: plain data to a writer that cannot fail.
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// What a unit counts against the budget: its struct and its strings, each counted by
/// its length plus a slot; its detail (a fact's or a profile's few fields) by a flat
/// share. Summed per unit, never serialized: a write advances lists of tens of
/// thousands of units (`advance.rs`) and weighs them again each time.
pub(super) fn unit_weight(u: &cairn_core::Unit) -> usize {
    const SLOT: usize = size_of::<String>();
    const DETAIL: usize = 256;
    let strings = |xs: &[String]| xs.iter().map(|x| SLOT + x.len()).sum::<usize>();
    let opt = |x: &Option<String>| x.as_ref().map_or(0, |x| SLOT + x.len());
    let p = &u.provenance;
    size_of::<cairn_core::Unit>()
        + u.id.len()
        + u.text.len()
        + u.key.len()
        + opt(&u.embed_text)
        + opt(&u.part_of)
        + opt(&p.session_id)
        + opt(&p.group)
        + opt(&p.trajectory_id)
        + opt(&p.partition)
        + strings(&p.message_ids)
        + strings(&p.speakers)
        + u.detail.as_ref().map_or(0, |_| DETAIL)
}

/// Per entry beyond its key and value: the entry itself, its map slots and its place in
/// the recency order.
const ENTRY_OVERHEAD: usize = size_of::<Entry>() + size_of::<Key>() + 64;

struct Entry {
    generation: u64,
    value: Arc<dyn Any + Send + Sync>,
    /// What the entry counts against the budget (key, value, overhead).
    bytes: usize,
    /// When it was last used (its key in `Inner::order`).
    used: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Key, Entry>,
    /// Entries by last use, oldest first.
    order: BTreeMap<u64, Key>,
    bytes: usize,
    clock: u64,
}

impl Inner {
    fn remove(&mut self, key: &Key) {
        if let Some(e) = self.entries.remove(key) {
            self.order.remove(&e.used);
            self.bytes -= e.bytes;
        }
    }
}

/// Derived values by [`Key`], each valid for one generation of its space, bounded in
/// bytes.
pub(super) struct SpaceCache {
    budget: usize,
    inner: Mutex<Inner>,
    /// Builds in progress, one per key (see [`SpaceCache::get_or_build`]).
    flights: Flights<Key>,
}

impl Default for SpaceCache {
    fn default() -> Self {
        Self::with_budget(DERIVED_CACHE_BYTES)
    }
}

impl SpaceCache {
    pub(super) fn with_budget(budget: usize) -> Self {
        Self {
            budget,
            inner: Mutex::new(Inner::default()),
            flights: Flights::default(),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the maps consistent (every
        // change below is completed before the guard drops), so the cache stays usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value cached under `key` at `generation`; an entry of another generation is
    /// stale (its space was written since) and dropped.
    pub(super) fn get<V: Any + Send + Sync>(&self, key: &Key, generation: u64) -> Option<Arc<V>> {
        let mut inner = self.inner();
        let current = inner.entries.get(key).map(|e| e.generation == generation)?;
        if !current {
            inner.remove(key);
            return None;
        }
        inner.clock += 1;
        let now = inner.clock;
        let e = inner.entries.get_mut(key)?;
        let was = std::mem::replace(&mut e.used, now);
        // Another type under the same key would be a hash collision across kinds: a
        // miss, never a wrong value.
        let value = e.value.clone().downcast::<V>().ok();
        inner.order.remove(&was);
        inner.order.insert(now, key.clone());
        value
    }

    /// The value cached under `key` at `generation`, taken out of the cache (a write
    /// advancing it to its next generation, see `advance.rs`, puts it back); an entry of
    /// another generation is dropped.
    pub(super) fn take<V: Any + Send + Sync>(&self, key: &Key, generation: u64) -> Option<Arc<V>> {
        let mut inner = self.inner();
        let current = inner.entries.get(key)?.generation == generation;
        let e = inner.entries.remove(key)?;
        inner.order.remove(&e.used);
        inner.bytes -= e.bytes;
        // A value of another type under the key: a miss (see `get`).
        current.then(|| e.value.downcast::<V>().ok()).flatten()
    }

    /// The value cached under `key` at `generation` that `valid` accepts, else the one
    /// `build` makes, cached at `generation`: the one way every derived read of a space
    /// is cached. Callers of one key build one at a time, so those that waited find the
    /// first one's value (`flight.rs`); `generation` is read before what `build` reads,
    /// so a write landing meanwhile makes the value stale rather than kept wrong. `valid`
    /// passes over a value that is not this caller's (an index of another read of the
    /// list it indexes).
    pub(super) fn get_or_build<V: Weigh + Any + Send + Sync, E>(
        &self,
        key: &Key,
        generation: u64,
        valid: impl Fn(&V) -> bool,
        build: impl FnOnce() -> Result<V, E>,
    ) -> Result<Arc<V>, E> {
        let cached = || self.get::<V>(key, generation).filter(|v| valid(v));
        if let Some(v) = cached() {
            return Ok(v);
        }
        self.flights.one_at_a_time(key, || {
            if let Some(v) = cached() {
                return Ok(v);
            }
            let v = Arc::new(build()?);
            self.insert(key.clone(), generation, v.clone());
            Ok(v)
        })
    }

    /// Keeps `value` under `key` for `generation`, evicting the least recently used
    /// entries while the total is over the budget; a value that alone weighs more than
    /// the budget is not kept.
    pub(super) fn insert<V: Weigh + Any + Send + Sync>(
        &self,
        key: Key,
        generation: u64,
        value: Arc<V>,
    ) {
        let bytes = key.bytes() + value.weight() + ENTRY_OVERHEAD;
        let mut inner = self.inner();
        inner.remove(&key);
        if bytes > self.budget {
            return;
        }
        while inner.bytes + bytes > self.budget {
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            if let Some(e) = inner.entries.remove(&oldest) {
                inner.bytes -= e.bytes;
            }
        }
        inner.clock += 1;
        let used = inner.clock;
        inner.order.insert(used, key.clone());
        inner.bytes += bytes;
        inner.entries.insert(
            key,
            Entry {
                generation,
                value,
                bytes,
                used,
            },
        );
    }

    /// Bytes the entries count against the budget now.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.inner().bytes
    }

    /// Entries held now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.inner().entries.len()
    }

    #[cfg(test)]
    pub(super) fn budget(&self) -> usize {
        self.budget
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value that weighs what it is told.
    struct Blob(usize);
    impl Weigh for Blob {
        fn weight(&self) -> usize {
            self.0
        }
    }

    fn space(name: &str) -> SpaceId {
        SpaceId::new(name).expect("space")
    }

    #[test]
    fn entries_heavier_together_than_the_budget_stay_under_it() {
        let cache = SpaceCache::with_budget(100_000);
        let s = space("s");
        for i in 0..200u32 {
            cache.insert(Key::new(&s, "blob", &i), 1, Arc::new(Blob(3_000)));
            assert!(
                cache.bytes() <= cache.budget(),
                "{} bytes held after {i} inserts, budget {}",
                cache.bytes(),
                cache.budget()
            );
        }
        // 200 entries of 3 kB were offered; about 30 fit.
        assert!(
            cache.len() >= 25 && cache.len() < 34,
            "{} kept",
            cache.len()
        );
        // The most recent ones are kept, the oldest went first.
        assert!(cache
            .get::<Blob>(&Key::new(&s, "blob", &199u32), 1)
            .is_some());
        assert!(cache.get::<Blob>(&Key::new(&s, "blob", &0u32), 1).is_none());
    }

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let cache = SpaceCache::with_budget(3 * (1_000 + ENTRY_OVERHEAD + 64));
        let s = space("s");
        let key = |i: u32| Key::new(&s, "blob", &i);
        for i in 0..3 {
            cache.insert(key(i), 1, Arc::new(Blob(1_000)));
        }
        assert!(cache.get::<Blob>(&key(0), 1).is_some());
        cache.insert(key(3), 1, Arc::new(Blob(1_000)));
        // 1 was the least recently used (0 was just read).
        assert!(cache.get::<Blob>(&key(1), 1).is_none());
        assert!(cache.get::<Blob>(&key(0), 1).is_some());
        assert!(cache.get::<Blob>(&key(3), 1).is_some());
    }

    #[test]
    fn an_entry_over_the_budget_is_not_kept_and_keeps_nothing_out() {
        let cache = SpaceCache::with_budget(10_000);
        let s = space("s");
        cache.insert(Key::new(&s, "blob", &1), 1, Arc::new(Blob(1_000)));
        cache.insert(Key::new(&s, "blob", &2), 1, Arc::new(Blob(20_000)));
        assert!(cache.get::<Blob>(&Key::new(&s, "blob", &2), 1).is_none());
        assert!(cache.get::<Blob>(&Key::new(&s, "blob", &1), 1).is_some());
        assert!(cache.bytes() <= 10_000);
    }

    #[test]
    fn a_key_costs_the_same_whatever_the_size_of_the_scope_it_names() {
        let s = space("s");
        let small = Key::new(&s, "admitted", &"f");
        let large = Key::new(&s, "admitted", &"f".repeat(6 << 20));
        assert_eq!(small.bytes(), large.bytes());
        assert_ne!(small, large);
        // And so does the entry the cache counts.
        let cache = SpaceCache::with_budget(1 << 20);
        cache.insert(small, 1, Arc::new(Blob(10)));
        let one = cache.bytes();
        cache.insert(large, 1, Arc::new(Blob(10)));
        assert_eq!(cache.bytes(), 2 * one);
        assert!(one < 300, "an entry of a 10-byte value counts {one} bytes");
    }

    #[test]
    fn another_generation_or_kind_is_a_miss() {
        let cache = SpaceCache::with_budget(1 << 20);
        let s = space("s");
        let key = Key::new(&s, "blob", &"x");
        cache.insert(key.clone(), 4, Arc::new(Blob(10)));
        assert!(cache.get::<Blob>(&key, 4).is_some());
        assert!(cache.get::<String>(&key, 4).is_none());
        assert_ne!(key, Key::new(&s, "other", &"x"));
        assert_ne!(key, Key::new(&space("t"), "blob", &"x"));
        // The stale entry is dropped, its bytes with it.
        assert!(cache.get::<Blob>(&key, 5).is_none());
        assert_eq!((cache.len(), cache.bytes()), (0, 0));
    }
}
