//! The words of a lexical search as a tantivy query that keeps block-max WAND.
//!
//! Tantivy prunes a disjunction of term queries with block-max WAND (skipping the blocks
//! of postings that cannot reach the top), but only when every term's postings of the
//! segment carry frequencies, and a term a segment lacks gets empty postings without
//! them. So one query word missing from one segment (a rare word, a word only the other
//! field holds, a word the space never used) had that segment score every document
//! holding any of the others. [`PresentTerms`] gives each segment only the terms it
//! holds; the scores are those of the plain disjunction (an absent term adds nothing).
//! [`top_docs`] then carries the threshold from segment to segment.
use crate::text_pending::{hides, Hidden};
use std::collections::BinaryHeap;
use std::sync::Arc;
use tantivy::query::{
    Bm25StatisticsProvider, BooleanWeight, EnableScoring, Explanation, Occur, Query, Scorer,
    SumCombiner, TermQuery, Weight,
};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocId, Score, Searcher, SegmentReader, Term};

/// A disjunction of terms, each with its boost, scored BM25 with frequencies.
#[derive(Clone, Debug)]
pub(crate) struct PresentTerms {
    terms: Vec<(Term, Score)>,
}

impl PresentTerms {
    pub(crate) fn new(terms: Vec<(Term, Score)>) -> Self {
        Self { terms }
    }
}

impl Query for PresentTerms {
    fn weight(&self, enable_scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        let clauses = self
            .terms
            .iter()
            .map(|(term, boost)| {
                let weight = TermQuery::new(term.clone(), IndexRecordOption::WithFreqs)
                    .weight(enable_scoring)?;
                Ok(Clause {
                    term: term.clone(),
                    boost: *boost,
                    weight: Arc::from(weight),
                })
            })
            .collect::<tantivy::Result<_>>()?;
        Ok(Box::new(PresentTermsWeight {
            clauses,
            scoring: enable_scoring.is_scoring_enabled(),
        }))
    }

    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a Term, bool)) {
        for (term, _) in &self.terms {
            visitor(term, false);
        }
    }
}

struct Clause {
    term: Term,
    boost: Score,
    weight: Arc<dyn Weight>,
}

/// One term's weight shared by every segment's disjunction, its boost applied the way
/// tantivy's `BoostWeight` does (to the term scorer itself, which WAND needs).
struct Shared {
    boost: Score,
    weight: Arc<dyn Weight>,
}

impl Weight for Shared {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        self.weight.scorer(reader, boost * self.boost)
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let inner = self.weight.explain(reader, doc)?;
        let mut e = Explanation::new_with_string(
            format!("Boost x{}", self.boost),
            inner.value() * self.boost,
        );
        e.add_detail(inner);
        Ok(e)
    }
}

struct PresentTermsWeight {
    clauses: Vec<Clause>,
    scoring: bool,
}

impl PresentTermsWeight {
    /// The disjunction of the terms `reader`'s segment holds.
    fn in_segment(&self, reader: &SegmentReader) -> tantivy::Result<BooleanWeight<SumCombiner>> {
        let mut present: Vec<(Occur, Box<dyn Weight>)> = Vec::with_capacity(self.clauses.len());
        for c in &self.clauses {
            let held = reader
                .inverted_index(c.term.field())?
                .get_term_info(&c.term)?
                .is_some();
            if held {
                let shared = Shared {
                    boost: c.boost,
                    weight: c.weight.clone(),
                };
                present.push((Occur::Should, Box::new(shared)));
            }
        }
        Ok(BooleanWeight::new(
            present,
            self.scoring,
            Box::new(SumCombiner::default),
        ))
    }
}

impl Weight for PresentTermsWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        self.in_segment(reader)?.scorer(reader, boost)
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        self.in_segment(reader)?.explain(reader, doc)
    }

    fn for_each_pruning(
        &self,
        threshold: Score,
        reader: &SegmentReader,
        callback: &mut dyn FnMut(DocId, Score) -> Score,
    ) -> tantivy::Result<()> {
        self.in_segment(reader)?
            .for_each_pruning(threshold, reader, callback)
    }
}

