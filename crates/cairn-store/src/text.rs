use crate::text_merge::{capped_groups, holds_any, CappedMerges, ScrubPlan};
use crate::text_pending::{weights, Hidden, Pending, PendingDoc};
use crate::text_query::{top_docs, PresentTerms};
use crate::text_reach::Reach;
use crate::text_readonly::ReadOnlyDirectory;
use cairn_core::{SpaceId, StoreError, TextIndex, TextQuery, Unit};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tantivy::index::{SegmentId, SegmentMeta};
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STORED, STRING,
};
use tantivy::tokenizer::{
    Language, LowerCaser, PreTokenizedString, RemoveLongFilter, SimpleTokenizer, Stemmer,
    StopWordFilter, TextAnalyzer, Token, TokenStream,
};
use tantivy::{doc, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// Name of Cairn's English analyzer: simple tokenizer, long-token removal, lowercasing,
/// English stop words, Porter-style stemming.
pub const ANALYZER: &str = "cairn_en";

fn analyzer() -> TextAnalyzer {
    let builder = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser);
    match StopWordFilter::new(Language::English) {
        Some(stop) => builder
            .filter(stop)
            .filter(Stemmer::new(Language::English))
            .build(),
        None => builder.filter(Stemmer::new(Language::English)).build(),
    }
}

pub(crate) struct Fields {
    doc_key: Field,
    unit_id: Field,
    space: Field,
    kind: Field,
    session: Field,
    key: Field,
    text: Field,
}

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let analyzed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        // space + unit id: unique across the index, used to replace and delete.
        doc_key: b.add_text_field("doc_key", STRING),
        unit_id: b.add_text_field("unit_id", STRING | STORED),
        space: b.add_text_field("space", STRING),
        kind: b.add_text_field("kind", STRING),
        session: b.add_text_field("session", STRING),
        key: b.add_text_field("key", analyzed.clone()),
        text: b.add_text_field("text", analyzed),
    };
    (b.build(), fields)
}

/// `s` scoped to a space. Unit ids are scoped so a unit's document key is unique across
/// the index (it is replaced and deleted by it). Indexed words are scoped so a query's
/// terms reach only its own space's units, with no space filter to intersect (which
/// would keep tantivy from skipping blocks that cannot reach the top), and document
/// frequencies, hence BM25 weights, are each space's own.
fn in_space(space: &str, s: &str) -> String {
    format!("{space}\u{1f}{s}")
}

/// The layout of the indexed terms; an index written with another is rebuilt from the
/// records (see [`TantivyTextIndex::open`]).
const FORMAT: &str = "2: space-prefixed terms";
const FORMAT_FILE: &str = "cairn-format";

/// A tantivy error; one caused by a full or read-only disk is told apart (see `disk.rs`).
fn te(e: tantivy::TantivyError) -> StoreError {
    use tantivy::directory::error::{OpenDirectoryError, OpenReadError, OpenWriteError};
    use tantivy::TantivyError as T;
    let io = match &e {
        T::IoError(io)
        | T::OpenWriteError(OpenWriteError::IoError { io_error: io, .. })
        | T::OpenReadError(OpenReadError::IoError { io_error: io, .. })
        | T::OpenDirectoryError(OpenDirectoryError::IoError { io_error: io, .. }) => Some(io),
        _ => None,
    };
    match io.and_then(|io| crate::disk::io_kind(io)) {
        Some(kind) => crate::disk::unwritable(kind, format_args!("text index: {e}")),
        None => StoreError::Backend(format!("tantivy: {e}")),
    }
}

/// What of the pending set one search sees (see `searcher_with_pending`).
struct SeenPending {
    docs: Vec<PendingDoc>,
    hidden: Vec<Term>,
    dropped: bool,
}

/// The most documents a segment holds (a commit of more is cut, a merge capped): a forget rewrites
/// the segments holding what it removed (see [`TextIndex::scrub`]), so this bounds what
/// one forget rewrites however large the index, whoever else's documents share the
/// segment. A merge never makes a larger one ([`CappedMerges`]), and a write of more
/// documents (an import, a rebuild) commits every this many. A smaller cap rewrites less
/// per forget and leaves more segments for every search to read: 5,000 left 32 segments
/// at 100,000 units and a recall that looked twice as slow, so the cap is 20,000 (about 50
/// segments at a million units); measured in docs/benchmarks/forget-cost.md, not settled.
pub const SEGMENT_DOCS: usize = 20_000;

