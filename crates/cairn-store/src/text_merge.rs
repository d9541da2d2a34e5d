//! How the text index's segments are merged (like sizes, under a cap) and which segments
//! a scrub must rewrite after a forget.
use std::collections::{HashMap, HashSet};
use tantivy::index::{SegmentId, SegmentMeta};
use tantivy::indexer::{LogMergePolicy, MergeCandidate, MergePolicy};
use tantivy::schema::Field;
use tantivy::Term;

/// tantivy's log merge policy, whose merges are cut into groups of at most `cap`
/// documents (its own setting only stops a large segment from being merged again, not
/// many small ones from making a large one), each of segments of like size (at most
/// [`LIKE_SIZES`] times the smallest's documents).
/// How many times the smallest segment of a merge the others may hold. tantivy's
/// policy puts every segment under 10,000 documents in one level, so the small segments
/// of recent writes were merged into what was left of a large import, and forgetting a
/// message written a minute before rewrote thousands of documents (108 ms at 125,000
/// units in the live loop). Merged with their like, recent writes stay in small
/// segments until there are enough of them to make a larger one.
pub(crate) const LIKE_SIZES: u32 = 8;

#[derive(Debug)]
pub(crate) struct CappedMerges {
    log: LogMergePolicy,
    cap: u32,
}

impl CappedMerges {
    pub(crate) fn new(cap: usize) -> Self {
        let mut log = LogMergePolicy::default();
        log.set_max_docs_before_merge(cap);
        Self {
            log,
            cap: u32::try_from(cap).unwrap_or(u32::MAX),
        }
    }
}

impl MergePolicy for CappedMerges {
    fn compute_merge_candidates(&self, segments: &[SegmentMeta]) -> Vec<MergeCandidate> {
        let docs: HashMap<SegmentId, u32> =
            segments.iter().map(|m| (m.id(), m.max_doc())).collect();
        self.log
            .compute_merge_candidates(segments)
            .into_iter()
            .flat_map(|MergeCandidate(ids)| {
                let sized = ids
                    .into_iter()
                    .map(|id| (id, docs.get(&id).copied().unwrap_or(0)));
                capped_groups(sized, self.cap, LIKE_SIZES)
            })
            .filter(|(ids, _)| ids.len() > 1)
            .map(|(ids, _)| MergeCandidate(ids))
            .collect()
    }
}

/// Segments (with their document counts) in groups of at most `cap` documents, each of
/// segments holding at most `like` times the documents of its smallest, smallest first
/// (so most segments find a group); each group with its document count. The merge
/// policy's groups ([`LIKE_SIZES`]), and a scrub's (any sizes: each group is merged into
/// one segment, so rewriting the few small segments a recent write left costs one merge,
/// each merge syncing its files and the index's metadata); neither makes a segment past
/// the cap.
pub(crate) fn capped_groups(
    segments: impl IntoIterator<Item = (SegmentId, u32)>,
    cap: u32,
    like: u32,
) -> Vec<(Vec<SegmentId>, u64)> {
    let mut by_size: Vec<(SegmentId, u32)> = segments.into_iter().collect();
    by_size.sort_by_key(|&(_, n)| n);
    let mut groups: Vec<(Vec<SegmentId>, u64, u32)> = Vec::new();
    for (id, n) in by_size {
        match groups.last_mut() {
            Some((ids, docs, smallest))
                if *docs + u64::from(n) <= u64::from(cap)
                    && n <= (*smallest).max(1).saturating_mul(like) =>
            {
                ids.push(id);
                *docs += u64::from(n);
            }
            _ => groups.push((vec![id], u64::from(n), n)),
        }
    }
    groups
        .into_iter()
        .map(|(ids, docs, _)| (ids, docs))
        .collect()
}

/// What the next [`TextIndex::scrub`] must rewrite: the committed segments that held
/// removed entries, the segments committed before the first of those removals, and the
/// removed entries' terms. A segment newer than those is rewritten when it holds one of
/// the terms: a merge of a target, or the segment a commit made of an entry removed
/// before any commit held it (a deleted document's terms stay in its segment's term
/// dictionary until a merge). Not every newer segment with a deletion: one a background
/// merge made of other writes' replaced entries is not the forget's to rewrite.
///
/// [`TextIndex::scrub`]: cairn_core::TextIndex::scrub
#[derive(Default)]
pub(crate) struct ScrubPlan {
    pub(crate) targets: HashSet<SegmentId>,
    pub(crate) older: Option<HashSet<SegmentId>>,
    pub(crate) terms: Vec<Term>,
}

/// Whether the segment's term dictionaries hold one of `terms` (a deleted document's
/// included); an unreadable one counts as holding them, so it is rewritten rather than
/// a removal left behind.
pub(crate) fn holds_any(r: &tantivy::SegmentReader, terms: &[Term]) -> bool {
    let mut by_field: HashMap<Field, Vec<&Term>> = HashMap::new();
    for t in terms {
        by_field.entry(t.field()).or_default().push(t);
    }
    by_field
        .into_iter()
        .any(|(field, terms)| match r.inverted_index(field) {
            Ok(inverted) => terms
                .iter()
                .any(|t| inverted.doc_freq(t).map_or(true, |n| n > 0)),
            Err(_) => true,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::schema;
    use tantivy::Index;

    /// Merges gather segments of like size under the cap: the small segments of recent
    /// writes are merged together, never into what is left of a large import.
    #[test]
    fn merges_gather_segments_of_like_size_under_the_cap() {
        let (schema, _) = schema();
        let index = Index::create_in_ram(schema);
        let sizes = [9_000, 4_000, 12, 10, 10, 9, 11, 10, 15, 70];
        let metas: Vec<SegmentMeta> = sizes
            .iter()
            .map(|&n| index.new_segment_meta(SegmentId::generate_random(), n))
            .collect();
        let size_of: HashMap<SegmentId, u32> =
            metas.iter().map(|m| (m.id(), m.max_doc())).collect();
        let merges = CappedMerges::new(20_000).compute_merge_candidates(&metas);
        assert!(
            !merges.is_empty(),
            "ten segments under 10,000 documents make a level"
        );
        let mut merged = 0;
        for MergeCandidate(ids) in &merges {
            let docs: Vec<u32> = ids.iter().map(|id| size_of[id]).collect();
            let (small, large) = (docs.iter().min().unwrap(), docs.iter().max().unwrap());
            assert!(*large <= small * LIKE_SIZES, "{docs:?} merged together");
            assert!(docs.iter().sum::<u32>() <= 20_000);
            merged += docs.len();
        }
        // The eight small ones together, the two large ones together.
        assert_eq!((merges.len(), merged), (2, 10), "{merges:?}");
    }
}