/// The `limit` best documents for `query`, best first (equal scores: the earlier
/// document), as tantivy's `TopDocs` finds them, except that each segment is searched
/// with the threshold the segments before it reached: `TopDocs` starts every segment
/// from nothing, so block-max WAND pruned little in any segment but the first. Terms are
/// weighed by `statistics` (see [`crate::text_reach`]).
pub(crate) fn top_docs(
    searcher: &Searcher,
    query: &dyn Query,
    limit: usize,
    statistics: &dyn Bm25StatisticsProvider,
    hidden: &Hidden,
) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let weight = query.weight(EnableScoring::enabled_from_statistics_provider(
        statistics, searcher,
    ))?;
    let mut top: BinaryHeap<Worst> = BinaryHeap::with_capacity(limit + 1);
    for (ord, reader) in searcher.segment_readers().iter().enumerate() {
        let segment_ord = ord as u32;
        let alive = reader.alive_bitset();
        let hidden = hidden.in_segment(segment_ord);
        let mut threshold = bar(&top, limit);
        weight.for_each_pruning(threshold, reader, &mut |doc, score| {
            let address = DocAddress {
                segment_ord,
                doc_id: doc,
            };
            let gone = alive.is_some_and(|a| a.is_deleted(doc)) || hides(hidden, doc);
            if gone {
                return threshold;
            }
            top.push(Worst(score, address));
            if top.len() > limit {
                top.pop();
            }
            threshold = bar(&top, limit);
            threshold
        })?;
    }
    let mut out: Vec<Worst> = top.into_vec();
    out.sort();
    Ok(out.into_iter().map(|w| (w.0, w.1)).collect())
}

/// The score a document must beat to enter a full top `limit`.
fn bar(top: &BinaryHeap<Worst>, limit: usize) -> Score {
    match top.peek() {
        Some(w) if top.len() >= limit => w.0,
        _ => Score::MIN,
    }
}

/// A hit ordered worst first: the lower score, then the later address. Documents arrive
/// in address order, so a later one that ties the bar does not enter (nor does WAND,
/// which passes only scores above the threshold, offer it).
struct Worst(Score, DocAddress);

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then_with(|| {
            (self.1.segment_ord, self.1.doc_id).cmp(&(other.1.segment_ord, other.1.doc_id))
        })
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Worst {}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::collector::TopDocs;
    use tantivy::merge_policy::NoMergePolicy;
    use tantivy::query::{BooleanQuery, BoostQuery};
    use tantivy::schema::{Schema, TEXT};
    use tantivy::{doc, Index};

    /// A seeded xorshift: the test needs varied data, not a random-number crate.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Words of skewed frequency ("w0" in most documents), some of them held by one
    /// segment only, and some by one field only: what made tantivy give up WAND.
    fn word(r: &mut Rng, segment: u64) -> String {
        let w = r.below(40);
        let w = w * w / 40; // skewed towards the first words
        if w % 9 == 8 {
            format!("s{segment}w{w}")
        } else {
            format!("w{w}")
        }
    }

    #[test]
    fn present_terms_find_the_top_documents_the_plain_disjunction_finds() {
        let mut b = Schema::builder();
        let (key, text) = (
            b.add_text_field("key", TEXT),
            b.add_text_field("text", TEXT),
        );
        let index = Index::create_in_ram(b.build());
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        writer.set_merge_policy(Box::new(NoMergePolicy));
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for segment in 0..4 {
            for _ in 0..(300 + 400 * segment) {
                let k: Vec<String> = (0..1 + r.below(3)).map(|_| word(&mut r, segment)).collect();
                let t: Vec<String> = (0..2 + r.below(12))
                    .map(|_| word(&mut r, segment))
                    .collect();
                writer
                    .add_document(doc!(key => k.join(" "), text => t.join(" ")))
                    .unwrap();
            }
            if segment == 2 {
                // Deleted documents must stay out of the top.
                writer.delete_term(Term::from_field_text(key, "w1"));
            }
            writer.commit().unwrap();
        }
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.segment_readers().len(), 4);
        for case in 0..200 {
            let words: Vec<String> = (0..1 + r.below(5))
                .map(|_| {
                    let segment = r.below(5);
                    word(&mut r, segment)
                })
                .chain([format!("absent{case}")])
                .collect();
            let mut terms = Vec::new();
            let mut plain: Vec<(Occur, Box<dyn Query>)> = Vec::new();
            for w in &words {
                for (field, boost) in [(key, 1.0), (text, 0.35)] {
                    let term = Term::from_field_text(field, w);
                    terms.push((term.clone(), boost));
                    let q = TermQuery::new(term, IndexRecordOption::WithFreqs);
                    plain.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
                }
            }
            let limit = 1 + r.below(30) as usize;
            let ours = top_docs(
                &searcher,
                &PresentTerms::new(terms),
                limit,
                &searcher,
                &Default::default(),
            )
            .unwrap();
            let all = searcher
                .search(&BooleanQuery::new(plain), &TopDocs::with_limit(100_000))
                .unwrap();
            let expected: Vec<Score> = all.iter().take(limit).map(|h| h.0).collect();
            let got: Vec<Score> = ours.iter().map(|h| h.0).collect();
            assert_eq!(got.len(), expected.len(), "{words:?}");
            for (g, e) in got.iter().zip(&expected) {
                assert!(
                    (g - e).abs() < 1e-4,
                    "{words:?}: {got:?} against {expected:?}"
                );
            }
            for (score, addr) in &ours {
                let (s, _) = all
                    .iter()
                    .find(|h| h.1 == *addr)
                    .expect("a matching document");
                assert!((score - s).abs() < 1e-4, "{words:?}: {addr:?}");
            }
        }
    }
}
