//! Cost tests of the engine's verbs on the embedded store: the work a request does is
//! counted (see [`crate::work`]), never timed, as its input doubles.
use super::config::EngineBackends;
use super::config::EngineConfig;
use super::receipt::WriteOptions;
use super::state::Engine;
use crate::work::counting::steps_of;
use crate::work::steps::CANDIDATES_CHECKED;
use cairn_core::{
    InspectRecallOptions, SessionInput, SpaceId, StoreError, TextIndex, TextQuery, TrajectoryInput,
    Unit,
};
use cairn_testkit::{HashEmbedder, HASH_MODEL};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

pub(super) fn engine(dir: &Path) -> Engine {
    let store = cairn_store::EmbeddedStore::open(dir, HASH_MODEL).expect("store");
    let cache = cairn_store::SqliteEmbeddingCache::open(&dir.join("cache.sqlite3")).expect("cache");
    let backends = EngineBackends {
        records: store.records,
        text: store.text,
        vectors: store.vectors,
        embedder: Arc::new(HashEmbedder),
        cache: Arc::new(cache),
        enrich: None,
    };
    Engine::open(backends, EngineConfig::default()).expect("engine")
}

/// Team chats that talk of shoes and coupons, `n` of them.
fn chats(n: usize) -> Vec<SessionInput> {
    (0..n)
        .map(|i| {
            serde_json::from_value(json!({
                "id": format!("chat{i}"), "group": "team", "date": "2024-01-02",
                "messages": [
                    {"speaker": format!("Ana{i}"), "text": format!("The shoes order {i} shipped with a coupon.")},
                    {"speaker": "Rui", "text": "Thanks, noted."}]
            }))
            .expect("session")
        })
        .collect()
}

fn trajectory() -> TrajectoryInput {
    serde_json::from_value(json!({
        "id": "t1", "goal": "Find which coupon applies to shoes", "outcome": true,
        "states": [
            {"url": "https://shop.test/deals", "action": "click deals",
             "observation": "Coupon SHOES10 applies to shoes. Coupon BAGS5 applies to bags."},
            {"url": "https://shop.test/cart", "action": "apply SHOES10",
             "observation": "SHOES10 applied: 10% off shoes."}]
    }))
    .expect("trajectory")
}

/// Candidates checked by one trajectory inspection of a space of `n` chats and one
/// trajectory, and whether it found the trajectory.
fn inspection_work(n: usize) -> (u64, bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(dir.path());
    let space = SpaceId::new("shop").expect("space");
    let opts = WriteOptions::default();
    e.writes()
        .ingest_sessions(&space, chats(n), &opts)
        .expect("chats");
    e.trajectories()
        .insert_trajectories(&space, vec![trajectory()], &opts)
        .expect("trajectory");
    let (inspected, checked) = steps_of(CANDIDATES_CHECKED, || {
        e.trajectories()
            .recall_inspect(
                &space,
                "Which coupon applies to shoes?",
                &InspectRecallOptions::default(),
            )
            .expect("inspect")
    });
    let found = inspected.spans.iter().any(|s| s.trajectory_id == "t1");
    (checked, found)
}

/// A recall that asks for kinds (a trajectory inspection asks for slices, events and
/// notes) reads only units of those kinds: before, its vector search ranked the whole
/// space and checked every unit it found, however many chats the space held.
#[test]
fn a_recall_for_some_kinds_checks_none_of_the_others() {
    let (small, found_small) = inspection_work(150);
    let (large, found_large) = inspection_work(300);
    assert!(found_small && found_large);
    assert_eq!(small, large, "checked {small} at 150 chats, {large} at 300");
    assert!(small <= 10, "checked {small} candidates for one trajectory");
}

