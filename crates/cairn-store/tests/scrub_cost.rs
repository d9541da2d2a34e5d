//! A forget costs its space, not the server (issue 54, finding 5): the text index's scrub
//! rewrote every segment holding a deletion, so a forget in a small space rewrote other
//! tenants' segments (a 34 MB one in the report), whatever their size. Now a scrub
//! rewrites only the segments holding what was forgotten, and no segment holds more than
//! the cap. Counted in documents rewritten, not timed.
use cairn_core::{SpaceId, TextIndex, TextQuery, Unit};
use cairn_store::TantivyTextIndex;

fn space(name: &str) -> SpaceId {
    SpaceId::new(name).unwrap()
}

fn units(space: &SpaceId, session: &str, n: usize, text: &str) -> Vec<Unit> {
    (0..n)
        .map(|i| {
            cairn_testkit::fixtures::unit(
                space,
                &format!("u:{session}:{i}"),
                session,
                &format!("{text} number {i}"),
                text,
            )
        })
        .collect()
}

fn found(index: &TantivyTextIndex, space: &SpaceId, text: &str) -> usize {
    index
        .search(&TextQuery {
            space,
            text,
            kinds: None,
            sessions: None,
            text_weight: 1.0,
            limit: 1000,
        })
        .unwrap()
        .len()
}

/// Another space's segments with deletions of their own (entries replaced by its
/// appends) are not the forget's to rewrite.
#[test]
fn a_forget_rewrites_no_segment_of_other_spaces() {
    let dir = tempfile::tempdir().unwrap();
    let index = TantivyTextIndex::open_with(&dir.path().join("text"), 1000).unwrap();
    let (big, small) = (space("big"), space("small"));
    // Three segments of the big space (fewer than a merge gathers), then the small one's.
    for s in ["b1", "b2", "b3"] {
        index.upsert(&units(&big, s, 300, "ledger entry")).unwrap();
        index.commit(1).unwrap();
    }
    let mut own = units(&small, "a1", 2, "secret zuvefadi");
    own.extend(units(&small, "a2", 1, "kept note"));
    index.upsert(&own).unwrap();
    index.commit(2).unwrap();
    // The big space's appends replace entries in each of its segments.
    for s in ["b1", "b2", "b3"] {
        index.upsert(&units(&big, s, 1, "ledger entry")).unwrap();
    }
    index.commit(3).unwrap();
    // The small space forgets its session.
    let ids: Vec<String> = units(&small, "a1", 2, "")
        .into_iter()
        .map(|u| u.id)
        .collect();
    index.remove_forgotten(&small, &ids).unwrap();
    index.commit(4).unwrap();
    index.scrub().unwrap();
    assert_eq!(found(&index, &small, "zuvefadi"), 0);
    assert_eq!(found(&index, &big, "ledger"), 900);
    assert_eq!(found(&index, &small, "note"), 1);
    // (A segment left with no live document is dropped without a rewrite.)
    assert_eq!(
        index.docs_rewritten(),
        3,
        "only the small space's segment is rewritten"
    );
}

/// One large write (an import) is cut into segments of the cap: forgetting one of its
/// units rewrites one of them, not the whole write.
#[test]
fn a_forget_rewrites_at_most_a_capped_segment() {
    let dir = tempfile::tempdir().unwrap();
    let cap = 500;
    let index = TantivyTextIndex::open_with(&dir.path().join("text"), cap).unwrap();
    let (big, small) = (space("big"), space("small"));
    let mut batch = units(&big, "b1", 3 * cap, "ledger entry");
    batch.insert(cap + 7, units(&small, "a1", 1, "secret zuvefadi").remove(0));
    index.upsert(&batch).unwrap();
    index.commit(1).unwrap();
    assert_eq!(found(&index, &small, "zuvefadi"), 1);
    index
        .remove_forgotten(&small, &["u:a1:0".to_string()])
        .unwrap();
    index.commit(2).unwrap();
    index.scrub().unwrap();
    assert_eq!(found(&index, &small, "zuvefadi"), 0);
    let rewritten = index.docs_rewritten();
    assert!(
        (1..=cap as u64).contains(&rewritten),
        "rewrote {rewritten} documents, the cap is {cap}"
    );
}

/// What a forget's re-derivation replaces, and a removal before the commit that would
/// have written it, are scrubbed too: the segment written after the removal holds the
/// deleted document.
#[test]
fn a_removal_before_its_commit_is_scrubbed_too() {
    let dir = tempfile::tempdir().unwrap();
    let index = TantivyTextIndex::open_with(&dir.path().join("text"), 1000).unwrap();
    let small = space("small");
    index
        .upsert(&units(&small, "a1", 3, "secret zuvefadi"))
        .unwrap();
    index
        .remove_forgotten(&small, &["u:a1:0".to_string()])
        .unwrap();
    index.commit(1).unwrap();
    index.scrub().unwrap();
    assert_eq!(index.docs_rewritten(), 3);
    assert_eq!(found(&index, &small, "zuvefadi"), 2);
}

/// A segment committed after the forget began is rewritten only when it holds what was
/// forgotten: one with another write's replaced entry is not the forget's to rewrite
/// (every newer segment with a deletion was, when the removal came before its commit).
#[test]
fn a_newer_segment_without_the_forgotten_entries_is_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let index = TantivyTextIndex::open_with(&dir.path().join("text"), 1000).unwrap();
    let (big, small) = (space("big"), space("small"));
    index
        .upsert(&units(&big, "b1", 300, "ledger entry"))
        .unwrap();
    index.commit(1).unwrap();
    // Written and forgotten before any commit held it.
    index
        .upsert(&units(&small, "a1", 3, "secret zuvefadi"))
        .unwrap();
    index
        .remove_forgotten(&small, &["u:a1:0".to_string()])
        .unwrap();
    index.commit(2).unwrap();
    // Another space writes, then replaces one of those entries: a newer segment with a
    // deletion of its own.
    index
        .upsert(&units(&big, "b2", 50, "ledger entry"))
        .unwrap();
    index.commit(3).unwrap();
    index.upsert(&units(&big, "b2", 1, "ledger entry")).unwrap();
    index.commit(4).unwrap();
    index.scrub().unwrap();
    assert_eq!(found(&index, &small, "zuvefadi"), 2);
    assert_eq!(found(&index, &big, "ledger"), 350);
    assert_eq!(
        index.docs_rewritten(),
        3,
        "only the segment holding the forgotten entry is rewritten"
    );
}
