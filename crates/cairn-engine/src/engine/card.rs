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

impl Engine {
    /// The card for a recall whose `hits` are the first places of `top` (their
    /// relevance in `cosines`): `None` when the card has no share of the budget, the
    /// request asks for no facts, the view holds no statement of the user's, or holds
    /// those of several end users.
    pub(super) fn user_card(
        &self,
        space: &SpaceId,
        view: &View,
        query_vector: Option<&[f32]>,
        (hits, cosines): (&[Ranked], &Cosines),
        opts: &RecallOptions,
    ) -> Result<Option<Card>, EngineError> {
        let cfg = &self.cfg.card;
        let budget = (cfg.share.clamp(0.0, 1.0) * opts.token_budget as f32) as usize;
        if budget == 0 || !view.scope.shows_kind(UnitKind::Fact) {
            return Ok(None);
        }
        let index = self.fact_index(space)?;
        let Some(heads) = newest_of_one_user(&index, view) else {
            return Ok(None);
        };
        let (mut instructions, others): (Vec<&Unit>, Vec<&Unit>) = heads
            .into_iter()
            .partition(|u| card::category(u) == Some(FactCategory::Instruction));
        instructions.sort_by(|a, b| b.occurred_at.cmp(&a.occurred_at));
        instructions.truncate(cfg.instructions);
        let instructions = self.standing(&instructions)?;
        // A statement the hits show already needs no line of its own.
        let shown: HashSet<(&str, &str)> = hits.iter().flat_map(messages_of).collect();
        let others: Vec<&Unit> = others
            .into_iter()
            .filter(|u| !messages_of_unit(u).any(|m| shown.contains(&m)))
            .collect();
        let facts = self.relevant(space, query_vector, others, (hits, cosines), opts)?;
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

    /// The statements among `facts` close enough to the query to go on the card: as
    /// relevant as the relevance floor asks of a hit, and at least the share of the best
    /// hit's relevance that makes a place "close to the best" (`newest_ratio`).
    fn relevant<'a>(
        &self,
        space: &SpaceId,
        query_vector: Option<&[f32]>,
        facts: Vec<&'a Unit>,
        (hits, cosines): (&[Ranked], &Cosines),
        opts: &RecallOptions,
    ) -> Result<Vec<Candidate<'a>>, EngineError> {
        let Some(qv) = query_vector.filter(|_| !facts.is_empty()) else {
            return Ok(Vec::new());
        };
        let ids: Vec<String> = facts.iter().map(|u| u.id.clone()).collect();
        let found: Cosines = self
            .b
            .vectors
            .similarities(space, qv, &ids)?
            .into_iter()
            .collect();
        let best = hits
            .iter()
            .filter_map(|r| relevance(r, cosines))
            .reduce(f32::max);
        let floor = opts
            .min_relevance
            .max(best.unwrap_or(0.0) * self.cfg.rank.newest_ratio);
        Ok(facts
            .into_iter()
            .filter_map(|fact| {
                let c = *found.get(&fact.id)?;
                (c >= floor).then_some(Candidate {
                    fact,
                    relevance: Some(c),
                })
            })
            .collect())
    }
}

/// The newest statement of each of the user's chains the view sees, all of one end-user
/// partition (`None` when there are none, or when they span several partitions).
fn newest_of_one_user<'a>(
    index: &'a crate::facts::FactIndex,
    view: &View,
) -> Option<Vec<&'a Unit>> {
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
            heads.push(newest);
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
