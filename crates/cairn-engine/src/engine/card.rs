//! The user's card in recall (see [`crate::card`]): the user's chains as the view sees
//! them, read from the space's fact index (kept current by writes), their newest
//! statements judged by meaning, written within the card's share of the budget.
use crate::card::{self, Candidate};
use crate::rank::Ranked;
use cairn_core::{CardLine, FactCategory, RecallOptions, SpaceId, Unit, UnitKind};
use std::collections::HashSet;

use super::error::EngineError;
use super::relevance::{relevance, Cosines};
use super::scope::View;
use super::services::Retrieval;
use crate::personal::USER;

/// A card as recall packs it: its text, its lines and the tokens the text takes.
pub(super) type Card = (String, Vec<CardLine>, usize);

/// What the card read of the user: the card (if any), and the standing instructions a
/// newer one replaced by meaning (fact id, and the newer instruction), which recall marks
/// among its hits as it marks a value its chain replaced.
pub(super) struct UserCard {
    pub card: Option<Card>,
    pub replaced: Vec<(String, Unit)>,
}

/// What recall knows when it writes the card.
pub(super) struct Asked<'a> {
    pub query_vector: Option<&'a [f32]>,
    /// The hits (the first places) and the cosines their relevance is read from.
    pub hits: &'a [Ranked],
    pub cosines: &'a Cosines,
    /// The units the query's meaning found (the card's statements come from these and
    /// the next: what a recall found, not every statement of the user's, so a card costs
    /// what the recall's candidates cost, however much the user has said).
    pub dense: &'a [(String, f32)],
    /// The units the query's words found.
    pub lexical: &'a [(String, f32)],
    /// The question is about the asker ("where do I work now?"): a statement of theirs
    /// its words found (a word match close to the best one) goes on the card however far
    /// its meaning is from the question's wording.
    pub about_user: bool,
}

