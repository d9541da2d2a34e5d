//! The lexical index: PostgreSQL full-text search over units.
use crate::PgStore;
use cairn_core::{SpaceId, StoreError, TextIndex, TextQuery, Unit};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many units a query's matching words may be held by (see [`PgTextIndex`]): scoring
/// costs a few microseconds a row, so this bounds a lexical search to tens of
/// milliseconds however large the space.
pub const MATCH_BUDGET: i64 = 10_000;

/// Full-text search with the `english` configuration (stemming, stop words). Each unit is
/// one row: its key weighted A, its full text weighted B. A query matches a unit having
/// its terms (two of them first, any one when those are too few) and scores it BM25-like:
/// the sum over the query's terms of the term's inverse document frequency in the space
/// times its `ts_rank` in the unit (occurrences, the text weight of the query setting B
/// against A, normalized by the unit's length). Document frequencies live in
/// `text_terms` / `text_spaces`, kept by the same statements that write the index.
///
/// Every matching row is read and scored (GIN cannot order by score), so what a query
/// matches is bounded by [`MATCH_BUDGET`]: a pair of words matches only when one of them
/// is held by at most that many units of the space, and a single word only while the
/// rarest words' units add up to at most that many. A space of at most that many units
/// is searched whole. A word held by more units still scores every unit it is found in;
/// it only no longer brings units in by itself (or paired with another such word), which
/// in a large space would have the query score a large share of it (in a 1M-unit space
/// of the scale bench: 20k-135k rows, 0.1-0.3 s).
///
/// Writes are visible at once (each call is a transaction); [`TextIndex::commit`] records
/// the watermark. The watermark only moves up, so several processes may commit.
pub struct PgTextIndex {
    db: PgStore,
    pending: AtomicBool,
}

impl PgTextIndex {
    pub fn new(db: PgStore) -> Self {
        Self {
            db,
            pending: AtomicBool::new(false),
        }
    }

    /// The analyzed terms of `text` (PostgreSQL's `english` configuration).
    pub fn analyze(&self, text: &str) -> Result<Vec<String>, StoreError> {
        self.db.block_on(
            sqlx::query_scalar(
                "SELECT l FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS l ORDER BY l",
            )
            .bind(text)
            .fetch_all(self.db.pool()),
        )
    }
}

