//! What the text index holds between commits, searchable before them (issue 52).
//!
//! A tantivy commit serializes a segment and syncs it: about 10 ms on the 2-core
//! reference machine, whatever the write. Commits are deferred (`committer.rs` in the
//! engine), and every recall used to commit first so that it saw the last write: a live
//! agent paid a commit on every turn. Instead, the index keeps beside its writer what was
//! written since the last commit: each added document's terms, and the keys of the
//! documents deleted or replaced (and the spaces dropped). A search then reads the
//! committed segments with those documents hidden, scores the pending documents in memory
//! with the same BM25 weights, and merges the two: the answer a search after a commit
//! would give, without the commit.
//!
//! The statistics agree too: the documents hidden are left out of a search's reach and
//! the pending ones counted in it ([`crate::text_reach::Reach`]), lengths quantized as
//! tantivy's field norms are. The set is cleared by the commit that makes it durable,
//! under the same locks (see `TantivyTextIndex::commit`).
use std::collections::{HashMap, HashSet};
use tantivy::fieldnorm::FieldNormReader;
use tantivy::query::{Bm25StatisticsProvider, Bm25Weight};
use tantivy::schema::Field;
use tantivy::{DocAddress, DocId};
use tantivy::{Score, Term};

/// The committed documents a search must skip (replaced or deleted since the last
/// commit), by segment, each segment's in order: a segment with none costs nothing per
/// document, one with some a binary search.
#[derive(Default)]
pub(crate) struct Hidden(HashMap<u32, Vec<DocId>>);

impl Hidden {
    pub(crate) fn of(addresses: impl IntoIterator<Item = DocAddress>) -> Self {
        let mut by_segment: HashMap<u32, Vec<DocId>> = HashMap::new();
        for a in addresses {
            by_segment.entry(a.segment_ord).or_default().push(a.doc_id);
        }
        by_segment
            .values_mut()
            .for_each(|docs| docs.sort_unstable());
        Self(by_segment)
    }

    /// The hidden documents of one segment (by its place in the searcher), in order.
    pub(crate) fn in_segment(&self, segment_ord: u32) -> &[DocId] {
        self.0.get(&segment_ord).map_or(&[], Vec::as_slice)
    }
}

/// Whether `doc` is among `hidden` (one segment's, in order).
pub(crate) fn hides(hidden: &[DocId], doc: DocId) -> bool {
    !hidden.is_empty() && hidden.binary_search(&doc).is_ok()
}

/// Beyond this many pending documents a search commits first rather than scan them all
/// (an import or a rebuild writes thousands at once; a live agent writes a few a turn).
pub(crate) const SEARCHABLE_PENDING: usize = 1_024;

/// One document written since the last commit.
#[derive(Clone)]
pub(crate) struct PendingDoc {
    pub unit_id: String,
    pub space: String,
    pub kind: String,
    pub session: String,
    /// Per indexed field (key, text): each space-scoped term's count, and the field's
    /// length in tokens.
    pub fields: Vec<(Field, HashMap<String, u32>, u32)>,
}

impl PendingDoc {
    fn term_freq(&self, term: &Term) -> Option<(u32, u32)> {
        let (_, terms, len) = self.fields.iter().find(|(f, _, _)| *f == term.field())?;
        let tf = *terms.get(term.value().as_str()?)?;
        Some((tf, *len))
    }

    /// The field's length as tantivy records it: quantized to a field norm.
    pub(crate) fn norm(&self, field: Field) -> u32 {
        let len = self
            .fields
            .iter()
            .find(|(f, _, _)| *f == field)
            .map_or(0, |(_, _, n)| *n);
        FieldNormReader::id_to_fieldnorm(FieldNormReader::fieldnorm_to_id(len))
    }

    pub(crate) fn holds(&self, term: &Term) -> bool {
        self.term_freq(term).is_some()
    }

    /// The document's BM25 score for `weights` (each query term's weight, boost
    /// applied, see [`weights`]), as the committed segments are scored: `None` when it
    /// holds none of the terms.
    pub(crate) fn score(&self, weights: &[(Term, Bm25Weight)]) -> Option<Score> {
        let mut total: Option<Score> = None;
        for (term, weight) in weights {
            let Some((tf, len)) = self.term_freq(term) else {
                continue;
            };
            let norm = FieldNormReader::fieldnorm_to_id(len);
            *total.get_or_insert(0.0) += weight.score(norm, tf);
        }
        total
    }
}

/// Each of `terms`' BM25 weight (with its boost) under `statistics`, as tantivy weighs
/// a term query: computed once per search, not per pending document.
pub(crate) fn weights(
    terms: &[(Term, Score)],
    statistics: &dyn Bm25StatisticsProvider,
) -> tantivy::Result<Vec<(Term, Bm25Weight)>> {
    terms
        .iter()
        .map(|(term, boost)| {
            let field = term.field();
            let docs = statistics.total_num_docs()?;
            let average = statistics.total_num_tokens(field)? as Score / docs as Score;
            let weight =
                Bm25Weight::for_one_term_without_explain(statistics.doc_freq(term)?, docs, average);
            Ok((term.clone(), weight.boost_by(*boost)))
        })
        .collect()
}

/// What was written since the last commit.
#[derive(Default)]
pub(crate) struct Pending {
    /// Documents added, by document key (the last version of each).
    docs: HashMap<String, PendingDoc>,
    /// Document keys deleted or replaced: their committed versions are hidden.
    hidden: HashSet<String>,
    /// Spaces dropped: every committed document of theirs is hidden.
    dropped: HashSet<String>,
}

impl Pending {
    pub(crate) fn add(&mut self, key: String, doc: PendingDoc) {
        self.hidden.insert(key.clone());
        self.docs.insert(key, doc);
    }

    pub(crate) fn delete(&mut self, key: &str) {
        self.hidden.insert(key.to_string());
        self.docs.remove(key);
    }

    pub(crate) fn drop_space(&mut self, space: &str) {
        self.dropped.insert(space.to_string());
        self.docs.retain(|_, d| d.space != space);
    }

    pub(crate) fn clear(&mut self) {
        *self = Self::default();
    }

    /// Whether a search may read the set rather than commit it first.
    pub(crate) fn searchable(&self) -> bool {
        self.docs.len() + self.hidden.len() <= SEARCHABLE_PENDING
    }

    pub(crate) fn dropped(&self, space: &str) -> bool {
        self.dropped.contains(space)
    }

    /// The keys hidden in `space` (document keys start with the space, see `in_space`).
    pub(crate) fn hidden_in<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> {
        self.hidden
            .iter()
            .filter(move |k| k.starts_with(prefix))
            .map(String::as_str)
    }

    /// The pending documents of `space`.
    pub(crate) fn of_space<'a>(&'a self, space: &'a str) -> impl Iterator<Item = &'a PendingDoc> {
        self.docs.values().filter(move |d| d.space == space)
    }
}
