//! The user's card in recall (see [`crate::card`]): the user's chains as the view sees
//! them, read from the space's fact index (kept current by writes), their newest
//! statements judged by meaning, written within the card's share of the budget.
use crate::card::{self, Candidate};
use crate::rank::Ranked;
use cairn_core::{CardLine, FactCategory, RecallOptions, SpaceId, Unit, UnitKind};
use std::collections::HashSet;

use super::relevance::{relevance, Cosines};
use super::scope::View;
use super::{Engine, EngineError};

/// A card as recall packs it: its text, its lines and the tokens the text takes.
pub(super) type Card = (String, Vec<CardLine>, usize);

/// What recall knows when it writes the card.
pub(super) struct Asked<'a> {
    pub query_vector: Option<&'a [f32]>,
    /// The hits (the first places) and the cosines their relevance is read from.
    pub hits: &'a [Ranked],
    pub cosines: &'a Cosines,
    /// The units the query's words found.
    pub lexical: HashSet<&'a str>,
    /// The question is about the asker ("where do I work now?"): a statement of theirs
    /// its words found goes on the card however far its meaning is from the question's
    /// wording ("which company pays my salary?" and "I just started at Monzo").
    pub about_user: bool,
}

impl Engine {
    /// The card for a recall: `None` when the card has no share of the budget, the
    /// request asks for no facts, the view holds no statement of the user's, or holds
    /// those of several end users.
    pub(super) fn user_card(
        &self,
        space: &SpaceId,
        view: &View,
        asked: &Asked<'_>,
        opts: &RecallOptions,
    ) -> Result<Option<Card>, EngineError> {
        let cfg = &self.cfg.card;
        let budget = (cfg.share.clamp(0.0, 1.0) * opts.token_budget as f32) as usize;
        if budget == 0 || !view.scope.shows_kind(UnitKind::Fact) {
            return Ok(None);
        }
        let index = self.fact_index(space)?;
        let found_by_words = |f: &Unit| asked.about_user && asked.lexical.contains(f.id.as_str());
        let Some(heads) = newest_of_one_user(&index, view, found_by_words) else {
            return Ok(None);
        };
        let (mut instructions, others): (Vec<Head>, Vec<Head>) = heads
            .into_iter()
            .partition(|h| card::category(h.newest) == Some(FactCategory::Instruction));
        instructions.sort_by(|a, b| b.newest.occurred_at.cmp(&a.newest.occurred_at));
        instructions.truncate(cfg.instructions);
        let instructions: Vec<&Unit> = instructions.iter().map(|h| h.newest).collect();
        let instructions = self.standing(&instructions)?;
        // A statement the hits show already needs no line of its own.
        let shown: HashSet<(&str, &str)> = asked.hits.iter().flat_map(messages_of).collect();
        let others: Vec<Head> = others
            .into_iter()
            .filter(|h| !messages_of_unit(h.newest).any(|m| shown.contains(&m)))
            .collect();
        let facts = self.relevant(space, others, asked, opts)?;
        let count = |s: &str| self.b.embedder.count_tokens(s);
        Ok(card::write(&instructions, facts, budget, &count))
    }

    /// The instructions among `newest_first` that no newer one replaced: their vectors
    /// read from the embedding cache, where their ingest left them.
    fn standing<'a>(&self, newest_first: &[&'a Unit]) -> Result<Vec<&'a Unit>, EngineError> {
        if newest_first.len() < 2 {
            return Ok(newest_first.to_vec());
        }
        let texts: Vec<&str> = newest_first
            .iter()
            .map(|u| u.embed_text.as_deref().unwrap_or(&u.text))
            .collect();
        let (vectors, _) = crate::embedding::embed_cached(
            self.b.embedder.as_ref(),
            self.b.cache.as_ref(),
            |t| self.unit_cache_key(newest_first[0], t),
            &texts,
        )?;
        Ok(card::standing(
            newest_first,
            &vectors,
            self.cfg.card.same_instruction,
        ))
    }

    /// The statements among `heads` that go on the card: those the query's words found
    /// (see [`Asked::about_user`]), and those as relevant as the relevance floor asks of
    /// a hit and at least the share of the best hit's relevance that makes a place
    /// "close to the best" (`newest_ratio`).
    fn relevant<'a>(
        &self,
        space: &SpaceId,
        heads: Vec<Head<'a>>,
        asked: &Asked<'_>,
        opts: &RecallOptions,
    ) -> Result<Vec<Candidate<'a>>, EngineError> {
        let Some(qv) = asked.query_vector.filter(|_| !heads.is_empty()) else {
            return Ok(Vec::new());
        };
        let ids: Vec<String> = heads.iter().map(|h| h.newest.id.clone()).collect();
        let found: Cosines = self
            .b
            .vectors
            .similarities(space, qv, &ids)?
            .into_iter()
            .collect();
        let best = asked
            .hits
            .iter()
            .filter_map(|r| relevance(r, asked.cosines))
            .reduce(f32::max);
        let floor = opts
            .min_relevance
            .max(best.unwrap_or(0.0) * self.cfg.rank.newest_ratio);
        Ok(heads
            .into_iter()
            .filter_map(|h| {
                let c = found.get(&h.newest.id).copied();
                let close = c.is_some_and(|c| c >= floor);
                (close || h.found_by_words).then_some(Candidate {
                    fact: h.newest,
                    relevance: Some(c.unwrap_or(0.0)),
                })
            })
            .collect())
    }
}

/// The newest statement of one of the user's chains, and whether the query's words
/// found a statement of that chain.
struct Head<'a> {
    newest: &'a Unit,
    found_by_words: bool,
}

/// The newest statement of each of the user's chains the view sees, all of one end-user
/// partition (`None` when there are none, or when they span several partitions).
fn newest_of_one_user<'a>(
    index: &'a crate::facts::FactIndex,
    view: &View,
    found_by_words: impl Fn(&Unit) -> bool,
) -> Option<Vec<Head<'a>>> {
    let seen = |f: &Unit| view.shows(f);
    let mut listed: HashSet<&str> = HashSet::new();
    let mut partition: Option<Option<&str>> = None;
    let mut heads = Vec::new();
    for fact in index.about(crate::personal::USER) {
        let chain = index.chain_of(fact, seen);
        let Some(newest) = chain.last().copied() else {
            continue;
        };
        let p = newest.provenance.partition.as_deref();
        if *partition.get_or_insert(p) != p {
            return None;
        }
        if listed.insert(newest.id.as_str()) {
            heads.push(Head {
                newest,
                found_by_words: chain.iter().any(|f| found_by_words(f)),
            });
        }
    }
    (!heads.is_empty()).then_some(heads)
}

/// The (session, message) pairs a place shows: its own unit's and its excerpt's.
fn messages_of(r: &Ranked) -> impl Iterator<Item = (&str, &str)> {
    messages_of_unit(&r.unit).chain(r.parts.iter().flat_map(|p| messages_of_unit(&p.unit)))
}

fn messages_of_unit(u: &Unit) -> impl Iterator<Item = (&str, &str)> {
    let p = &u.provenance;
    p.session_id
        .as_deref()
        .into_iter()
        .flat_map(|s| p.message_ids.iter().map(move |m| (s, m.as_str())))
}