impl TextIndex for PgTextIndex {
    fn upsert(&self, units: &[Unit]) -> Result<(), StoreError> {
        if units.is_empty() {
            return Ok(());
        }
        // One batch per space; a unit repeated in the batch: the last one wins.
        let mut batches: HashMap<&str, HashMap<&str, &Unit>> = HashMap::new();
        for u in units {
            batches
                .entry(u.space.as_str())
                .or_default()
                .insert(u.id.as_str(), u);
        }
        for (space, batch) in batches {
            let mut ids = Vec::with_capacity(batch.len());
            let mut kinds = Vec::with_capacity(batch.len());
            let mut sessions = Vec::with_capacity(batch.len());
            let mut keys = Vec::with_capacity(batch.len());
            let mut texts = Vec::with_capacity(batch.len());
            for (id, u) in batch {
                ids.push(id.to_string());
                kinds.push(u.kind.as_str().to_string());
                sessions.push(u.provenance.session_id.clone().unwrap_or_default());
                keys.push(u.key.clone());
                texts.push(u.text.clone());
            }
            self.db.block_on(
                sqlx::query(UPSERT)
                    .bind(space)
                    .bind(ids)
                    .bind(kinds)
                    .bind(sessions)
                    .bind(keys)
                    .bind(texts)
                    .execute(self.db.pool()),
            )?;
        }
        self.pending.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn remove(&self, space: &SpaceId, unit_ids: &[String]) -> Result<(), StoreError> {
        if unit_ids.is_empty() {
            return Ok(());
        }
        self.db.block_on(
            sqlx::query(REMOVE)
                .bind(space.as_str())
                .bind(unit_ids)
                .execute(self.db.pool()),
        )?;
        self.pending.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn drop_space(&self, space: &SpaceId) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query(
                "WITH e AS (DELETE FROM text_entries WHERE space = $1),
                      t AS (DELETE FROM text_terms WHERE space = $1)
                 DELETE FROM text_spaces WHERE space = $1",
            )
            .bind(space.as_str())
            .execute(self.db.pool()),
        )?;
        self.pending.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn commit(&self, watermark: u64) -> Result<(), StoreError> {
        self.db.block_on(
            sqlx::query(
                "UPDATE cairn_meta SET num = GREATEST(num, $1) WHERE key = 'text_watermark'",
            )
            .bind(watermark as i64)
            .execute(self.db.pool()),
        )?;
        self.pending.store(false, Ordering::SeqCst);
        Ok(())
    }

    fn has_pending(&self) -> bool {
        self.pending.load(Ordering::SeqCst)
    }

    fn watermark(&self) -> Result<u64, StoreError> {
        let n: i64 = self.db.block_on(
            sqlx::query_scalar("SELECT num FROM cairn_meta WHERE key = 'text_watermark'")
                .fetch_one(self.db.pool()),
        )?;
        Ok(n as u64)
    }

    fn count(&self, space: &SpaceId) -> Result<Option<usize>, StoreError> {
        let n: i64 = self.db.block_on(
            sqlx::query_scalar("SELECT COUNT(*) FROM text_entries WHERE space = $1")
                .bind(space.as_str())
                .fetch_one(self.db.pool()),
        )?;
        Ok(Some(n as usize))
    }

    fn ids(&self, space: &SpaceId) -> Result<Option<Vec<String>>, StoreError> {
        let ids: Vec<String> = self.db.block_on(
            sqlx::query_scalar("SELECT unit_id FROM text_entries WHERE space = $1")
                .bind(space.as_str())
                .fetch_all(self.db.pool()),
        )?;
        Ok(Some(ids))
    }

    fn search(&self, q: &TextQuery<'_>) -> Result<Vec<(String, f32)>, StoreError> {
        if q.limit == 0 || q.text.trim().is_empty() {
            return Ok(Vec::new());
        }
        // ts_rank weights are {D, C, B, A} and at most 1: scale so the larger is 1.
        let w = q.text_weight.max(0.0);
        let (a, b) = if w > 1.0 { (1.0 / w, 1.0) } else { (1.0, w) };
        let kinds: Option<Vec<String>> = q
            .kinds
            .map(|ks| ks.iter().map(|k| k.as_str().to_string()).collect());
        let run = |matching: &str| -> Result<Vec<(String, f32)>, StoreError> {
            self.db.block_on(
                // Both halves are constants of this file; user text is bound ($2).
                sqlx::query_as(sqlx::AssertSqlSafe(SEARCH.replace("{MATCHING}", matching)))
                    .bind(q.space.as_str())
                    .bind(q.text)
                    .bind(b)
                    .bind(a)
                    .bind(kinds.clone())
                    .bind(q.sessions)
                    .bind(q.limit as i64)
                    .bind(MATCH_BUDGET)
                    .fetch_all(self.db.pool()),
            )
        };
        // Rank the rows holding two of the query's words first, and the rows holding
        // one of them only when those are too few.
        let paired = run(ANY_TWO)?;
        if paired.len() >= q.limit {
            return Ok(paired);
        }
        // The single words within the budget need not include a word of every pair, so
        // the paired rows join them (a row's score is the same in both).
        let mut hits = run(ANY_ONE)?;
        hits.extend(paired);
        hits.sort_by(|x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
        hits.dedup_by(|x, y| x.0 == y.0);
        hits.truncate(q.limit);
        Ok(hits)
    }
}

/// Writes a batch of one space ($1): ids, kinds, sessions, keys, texts ($2..$6), and moves
/// the statistics by what the batch adds and what it replaces (one snapshot: `old` is the
/// rows before this statement). Terms are written in order, so concurrent writers of one
/// space lock them in the same order.
const UPSERT: &str = "WITH new AS (
         SELECT id, kind, sess,
                setweight(to_tsvector('english', k), 'A')
                  || setweight(to_tsvector('english', t), 'B') AS tsv
           FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                AS x(id, kind, sess, k, t)),
     old AS (
         SELECT e.tsv FROM text_entries e JOIN new ON e.space = $1 AND e.unit_id = new.id),
     written AS (
         INSERT INTO text_entries(space, unit_id, kind, session_id, tsv)
         SELECT $1, id, kind, sess, tsv FROM new
         ON CONFLICT (space, unit_id) DO UPDATE SET kind = EXCLUDED.kind,
             session_id = EXCLUDED.session_id, tsv = EXCLUDED.tsv),
     counted AS (
         INSERT INTO text_spaces(space, docs)
         SELECT $1, (SELECT count(*) FROM new) - (SELECT count(*) FROM old)
         ON CONFLICT (space) DO UPDATE SET docs = text_spaces.docs + EXCLUDED.docs)
     INSERT INTO text_terms(space, term, df)
     SELECT $1, term, sum(d) FROM (
         SELECT unnest(tsvector_to_array(tsv)) AS term, 1 AS d FROM new
         UNION ALL
         SELECT unnest(tsvector_to_array(tsv)), -1 FROM old) AS delta
      GROUP BY term HAVING sum(d) <> 0 ORDER BY term
     ON CONFLICT (space, term) DO UPDATE SET df = text_terms.df + EXCLUDED.df";

/// Removes units ($2) of a space ($1) and their share of the statistics.
const REMOVE: &str = "WITH gone AS (
         DELETE FROM text_entries WHERE space = $1 AND unit_id = ANY($2) RETURNING tsv),
     counted AS (
         UPDATE text_spaces SET docs = docs - (SELECT count(*) FROM gone) WHERE space = $1)
     UPDATE text_terms s SET df = s.df - g.n
       FROM (SELECT term, count(*) AS n FROM gone, unnest(tsvector_to_array(tsv)) AS term
              GROUP BY term ORDER BY term) AS g
      WHERE s.space = $1 AND s.term = g.term";

