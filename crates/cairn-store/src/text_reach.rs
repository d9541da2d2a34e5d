//! BM25's statistics over what one search may reach.
//!
//! Tantivy weighs a term by the whole index's document count and average field length,
//! and by the term's document frequency among every document holding it. Cairn's index
//! holds every space (its words are space-prefixed, so a frequency is already one
//! space's), and a scoped search (kinds, sessions: one end user's records in a shared
//! space) reaches part of a space. [`Reach`] counts the three over the documents the
//! search may reach instead, so a scoped search scores as a space holding only its
//! scope's records would score it, and no space's scores move with another space's
//! documents (issue 43: a scope answers as if the space held only what it sees).
//!
//! The cost is one walk of the reachable documents and of the query terms' postings
//! among them: linear in the scope, as the search itself is at worst.
use crate::text_pending::{hides, Hidden, PendingDoc};
use std::collections::HashMap;
use tantivy::query::{Bm25StatisticsProvider, EnableScoring, Query};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Searcher, Term, TERMINATED};

/// Document count, tokens per field and term frequencies of a search's reach.
pub(crate) struct Reach {
    docs: u64,
    tokens: Vec<(Field, u64)>,
    doc_freq: HashMap<Term, u64>,
}

impl Reach {
    /// Nothing reached yet: the statistics of an empty index.
    pub(crate) fn empty(fields: &[Field], terms: &[Term]) -> Self {
        Reach {
            docs: 0,
            tokens: fields.iter().map(|f| (*f, 0)).collect(),
            doc_freq: terms.iter().map(|t| (t.clone(), 0)).collect(),
        }
    }

    /// Counts the live documents `reach` matches, except those `hidden` (replaced or
    /// deleted since the last commit, see `text_pending.rs`), the tokens `fields` hold in
    /// them and, for each of `terms`, how many of them hold it.
    pub(crate) fn count(
        searcher: &Searcher,
        reach: &dyn Query,
        fields: &[Field],
        terms: &[Term],
        hidden: &Hidden,
    ) -> tantivy::Result<Self> {
        let weight = reach.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut out = Self::empty(fields, terms);
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let hidden = hidden.in_segment(ord as u32);
            let alive = reader.alive_bitset();
            // The reachable documents in order: a list of the reach, not a bitmap of the
            // segment, so a search costs what its space holds whatever the index holds.
            let mut within: Vec<DocId> = Vec::new();
            let norms = fields
                .iter()
                .map(|f| reader.get_fieldnorms_reader(*f))
                .collect::<tantivy::Result<Vec<_>>>()?;
            weight.for_each_no_score(reader, &mut |docs: &[DocId]| {
                for &doc in docs {
                    if alive.is_some_and(|a| a.is_deleted(doc)) || hides(hidden, doc) {
                        continue;
                    }
                    within.push(doc);
                    for (total, norm) in out.tokens.iter_mut().zip(&norms) {
                        total.1 += u64::from(norm.fieldnorm(doc));
                    }
                }
            })?;
            out.docs += within.len() as u64;
            if within.is_empty() {
                continue;
            }
            within.sort_unstable();
            for (term, n) in out.doc_freq.iter_mut() {
                let postings = reader
                    .inverted_index(term.field())?
                    .read_postings(term, IndexRecordOption::Basic)?;
                if let Some(mut p) = postings {
                    *n += holding(&within, &mut p);
                }
            }
        }
        Ok(out)
    }

    /// Counts the documents written since the last commit that the search reaches as
    /// the committed ones are counted (lengths as field norms).
    pub(crate) fn add_pending(&mut self, docs: &[&PendingDoc]) {
        for d in docs {
            self.docs += 1;
            for (field, total) in self.tokens.iter_mut() {
                *total += u64::from(d.norm(*field));
            }
            for (term, n) in self.doc_freq.iter_mut() {
                *n += u64::from(d.holds(term));
            }
        }
    }

    /// Whether the search can reach no document (it then finds nothing).
    pub(crate) fn is_empty(&self) -> bool {
        self.docs == 0
    }
}

/// How many of `within` (in order) the postings `p` hold: each step skips ahead in one
/// list to the other's next document.
fn holding(within: &[DocId], p: &mut impl DocSet) -> u64 {
    let mut n = 0;
    let mut i = 0;
    let mut doc = p.doc();
    while doc != TERMINATED && i < within.len() {
        if within[i] < doc {
            i += within[i..].partition_point(|&d| d < doc);
        } else if within[i] > doc {
            doc = p.seek(within[i]);
        } else {
            n += 1;
            i += 1;
            doc = p.advance();
        }
    }
    n
}

impl Bm25StatisticsProvider for Reach {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        Ok(self
            .tokens
            .iter()
            .find(|(f, _)| *f == field)
            .map_or(0, |(_, n)| *n))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.docs)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        Ok(self.doc_freq.get(term).copied().unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::holding;
    use tantivy::{DocId, DocSet, TERMINATED};

    /// Postings from a list (tantivy's own `VecDocSet` is test-only).
    struct Postings(Vec<DocId>, usize);

    impl DocSet for Postings {
        fn advance(&mut self) -> DocId {
            self.1 += 1;
            self.doc()
        }
        fn doc(&self) -> DocId {
            self.0.get(self.1).copied().unwrap_or(TERMINATED)
        }
        fn size_hint(&self) -> u32 {
            self.0.len() as u32
        }
    }

    /// The count is the size of the intersection, whichever list runs out first and
    /// however far either must skip.
    #[test]
    fn holding_counts_the_common_documents() {
        let cases: [(&[u32], &[u32], u64); 5] = [
            (&[1, 5, 9, 200], &[0, 5, 6, 9, 10, 300], 2),
            (&[], &[1, 2, 3], 0),
            (&[1, 2, 3], &[], 0),
            (&[7], &[7], 1),
            (
                &[2, 4, 6, 8, 1000, 5000],
                &[1, 3, 4, 8, 999, 1000, 4999, 5000, 6000],
                4,
            ),
        ];
        for (within, postings, want) in cases {
            let mut p = Postings(postings.to_vec(), 0);
            assert_eq!(holding(within, &mut p), want, "{within:?} {postings:?}");
        }
    }
}