/// BM25 over units with tantivy: one index for all spaces; words are indexed and
/// searched as space-prefixed terms (see [`in_space`]), so no query can reach another
/// space.
pub struct TantivyTextIndex {
    index: Index,
    fields: Fields,
    /// `None` on a data directory that cannot be written: every write is refused.
    writer: Option<Mutex<IndexWriter>>,
    reader: IndexReader,
    pending: AtomicBool,
    /// What was written since the last commit, searchable before it (`text_pending.rs`).
    /// Taken after the writer, and by a search before its searcher: a commit clears it
    /// only once the reader shows the commit.
    written: RwLock<Pending>,
    /// Documents added since the last commit (see [`SEGMENT_DOCS`]).
    uncommitted: AtomicUsize,
    segment_docs: usize,
    plan: Mutex<ScrubPlan>,
    /// One scrub at a time: a forget whose removals another's scrub took into its plan
    /// waits for that rewrite before it is acknowledged.
    scrubbing: Mutex<()>,
    /// Documents (live or deleted) in the segments scrubs rewrote, since opening.
    rewritten: AtomicU64,
}

impl TantivyTextIndex {
    /// Opens (creating if needed) the index in `dir`. An index of an older term layout
    /// is emptied: its watermark is then 0, so the engine re-indexes every unit from the
    /// records on start.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        Self::open_with(dir, SEGMENT_DOCS)
    }

    /// [`TantivyTextIndex::open`] with segments of at most `segment_docs` documents
    /// (tests use small ones).
    pub fn open_with(dir: &Path, segment_docs: usize) -> Result<Self, StoreError> {
        let segment_docs = segment_docs.max(1);
        std::fs::create_dir_all(dir).map_err(|e| crate::io_err(dir, e))?;
        let format_file = dir.join(FORMAT_FILE);
        let format = std::fs::read_to_string(&format_file).unwrap_or_default();
        if format != FORMAT {
            if dir.join("meta.json").exists() {
                tracing::info!(dir = %dir.display(), "text index of an older layout; rebuilding");
                std::fs::remove_dir_all(dir).map_err(|e| crate::io_err(dir, e))?;
                std::fs::create_dir_all(dir).map_err(|e| crate::io_err(dir, e))?;
            }
            std::fs::write(&format_file, FORMAT).map_err(|e| crate::io_err(&format_file, e))?;
        }
        let (schema, fields) = schema();
        let mmap = tantivy::directory::MmapDirectory::open(dir).map_err(|e| te(e.into()))?;
        let index = Index::open_or_create(mmap, schema).map_err(te)?;
        index.tokenizers().register(ANALYZER, analyzer());
        // One indexing thread: ingest is already serialized by the engine, and the other
        // core is busy embedding.
        let writer = index
            .writer_with_num_threads(1, 64_000_000)
            .map_err(|e| match e {
                tantivy::TantivyError::LockFailure(..) => StoreError::Busy(format!(
                    "the data directory {} is in use by another Cairn process (a running `cairn serve`?); stop it first, or use that process (e.g. its HTTP API) instead",
                    dir.parent().unwrap_or(dir).display()
                )),
                other => te(other),
            })?;
        writer.set_merge_policy(Box::new(CappedMerges::new(segment_docs)));
        Self::with_index(index, fields, Some(writer), segment_docs)
    }

    /// The index in `dir` for reading only, on a data directory that cannot be written:
    /// its files read where they are ([`ReadOnlyDirectory`]), every write refused with
    /// `StoreError::ReadOnly`. An index of an older layout cannot be rebuilt there and
    /// is refused.
    pub fn open_read_only(dir: &Path) -> Result<Self, StoreError> {
        let format = std::fs::read_to_string(dir.join(FORMAT_FILE)).unwrap_or_default();
        if format != FORMAT {
            return Err(StoreError::ReadOnly(format!(
                "{}: the text index is of an older layout, which is rebuilt on opening; a read-only data directory cannot be, so open it writable once",
                dir.display()
            )));
        }
        let (_, fields) = schema();
        let mmap = tantivy::directory::MmapDirectory::open(dir).map_err(|e| te(e.into()))?;
        let index = Index::open(ReadOnlyDirectory(mmap)).map_err(te)?;
        index.tokenizers().register(ANALYZER, analyzer());
        Self::with_index(index, fields, None, SEGMENT_DOCS)
    }

    fn with_index(
        index: Index,
        fields: Fields,
        writer: Option<IndexWriter>,
        segment_docs: usize,
    ) -> Result<Self, StoreError> {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(te)?;
        Ok(Self {
            index,
            fields,
            writer: writer.map(Mutex::new),
            reader,
            pending: AtomicBool::new(false),
            written: RwLock::new(Pending::default()),
            uncommitted: AtomicUsize::new(0),
            segment_docs,
            plan: Mutex::new(ScrubPlan::default()),
            scrubbing: Mutex::new(()),
            rewritten: AtomicU64::new(0),
        })
    }

    /// Documents (live or deleted) in the segments that scrubs rewrote since opening:
    /// what forgets cost the index.
    pub fn docs_rewritten(&self) -> u64 {
        self.rewritten.load(Ordering::SeqCst)
    }

    /// Notes, before `term` is deleted, which committed segments hold documents with it:
    /// those the next scrub rewrites.
    fn plan_scrub(&self, terms: &[Term]) {
        let searcher = self.reader.searcher();
        let mut plan = self.plan.lock().unwrap_or_else(|p| p.into_inner());
        if plan.older.is_none() {
            plan.older = Some(
                searcher
                    .segment_readers()
                    .iter()
                    .map(|r| r.segment_id())
                    .collect(),
            );
        }
        for r in searcher.segment_readers() {
            if holds_any(r, terms) {
                plan.targets.insert(r.segment_id());
            }
        }
        plan.terms.extend_from_slice(terms);
    }

    /// Deletes the documents of `unit_ids`; `forgotten`: noted for the next scrub.
    fn remove_keys(
        &self,
        space: &SpaceId,
        unit_ids: &[String],
        forgotten: bool,
    ) -> Result<(), StoreError> {
        let terms: Vec<Term> = unit_ids
            .iter()
            .map(|id| Term::from_field_text(self.fields.doc_key, &in_space(space.as_str(), id)))
            .collect();
        if terms.is_empty() {
            return Ok(());
        }
        let writer = self.writer()?;
        if forgotten {
            self.plan_scrub(&terms);
        }
        let mut written = self.written_mut();
        for t in terms {
            if let Some(key) = t.value().as_str() {
                written.delete(key);
            }
            writer.delete_term(t);
        }
        self.pending.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Commits with the writer held; `watermark` as in [`TextIndex::commit`]. A failed
    /// commit discards what was pending ([`Self::discard`]).
    fn commit_with(&self, writer: &mut IndexWriter, watermark: u64) -> Result<(), StoreError> {
        let committed = (|w: &mut IndexWriter| {
            let mut prepared = w.prepare_commit()?;
            prepared.set_payload(&watermark.to_string());
            prepared.commit()
        })(writer);
        if let Err(e) = committed {
            self.discard(writer);
            return Err(te(e));
        }
        self.uncommitted.store(0, Ordering::SeqCst);
        // Searches see the commit before the pending set it made durable is cleared.
        let mut written = self.written_mut();
        self.reader.reload().map_err(te)?;
        written.clear();
        Ok(())
    }

    /// After a failed commit or a dead indexing thread (a full disk): the writer is
    /// replaced by one at the last commit, so the next writes and commits can succeed.
    /// What was pending is dropped; the index's watermark is still that commit's, and
    /// the engine indexes again every unit past it (`TextIndex::commit`).
    fn discard(&self, writer: &mut IndexWriter) {
        if let Err(e) = writer.rollback() {
            tracing::warn!(error = %e, "rolling the text index writer back failed");
        }
        self.pending.store(false, Ordering::SeqCst);
        self.uncommitted.store(0, Ordering::SeqCst);
        self.written_mut().clear();
    }

    // A panic while holding it leaves the set whole (each change is one map operation).
    fn written(&self) -> RwLockReadGuard<'_, Pending> {
        self.written.read().unwrap_or_else(|p| p.into_inner())
    }

    fn written_mut(&self) -> RwLockWriteGuard<'_, Pending> {
        self.written.write().unwrap_or_else(|p| p.into_inner())
    }

    /// A unit as the pending set keeps it: its filter fields and its fields' terms.
    fn pending_doc(
        &self,
        u: &Unit,
        key: &PreTokenizedString,
        text: &PreTokenizedString,
    ) -> PendingDoc {
        let count = |t: &PreTokenizedString| {
            let mut terms: HashMap<String, u32> = HashMap::new();
            for tok in &t.tokens {
                *terms.entry(tok.text.clone()).or_default() += 1;
            }
            (terms, t.tokens.len() as u32)
        };
        let ((k, kn), (x, xn)) = (count(key), count(text));
        PendingDoc {
            unit_id: u.id.clone(),
            space: u.space.as_str().to_string(),
            kind: u.kind.as_str().to_string(),
            session: u.provenance.session_id.clone().unwrap_or_default(),
            fields: vec![(self.fields.key, k, kn), (self.fields.text, x, xn)],
        }
    }

    fn writer(&self) -> Result<std::sync::MutexGuard<'_, IndexWriter>, StoreError> {
        let writer = self.writer.as_ref().ok_or_else(|| {
            crate::disk::unwritable(
                crate::disk::Unwritable::ReadOnly,
                "the text index was opened read-only",
            )
        })?;
        Ok(writer.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// `text` analyzed into the space's terms, ready to index.
    fn space_tokens(space: &str, text: &str) -> PreTokenizedString {
        let mut a = analyzer();
        let mut stream = a.token_stream(text);
        let mut tokens = Vec::new();
        while let Some(t) = stream.next() {
            tokens.push(Token {
                text: in_space(space, &t.text),
                ..t.clone()
            });
        }
        PreTokenizedString {
            text: text.to_string(),
            tokens,
        }
    }

    /// The analyzed terms of `text`, deduplicated, in first-seen order.
    pub fn analyze(&self, text: &str) -> Vec<String> {
        let mut a = analyzer();
        let mut stream = a.token_stream(text);
        let mut out: Vec<String> = Vec::new();
        while let Some(tok) = stream.next() {
            if !out.iter().any(|t| t == &tok.text) {
                out.push(tok.text.clone());
            }
        }
        out
    }

    /// BM25's statistics of what a search may reach: the documents of `space` that pass
    /// `filters` (its kinds and sessions), and how many of them hold each of `terms`.
    fn reach(
        &self,
        searcher: &tantivy::Searcher,
        space: &SpaceId,
        filters: &[(Occur, Box<dyn Query>)],
        terms: &[Term],
        hidden: &Hidden,
    ) -> Result<Reach, StoreError> {
        let f = &self.fields;
        let mut within: Vec<(Occur, Box<dyn Query>)> =
            filters.iter().map(|(o, q)| (*o, q.box_clone())).collect();
        within.push((
            Occur::Must,
            Box::new(TermQuery::new(
                Term::from_field_text(f.space, space.as_str()),
                IndexRecordOption::Basic,
            )),
        ));
        Reach::count(
            searcher,
            &BooleanQuery::new(within),
            &[f.key, f.text],
            terms,
            hidden,
        )
        .map_err(te)
    }

    /// A searcher, and what of the pending set a search of `space` sees: the documents
    /// `reaches` keeps, the keys hidden, whether the space was dropped. Taken together
    /// (the set before the searcher: a commit clears it only after the reader shows what
    /// it made durable) and copied, so writers wait for no search.
    fn searcher_with_pending(
        &self,
        space: &str,
        reaches: impl Fn(&PendingDoc) -> bool,
    ) -> (tantivy::Searcher, SeenPending) {
        let written = self.written();
        let searcher = self.reader.searcher();
        let prefix = in_space(space, "");
        let seen = SeenPending {
            docs: written
                .of_space(space)
                .filter(|d| reaches(d))
                .cloned()
                .collect(),
            hidden: written
                .hidden_in(&prefix)
                .map(|k| Term::from_field_text(self.fields.doc_key, k))
                .collect(),
            dropped: written.dropped(space),
        };
        (searcher, seen)
    }

    /// The committed documents the pending set replaced or deleted (`keys`).
    fn hidden(&self, searcher: &tantivy::Searcher, keys: &[Term]) -> Result<Hidden, StoreError> {
        if keys.is_empty() {
            return Ok(Hidden::default());
        }
        // Each key looked up in each segment's term dictionary: a set query would walk
        // the dictionary, which holds a key per document of the index.
        let mut found = Vec::new();
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let keys_of = reader.inverted_index(self.fields.doc_key).map_err(te)?;
            let alive = reader.alive_bitset();
            for key in keys {
                let Some(mut postings) = keys_of
                    .read_postings(key, IndexRecordOption::Basic)
                    .map_err(|e| te(e.into()))?
                else {
                    continue;
                };
                let mut doc = postings.doc();
                while doc != tantivy::TERMINATED {
                    if !alive.is_some_and(|a| a.is_deleted(doc)) {
                        found.push(tantivy::DocAddress::new(ord as u32, doc));
                    }
                    doc = postings.advance();
                }
            }
        }
        Ok(Hidden::of(found))
    }

    fn any_of(&self, field: Field, values: &[String]) -> Box<dyn Query> {
        let clauses: Vec<(Occur, Box<dyn Query>)> = values
            .iter()
            .map(|v| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(
                    Term::from_field_text(field, v),
                    IndexRecordOption::Basic,
                ));
                (Occur::Should, q)
            })
            .collect();
        // A filter: it must match but must not move the BM25 score.
        Box::new(BoostQuery::new(Box::new(BooleanQuery::new(clauses)), 0.0))
    }
}