/// Lexical candidates of a space, best BM25-like score first; `{MATCHING}` is a query over
/// `terms` giving the `tsquery` (NULL: nothing to match), of the words its budget ($8)
/// admits. A term's inverse document frequency is BM25's,
/// ln(1 + (N - df + 0.5) / (df + 0.5)).
const SEARCH: &str = "WITH terms AS (
         SELECT l, quote_literal(l)::tsquery AS tq, COALESCE(s.df, 0) AS df,
                COALESCE(n.docs, 0) AS docs,
                ln(1 + (GREATEST(COALESCE(n.docs, 0) - COALESCE(s.df, 0), 0) + 0.5)
                       / (COALESCE(s.df, 0) + 0.5))::float8 AS idf
           FROM unnest(tsvector_to_array(to_tsvector('english', $2))) AS l
           LEFT JOIN text_spaces n ON n.space = $1
           LEFT JOIN text_terms s ON s.space = $1 AND s.term = l
          WHERE strpos(l, E'\\\\') = 0),
     q AS ({MATCHING})
     SELECT t.unit_id,
            (SELECT sum(w.idf * ts_rank(ARRAY[0, 0, $3, $4]::float4[], t.tsv, w.tq, 1))
               FROM terms w)::float4 AS score
       FROM text_entries t, q
      WHERE t.space = $1 AND q.q IS NOT NULL AND t.tsv @@ q.q
        AND ($5::text[] IS NULL OR t.kind = ANY($5))
        AND ($6::text[] IS NULL OR t.session_id = ANY($6))
      ORDER BY score DESC, t.unit_id
      LIMIT $7";

/// The rarest of the query's lexemes OR'ed, while the units holding them add up to at
/// most the budget (all of them in a space within it); each quoted so no lexeme is
/// parsed again.
const ANY_ONE: &str = "SELECT string_agg(quote_literal(l), ' | ')::tsquery AS q
       FROM (SELECT l, docs, sum(df) OVER (ORDER BY df, l) AS upto FROM terms) AS r
      WHERE upto <= $8 OR docs <= $8";

/// Every pair of the query's lexemes with one held by at most the budget's units AND'ed,
/// the pairs OR'ed: rows holding at least two.
const ANY_TWO: &str = "SELECT string_agg('(' || quote_literal(x.l) || ' & ' || quote_literal(y.l) || ')', ' | ')::tsquery AS q
       FROM terms x JOIN terms y ON x.l < y.l
      WHERE LEAST(x.df, y.df) <= $8";