impl Retrieval<'_> {
    /// The card for a recall: `None` when the card has no share of the budget, the
    /// request asks for no facts, or the view may hold the statements of several end
    /// users (several partitions hold the user's facts and the request pins none).
    pub(super) fn user_card(
        &self,
        space: &SpaceId,
        view: &View,
        asked: &Asked<'_>,
        opts: &RecallOptions,
    ) -> Result<UserCard, EngineError> {
        let none = UserCard {
            card: None,
            replaced: Vec::new(),
        };
        let cfg = &self.cfg.card;
        let budget = (cfg.share.clamp(0.0, 1.0) * opts.token_budget as f32) as usize;
        if budget == 0 || !view.scope.shows_kind(UnitKind::Fact) {
            return Ok(none);
        }
        let index = self.knowledge().fact_index(space)?;
        let Some(partition) = card_partition(&index, view) else {
            return Ok(none);
        };
        let partition = partition.as_deref();
        let seen = |f: &Unit| view.shows(f);
        let newest = |f: &Unit| index.chain_of(f, seen).last().copied();
        let heads_of = |categories: &[FactCategory], limit: usize| {
            let mut heads: Vec<&Unit> = categories
                .iter()
                .flat_map(|&c| index.about_in(partition, USER, c))
                .filter_map(newest)
                .collect();
            heads.sort_by(|a, b| (b.occurred_at, &b.id).cmp(&(a.occurred_at, &a.id)));
            heads.dedup_by(|a, b| a.id == b.id);
            heads.truncate(limit);
            heads
        };
        let instructions = heads_of(&[FactCategory::Instruction], cfg.instructions);
        let (instructions, replaced) = self.standing(&instructions)?;
        let shown: HashSet<(&str, &str)> = asked.hits.iter().flat_map(messages_of).collect();
        let mut key = heads_of(card::KEY, cfg.key_facts);
        key.retain(|u| !messages_of_unit(u).any(|m| shown.contains(&m)));
        let close = self.cfg.rank.newest_ratio;
        let heads = candidate_heads(&index, partition, (asked, &shown), close, newest);
        let facts = self.relevant(space, heads, asked, opts)?;
        let count = |s: &str| self.b.embedder.count_tokens(s);
        Ok(UserCard {
            card: card::write((&instructions, facts, &key), budget, &count),
            replaced: replaced
                .into_iter()
                .map(|(old, newer)| (old.id.clone(), newer.clone()))
                .collect(),
        })
    }

    /// Marks the hits that are or state an instruction the card found replaced: a note
    /// naming the newer one (as a replaced value's note does) and `superseded_by`.
    pub(super) fn mark_replaced(
        &self,
        space: &SpaceId,
        hits: &mut [Ranked],
        replaced: &[(String, Unit)],
        superseded: &mut std::collections::HashMap<String, String>,
    ) -> Result<(), EngineError> {
        if replaced.is_empty() {
            return Ok(());
        }
        let index = self.knowledge().fact_index(space)?;
        let newer_of = |fact: &str| replaced.iter().find(|(old, _)| old == fact).map(|(_, n)| n);
        for r in hits {
            let u = &r.unit;
            let newer = match u.kind {
                UnitKind::Fact => newer_of(&u.id),
                _ => messages_of_unit(u)
                    .flat_map(|(s, m)| index.stated_in(s, m))
                    .find_map(|f| newer_of(&f.id)),
            };
            let Some(newer) = newer else { continue };
            if crate::facts::is_marked_superseded(&r.unit.text) {
                continue;
            }
            superseded.insert(r.unit.id.clone(), newer.id.clone());
            r.unit.text = format!("{}\n{}", r.unit.text, crate::facts::replaced_note(newer));
        }
        Ok(())
    }

    /// The instructions among `newest_first` that no newer one replaced, and those
    /// replaced: their vectors read from the embedding cache, where their ingest left them.
    fn standing<'a>(
        &self,
        newest_first: &[&'a Unit],
    ) -> Result<(Vec<&'a Unit>, card::Replaced<'a>), EngineError> {
        if newest_first.len() < 2 {
            return Ok((newest_first.to_vec(), Vec::new()));
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
                    relevance: c.unwrap_or(0.0),
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

/// The partition whose user the card is about: the one the request pins (as its units
/// name it), or the only one holding facts about the user; `None` (no card) when there
/// is none, or several and the request pins none.
fn card_partition(index: &crate::facts::FactIndex, view: &View) -> Option<Option<String>> {
    if let Some(pinned) = &view.scope.partition {
        return Some(cairn_core::partition_of(&pinned.to_value()));
    }
    match index.partitions_of(USER)[..] {
        [one] => Some(one.map(str::to_string)),
        _ => None,
    }
}

/// The newest statement (by `newest`) of each chain of the user's in `partition` that a
/// candidate of the recall belongs to, other than instructions and statements the hits
/// show already (`shown`: their session and message), each once.
fn candidate_heads<'a>(
    index: &'a crate::facts::FactIndex,
    partition: Option<&str>,
    (asked, shown): (&Asked<'_>, &HashSet<(&str, &str)>),
    close: f32,
    newest: impl Fn(&'a Unit) -> Option<&'a Unit>,
) -> Vec<Head<'a>> {
    // Found by its words: a word match close to the best one (`close` of its score, as a
    // place is close to the best by meaning); one common word shared ("thinking",
    // "trying") is not.
    let best_words = asked.lexical.iter().map(|(_, s)| *s).fold(0.0, f32::max);
    let lexical: HashSet<&str> = asked
        .lexical
        .iter()
        .filter(|(_, s)| *s >= best_words * close)
        .map(|(id, _)| id.as_str())
        .collect();
    let mut listed: HashSet<&str> = HashSet::new();
    let mut heads: Vec<Head<'a>> = Vec::new();
    for (id, _) in asked.dense.iter().chain(asked.lexical) {
        let Some(fact) = index.get(id).filter(|f| is_users(f, partition)) else {
            continue;
        };
        let Some(head) = newest(fact) else { continue };
        let found_by_words = asked.about_user && lexical.contains(id.as_str());
        if card::category(head) == Some(FactCategory::Instruction)
            || messages_of_unit(head).any(|m| shown.contains(&m))
        {
            continue;
        }
        if listed.insert(head.id.as_str()) {
            heads.push(Head {
                newest: head,
                found_by_words,
            });
        } else if found_by_words {
            if let Some(h) = heads.iter_mut().find(|h| h.newest.id == head.id) {
                h.found_by_words = true;
            }
        }
    }
    heads
}

/// Whether `f` is a statement of the user's in `partition`.
fn is_users(f: &Unit, partition: Option<&str>) -> bool {
    f.provenance.partition.as_deref() == partition && crate::facts::is_about(f, USER)
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