/// A space's derived state (its fact index) stays built when another space is written:
/// before, one generation for the whole store made every space's next knowledge request
/// read and index all of its facts again after any tenant's write, a cost and a timing
/// that told one key that another space had changed.
#[test]
fn a_write_to_another_space_leaves_this_spaces_fact_index_built() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(dir.path());
    let (mine, theirs) = (
        SpaceId::new("mine").expect("space"),
        SpaceId::new("theirs").expect("space"),
    );
    let opts = WriteOptions::default();
    let said = |id: &str, text: &str| -> Vec<SessionInput> {
        vec![serde_json::from_value(json!({
            "id": id, "date": "2024-03-01",
            "messages": [{"role": "user", "text": text}, {"role": "assistant", "text": "Noted."}]
        }))
        .expect("session")]
    };
    e.writes()
        .ingest_sessions(&mine, said("m1", "I moved to Lisbon last month."), &opts)
        .expect("mine");
    e.writes()
        .ingest_sessions(&theirs, said("t1", "I live in Porto."), &opts)
        .expect("theirs");
    let subjects = e
        .knowledge()
        .fact_subjects(&mine, &cairn_core::Scope::default())
        .expect("subjects");
    assert!(!subjects.is_empty(), "no fact stated in {mine}");
    let built = || e.knowledge().built_fact_index(&mine).expect("index");
    let first = built().expect("the index subjects built");
    e.writes()
        .ingest_sessions(&theirs, said("t2", "I moved to Faro."), &opts)
        .expect("theirs again");
    let kept = built().expect("a write to theirs made mine's fact index stale");
    assert!(
        Arc::ptr_eq(&first, &kept),
        "mine's fact index was built again"
    );
    e.writes()
        .ingest_sessions(&mine, said("m2", "I moved to Braga."), &opts)
        .expect("mine again");
    // The write path may build the index anew for itself; the old one must be gone.
    assert!(
        built().is_none_or(|now| !Arc::ptr_eq(&first, &now)),
        "mine's own write left its old fact index current"
    );
}

/// Many reads with distinct large metadata filters (issue 54, finding 7): the derived
/// cache counts what each keeps, keys by a hash of the scope, never its text, and holds
/// no more than its byte budget. Before, the admitted-sessions and entity-graph caches
/// kept each scope's whole serialized filter as their key (a 6 MiB filter, a 6 MiB key),
/// bounded only by a count of entries, so 150 such recalls held over a GiB.
#[test]
fn distinct_large_filters_do_not_grow_the_derived_cache_past_its_bytes() {
    use cairn_core::ScopeOptions;
    let dir = tempfile::tempdir().expect("tempdir");
    let mut e = engine(dir.path());
    let space = SpaceId::new("users").expect("space");
    let sessions: Vec<SessionInput> = (0..4)
        .map(|i| {
            serde_json::from_value(json!({
                "id": format!("s{i}"), "date": "2024-03-01",
                "metadata": {"user_id": format!("u{i}")},
                "messages": [
                    {"role": "user", "text": format!("I moved to Lisbon with Maya in year {i}.")},
                    {"role": "assistant", "text": "Noted."}]
            }))
            .expect("session")
        })
        .collect();
    e.writes()
        .ingest_sessions(&space, sessions, &WriteOptions::default())
        .expect("ingest");
    // A filter admitting u1 with a filler of `len` bytes, distinct per `i`.
    let scope = |i: usize, len: usize| {
        let filler = format!("{i}-{}", "x".repeat(len));
        ScopeOptions {
            filter: Some(json!({"user_id": {"in": ["u1", filler]}})),
            ..Default::default()
        }
        .scope()
        .expect("scope")
    };
    let read = |e: &Engine, i: usize, len: usize| {
        let entities = e
            .knowledge()
            .entities(&space, None, &scope(i, len))
            .expect("entities");
        assert!(
            entities.iter().any(|x| x.name == "Lisbon"),
            "the filter admits u1's session"
        );
    };
    // Forty distinct filters of 10 bytes, then forty of 64 KiB (2.5 MiB of filter text):
    // the cache keeps each one's admitted sessions and entity graph, and the same bytes
    // for both, since nothing it keeps holds a filter's text.
    let large = 64 << 10;
    let held = |e: &mut Engine, len: usize| {
        e.derived = super::cache::SpaceCache::default();
        for i in 0..40 {
            read(e, i, len);
        }
        assert!(
            e.derived.len() > 80,
            "{} entries: the scopes' reads were not cached",
            e.derived.len()
        );
        e.derived.bytes()
    };
    let (small_held, large_held) = (held(&mut e, 10), held(&mut e, large));
    assert_eq!(
        small_held, large_held,
        "the cache holds {small_held} bytes after 40 filters of 10 bytes, {large_held} after 40 of {large}"
    );
    // Under a budget smaller than what those reads cache, the total stays under it and
    // the latest entries are kept.
    let budget = large_held / 4;
    e.derived = super::cache::SpaceCache::with_budget(budget);
    for i in 0..40 {
        read(&e, i, large);
        assert!(
            e.derived.bytes() <= budget,
            "{} bytes held under a budget of {budget}",
            e.derived.bytes()
        );
    }
    assert!(e.derived.len() > 0, "nothing was kept");
}