impl TextIndex for TantivyTextIndex {
    fn upsert(&self, units: &[Unit]) -> Result<(), StoreError> {
        let f = &self.fields;
        let mut writer = self.writer()?;
        for u in units {
            let key = in_space(u.space.as_str(), &u.id);
            writer.delete_term(Term::from_field_text(f.doc_key, &key));
            let (key_tokens, text_tokens) = (
                Self::space_tokens(u.space.as_str(), &u.key),
                Self::space_tokens(u.space.as_str(), &u.text),
            );
            let pending = self.pending_doc(u, &key_tokens, &text_tokens);
            let added = writer.add_document(doc!(
                    f.doc_key => key.clone(),
                    f.unit_id => u.id.clone(),
                    f.space => u.space.as_str(),
                    f.kind => u.kind.as_str(),
                    f.session => u.provenance.session_id.clone().unwrap_or_default(),
                    f.key => key_tokens,
                    f.text => text_tokens,
            ));
            if let Err(e) = added {
                // The indexing thread died (it could not write a segment): the writer
                // takes nothing more until it is replaced. Its own error says why (the
                // writer's says only "killed"); preparing a commit joins it for that.
                let cause = writer.prepare_commit().err().unwrap_or(e);
                self.discard(&mut writer);
                return Err(te(cause));
            }
            self.written_mut().add(key, pending);
            self.pending.store(true, Ordering::SeqCst);
            if self.uncommitted.fetch_add(1, Ordering::SeqCst) + 1 >= self.segment_docs {
                // One commit makes one segment (one indexing thread): a write larger
                // than a segment may hold (an import, a rebuild) is cut here. At the
                // watermark already committed: these units' records are stored, and a
                // crash before the write's own commit indexes them again on open.
                let committed = self.watermark()?;
                self.commit_with(&mut writer, committed)?;
            }
        }
        Ok(())
    }

    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        self.remove_keys(space, unit_ids, false)
    }

    fn remove_forgotten(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        self.remove_keys(space, unit_ids, true)
    }

    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError> {
        let term = Term::from_field_text(self.fields.space, space.as_str());
        let writer = self.writer()?;
        self.plan_scrub(std::slice::from_ref(&term));
        writer.delete_term(term);
        self.written_mut().drop_space(space.as_str());
        self.pending.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn commit(&self, watermark: u64) -> Result<(), StoreError> {
        // The watermark never moves back (like the vector index's), whoever commits.
        let watermark = watermark.max(self.watermark()?);
        let mut writer = self.writer()?;
        self.commit_with(&mut writer, watermark)?;
        self.pending.store(false, Ordering::SeqCst);
        Ok(())
    }

    fn has_pending(&self) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    fn searches_pending(&self) -> bool {
        self.written().searchable()
    }

    fn watermark(&self) -> Result<u64, StoreError> {
        let metas = self.index.load_metas().map_err(te)?;
        Ok(metas.payload.and_then(|p| p.parse().ok()).unwrap_or(0))
    }

    /// Merges the segments holding the committed removals into one without them (a merge
    /// drops the terms only deleted documents held), then deletes the files nothing uses
    /// any more. Costs a rewrite of those segments only, each of at most
    /// [`SEGMENT_DOCS`] documents: not of every segment with deletions (other spaces'
    /// replaced entries), which made a forget's cost the whole server's (issue 54).
    /// The merge is waited for without the writer's lock, so other writes go on.
    fn scrub(&self) -> Result<(), StoreError> {
        let _one = self.scrubbing.lock().unwrap_or_else(|p| p.into_inner());
        let plan = std::mem::take(&mut *self.plan.lock().unwrap_or_else(|p| p.into_inner()));
        let Some(older) = plan.older else {
            return Ok(()); // nothing removed since the last scrub
        };
        // A background merge may hold some of those segments: retried until it is done
        // (its result is newer than the plan, so it is rewritten if it kept deletions).
        // Segments are merged in groups of at most the cap ([`capped_groups`]), so a
        // rewrite never makes a segment past it.
        let mut done: HashSet<SegmentId> = HashSet::new();
        for attempt in 0.. {
            // The segments committed since the plan began that hold its terms.
            self.reader.reload().map_err(te)?;
            let searcher = self.reader.searcher();
            let readers: HashMap<SegmentId, &tantivy::SegmentReader> = searcher
                .segment_readers()
                .iter()
                .map(|r| (r.segment_id(), r))
                .collect();
            let holds = |id: &SegmentId| readers.get(id).is_none_or(|r| holds_any(r, &plan.terms));
            let metas = self.index.searchable_segment_metas().map_err(te)?;
            let todo: Vec<&SegmentMeta> = metas
                .iter()
                .filter(|m| {
                    let id = m.id();
                    m.has_deletes()
                        && !done.contains(&id)
                        && (plan.targets.contains(&id) || (!older.contains(&id) && holds(&id)))
                })
                .collect();
            if todo.is_empty() {
                break;
            }
            let merges: Vec<_> = {
                let mut writer = self.writer()?;
                let sized = todo.iter().map(|m| (m.id(), m.max_doc()));
                let cap = u32::try_from(self.segment_docs).unwrap_or(u32::MAX);
                capped_groups(sized, cap, u32::MAX)
                    .into_iter()
                    .map(|(ids, docs)| {
                        let merge = writer.merge(&ids);
                        (ids, docs, merge)
                    })
                    .collect()
            };
            let mut failed = None;
            for (ids, docs, merge) in merges {
                match merge.wait() {
                    Ok(_) => {
                        self.rewritten.fetch_add(docs, Ordering::SeqCst);
                        done.extend(ids);
                    }
                    Err(e) => failed = Some(e),
                }
            }
            match failed {
                None => break,
                Some(_) if attempt < 100 => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                Some(e) => return Err(te(e)),
            }
        }
        // The reader lets go of the old segments, then their files go.
        self.reader.reload().map_err(te)?;
        let collect = self.writer()?.garbage_collect_files();
        collect.wait().map_err(te)?;
        Ok(())
    }

    fn count(&self, space: &SpaceId) -> Result<Option<usize>, StoreError> {
        let query = TermQuery::new(
            Term::from_field_text(self.fields.space, space.as_str()),
            IndexRecordOption::Basic,
        );
        let n = self
            .reader
            .searcher()
            .search(&query, &tantivy::collector::Count)
            .map_err(te)?;
        Ok(Some(n))
    }

    fn ids(&self, space: &SpaceId) -> Result<Option<Vec<String>>, StoreError> {
        let query = TermQuery::new(
            Term::from_field_text(self.fields.space, space.as_str()),
            IndexRecordOption::Basic,
        );
        let searcher = self.reader.searcher();
        let docs = searcher
            .search(&query, &tantivy::collector::DocSetCollector)
            .map_err(te)?;
        let mut ids = Vec::with_capacity(docs.len());
        for at in docs {
            let doc: TantivyDocument = searcher.doc(at).map_err(te)?;
            if let Some(id) = doc.get_first(self.fields.unit_id).and_then(|v| v.as_str()) {
                ids.push(id.to_string());
            }
        }
        Ok(Some(ids))
    }

    fn search(&self, q: &TextQuery<'_>) -> Result<Vec<(String, f32)>, StoreError> {
        let f = &self.fields;
        let terms = self.analyze(q.text);
        if terms.is_empty() || q.limit == 0 {
            return Ok(Vec::new());
        }
        let mut matches: Vec<(Term, f32)> = Vec::with_capacity(terms.len() * 2);
        for t in &terms {
            let t = &in_space(q.space.as_str(), t);
            matches.push((Term::from_field_text(f.key, t), 1.0));
            matches.push((Term::from_field_text(f.text, t), q.text_weight));
        }
        let terms: Vec<Term> = matches.iter().map(|(t, _)| t.clone()).collect();
        let mut filters: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        let kinds: Option<Vec<String>> = q
            .kinds
            .map(|kinds| kinds.iter().map(|k| k.as_str().to_string()).collect());
        if let Some(names) = &kinds {
            filters.push((Occur::Must, self.any_of(f.kind, names)));
        }
        if let Some(sessions) = q.sessions {
            filters.push((Occur::Must, self.any_of(f.session, sessions)));
        }
        let space = q.space.as_str();
        let sessions: Option<HashSet<&str>> =
            q.sessions.map(|s| s.iter().map(String::as_str).collect());
        let reaches = |d: &PendingDoc| {
            kinds.as_ref().is_none_or(|k| k.contains(&d.kind))
                && sessions
                    .as_ref()
                    .is_none_or(|s| s.contains(d.session.as_str()))
        };
        let (searcher, seen) = self.searcher_with_pending(space, reaches);
        let pending: Vec<&PendingDoc> = seen.docs.iter().collect();
        let committed = !seen.dropped;
        let hidden = match committed {
            true => self.hidden(&searcher, &seen.hidden)?,
            false => Hidden::default(),
        };
        let mut reach = match committed {
            true => self.reach(&searcher, q.space, &filters, &terms, &hidden)?,
            false => Reach::empty(&[f.key, f.text], &terms),
        };
        reach.add_pending(&pending);
        if reach.is_empty() {
            return Ok(Vec::new());
        }
        let mut out: Vec<(String, f32)> = Vec::with_capacity(q.limit + pending.len());
        if !pending.is_empty() {
            let weights = weights(&matches, &reach).map_err(te)?;
            for d in &pending {
                out.extend(d.score(&weights).map(|s| (d.unit_id.clone(), s)));
            }
        }
        if committed {
            // The words alone when nothing else narrows the search: a pure disjunction
            // of terms is what tantivy can prune (block-max WAND, kept by `PresentTerms`).
            let words = PresentTerms::new(matches);
            let query: Box<dyn Query> = if filters.is_empty() {
                Box::new(words)
            } else {
                filters.push((Occur::Must, Box::new(words)));
                Box::new(BooleanQuery::new(filters))
            };
            let top = top_docs(&searcher, &*query, q.limit, &reach, &hidden).map_err(te)?;
            for (score, addr) in top {
                let d: TantivyDocument = searcher.doc(addr).map_err(te)?;
                if let Some(id) = d.get_first(f.unit_id).and_then(|v| v.as_str()) {
                    out.push((id.to_string(), score));
                }
            }
        }
        // Committed hits came best first; pending ones join them by score.
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.truncate(q.limit);
        Ok(out)
    }
}