/// A stored session is bounded as a whole (issue 54, finding 8): an append that would take
/// it past `MAX_SESSION_BYTES` is refused as a size error naming `messages`, and writes
/// nothing; so is a group message joining a day that full. Before, a session grew
/// without bound, and every append to it cost CPU in proportion to its size under the
/// write lock.
#[test]
fn an_append_past_the_session_size_bound_is_refused_and_writes_nothing() {
    use cairn_core::bounds::MAX_SESSION_BYTES;
    use cairn_core::bounds::MAX_TEXT_BYTES;
    use cairn_core::{AppendInput, GroupMessage, TooLarge};
    let dir = tempfile::tempdir().expect("tempdir");
    let e = engine(dir.path());
    let space = SpaceId::new("long").expect("space");
    let opts = WriteOptions::default();
    let texts = |n: usize| -> Vec<serde_json::Value> {
        (0..n)
            .map(|i| json!({"role": "user", "text": format!("{i}").repeat(MAX_TEXT_BYTES)}))
            .collect()
    };
    let append = |messages: Vec<serde_json::Value>| {
        let input: AppendInput =
            serde_json::from_value(json!({"session_id": "s", "messages": messages}))
                .expect("append input");
        e.writes().append(&space, input, &opts)
    };
    // Seven messages of 1 MiB: within the bound.
    append(texts(7)).expect("seven MiB");
    // Two more would make 9 MiB.
    let err = append(texts(2)).expect_err("past the bound");
    let super::error::EngineError::Input(i) = err else {
        panic!("not an input error: {err}");
    };
    assert_eq!(i.too_large, Some(TooLarge::Session), "{i}");
    assert_eq!(i.field.as_deref(), Some("messages"), "{i}");
    assert!(
        i.to_string().contains(&MAX_SESSION_BYTES.to_string()),
        "{i}"
    );
    let stored = e.b.records.get_session(&space, "s").expect("read");
    assert_eq!(stored.map(|r| r.session.messages.len()), Some(7));
    // What still fits is taken.
    append(vec![json!({"role": "user", "text": "one more"})]).expect("a short append");
    // A group's day is a session too: a message that would take it past the bound is
    // refused the same way.
    let day = |text: String| -> GroupMessage {
        serde_json::from_value(json!({
            "group": "team", "speaker": "Ana", "time": "2024-03-01T10:00:00Z", "text": text
        }))
        .expect("group message")
    };
    for i in 0..8 {
        e.writes()
            .ingest_group_messages(
                &space,
                vec![day(format!("{i}").repeat(MAX_TEXT_BYTES - 100))],
                &opts,
            )
            .expect("a day's message within the bound");
    }
    let err = e
        .writes()
        .ingest_group_messages(&space, vec![day("9".repeat(MAX_TEXT_BYTES))], &opts)
        .expect_err("a day past the bound");
    assert!(
        matches!(&err, super::error::EngineError::Input(i) if i.too_large == Some(TooLarge::Session)),
        "{err}"
    );
}

/// The real text index, counting the entries each write hands it.
struct Counted {
    inner: Arc<dyn TextIndex>,
    upserted: AtomicUsize,
    removed: AtomicUsize,
}

impl TextIndex for Counted {
    fn upsert(&self, units: &[Unit]) -> Result<(), StoreError> {
        self.upserted.fetch_add(units.len(), Ordering::SeqCst);
        self.inner.upsert(units)
    }
    fn remove(&self, space: &SpaceId, ids: &[String]) -> Result<(), StoreError> {
        self.removed.fetch_add(ids.len(), Ordering::SeqCst);
        self.inner.remove(space, ids)
    }
    fn remove_forgotten(&self, space: &SpaceId, ids: &[String]) -> Result<(), StoreError> {
        self.removed.fetch_add(ids.len(), Ordering::SeqCst);
        self.inner.remove_forgotten(space, ids)
    }
    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError> {
        self.inner.drop_space(space)
    }
    fn commit(&self, watermark: u64) -> Result<(), StoreError> {
        self.inner.commit(watermark)
    }
    fn has_pending(&self) -> bool {
        self.inner.has_pending()
    }
    fn searches_pending(&self) -> bool {
        self.inner.searches_pending()
    }
    fn watermark(&self) -> Result<u64, StoreError> {
        self.inner.watermark()
    }
    fn search(&self, q: &TextQuery<'_>) -> Result<Vec<(String, f32)>, StoreError> {
        self.inner.search(q)
    }
    fn count(&self, space: &SpaceId) -> Result<Option<usize>, StoreError> {
        self.inner.count(space)
    }
    fn ids(&self, space: &SpaceId) -> Result<Option<Vec<String>>, StoreError> {
        self.inner.ids(space)
    }
    fn scrub(&self) -> Result<(), StoreError> {
        self.inner.scrub()
    }
}

/// A forget of one exchange of a long session indexes again (text and vectors) only
/// the units that held it: the units after it move up the session but hold what they
/// held, so the forget's index work, and the text segments its scrub rewrites, do not
/// grow with the session (issue 52).
#[test]
fn forgetting_an_exchange_of_a_long_session_indexes_again_only_the_units_that_held_it() {
    let index_work = |n: usize| {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = cairn_store::EmbeddedStore::open(dir.path(), HASH_MODEL).expect("store");
        let text = Arc::new(Counted {
            inner: store.text,
            upserted: AtomicUsize::new(0),
            removed: AtomicUsize::new(0),
        });
        let backends = EngineBackends {
            records: store.records,
            text: text.clone(),
            vectors: store.vectors,
            embedder: Arc::new(HashEmbedder),
            cache: Arc::new(
                cairn_store::SqliteEmbeddingCache::open(&dir.path().join("cache.sqlite3"))
                    .expect("cache"),
            ),
            enrich: None,
        };
        let e = Engine::open(backends, EngineConfig::default()).expect("engine");
        let space = SpaceId::new("diary").expect("space");
        let messages: Vec<_> = (0..n)
            .map(|i| json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "text": format!("Entry {i}: the tomatoes need water.")}))
            .collect();
        let s: SessionInput =
            serde_json::from_value(json!({"id": "d", "messages": messages})).expect("session");
        e.writes()
            .ingest_sessions(&space, vec![s], &WriteOptions::default())
            .expect("ingest");
        let units = e.b.records.session_units(&space, "d").expect("units").len();
        let (upserted, removed) = (
            text.upserted.swap(0, Ordering::SeqCst),
            text.removed.swap(0, Ordering::SeqCst),
        );
        assert!(upserted > 0 && removed == 0, "{upserted} {removed}");
        let report = e
            .forgetting()
            .forget_message_with(&space, "d", &format!("{}", n / 2), true)
            .expect("forget");
        assert_eq!(report.forgotten_messages.len(), 2);
        let work = text.upserted.load(Ordering::SeqCst) + text.removed.load(Ordering::SeqCst);
        (work, units)
    };
    let (small, small_units) = index_work(40);
    let (large, large_units) = index_work(160);
    assert!(
        large_units >= 3 * small_units,
        "{small_units} -> {large_units}"
    );
    assert!(small > 0, "the forget removed nothing from the index");
    assert!(
        large <= small + 4,
        "the forget's index work: {small} entries in a session of {small_units} units, {large} in one of {large_units}"
    );
}
