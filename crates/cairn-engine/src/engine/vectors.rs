//! Vectors of written units: embedded (through the cache, before the write lock when
//! they can be), stored, and purged from the embedding cache with what was forgotten.
use super::error::EngineError;
use super::reports::IngestReport;
use super::state::Engine;
use crate::embedding::{self, cache_key_within, embed_keyed_staged, EmbedCounts};
use cairn_core::{Embedder, SpaceId, Unit};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// `(unit id, vector)` pairs.
type UnitVectors = Vec<(String, Vec<f32>)>;

/// Vectors computed for units before their write, per space.
#[derive(Default)]
pub(super) struct EmbeddedUnits {
    pub(super) by_space: Vec<(SpaceId, UnitVectors)>,
    pub(super) counts: EmbedCounts,
}

impl Engine {
    /// Indexes units just written to the record store (vectors, then text); the caller
    /// holds the write lock.
    pub(super) fn index_written(
        &self,
        mut written: Vec<Unit>,
        last: u64,
        report: &mut IngestReport,
    ) -> Result<(), EngineError> {
        if written.is_empty() {
            return Ok(());
        }
        self.index_after_commit(|| {
            let counts = self.index_vectors(&written, last)?;
            report.vectors_computed += counts.computed;
            report.vectors_cached += counts.cached;
            written.retain(Unit::is_searchable);
            self.b.text.upsert(&written)?;
            self.text_seq.store(last, Ordering::SeqCst);
            Ok(())
        });
        Ok(())
    }

    pub(super) fn index_vectors(
        &self,
        units: &[Unit],
        watermark: u64,
    ) -> Result<EmbedCounts, EngineError> {
        let embedded = self.embed_units(units)?;
        self.store_vectors(units, embedded, watermark)
    }

    /// The vectors of `units` that have an embedding text, per space (each space's cache
    /// scope; see [`EngineConfig::share_embedding_cache`]).
    pub(super) fn embed_units(&self, units: &[Unit]) -> Result<EmbeddedUnits, EngineError> {
        Ok(self.embed_groups(&[units])?.0)
    }

    /// The vectors of several groups of units (the sessions of one group commit, in any
    /// spaces) in one embedder call, each text under its space's cache key; with each
    /// group's counts.
    pub(super) fn embed_groups(
        &self,
        groups: &[&[Unit]],
    ) -> Result<(EmbeddedUnits, Vec<EmbedCounts>), EngineError> {
        let todo: Vec<(usize, &Unit, &str)> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, units)| {
                units
                    .iter()
                    .filter_map(move |u| u.embed_text.as_deref().map(|t| (g, u, t)))
            })
            .collect();
        let keys: Vec<[u8; 32]> = todo
            .iter()
            .map(|(_, u, t)| self.unit_cache_key(u, t))
            .collect();
        let texts: Vec<&str> = todo.iter().map(|(_, _, t)| *t).collect();
        let (vectors, origins) = embed_keyed_staged(
            self.b.embedder.as_ref(),
            self.b.cache.as_ref(),
            &keys,
            &texts,
            &|k| self.staged.get(k),
        )?;
        let mut per_group = vec![Vec::new(); groups.len()];
        let mut by_space: BTreeMap<&SpaceId, UnitVectors> = BTreeMap::new();
        for (((g, u, _), v), o) in todo.iter().zip(vectors).zip(origins.iter()) {
            per_group[*g].push(*o);
            by_space
                .entry(&u.space)
                .or_default()
                .push((u.id.clone(), v));
        }
        let out = EmbeddedUnits {
            by_space: by_space
                .into_iter()
                .map(|(s, items)| (s.clone(), items))
                .collect(),
            counts: embedding::counts(&origins),
        };
        Ok((
            out,
            per_group.iter().map(|o| embedding::counts(o)).collect(),
        ))
    }

    /// Writes embedded vectors with `watermark` (which moves past `units` even when none
    /// of them has a vector).
    pub(super) fn store_vectors(
        &self,
        units: &[Unit],
        embedded: EmbeddedUnits,
        watermark: u64,
    ) -> Result<EmbedCounts, EngineError> {
        if embedded.by_space.is_empty() {
            if let Some(u) = units.first() {
                self.b.vectors.upsert(&u.space, &[], watermark)?;
            }
        }
        for (space, items) in &embedded.by_space {
            self.b.vectors.upsert(space, items, watermark)?;
        }
        Ok(embedded.counts)
    }

    /// The embedding-cache key of a text embedded for a space, within a part of it (an
    /// end-user partition, a query's scope): each part's own, unless the cache is shared
    /// (see [`EngineConfig::share_embedding_cache`]).
    pub(super) fn cache_key(&self, space: &SpaceId, within: Option<&str>, text: &str) -> [u8; 32] {
        if self.cfg.share_embedding_cache {
            cache_key_within(None, None, text)
        } else {
            cache_key_within(Some(space), within, text)
        }
    }

    /// The cache key of a unit's text: its space's and partition's own, so an ingest's
    /// `vectors_cached` says nothing of what another user of the space stored.
    pub(super) fn unit_cache_key(&self, u: &Unit, text: &str) -> [u8; 32] {
        self.cache_key(&u.space, u.provenance.partition.as_deref(), text)
    }

    /// Vectors of `texts` with the memory's model, through the embedding cache under
    /// `space`'s keys (those its unpartitioned units' text uses): as passages (a unit's
    /// text), or with `query` as a question is embedded for recall.
    pub fn embed(
        &self,
        space: &SpaceId,
        texts: &[&str],
        query: bool,
    ) -> Result<Vec<Vec<f32>>, EngineError> {
        let q = crate::query_embed::QueryEmbedder::new(self.b.embedder.as_ref());
        let embedder: &dyn Embedder = if query { &q } else { self.b.embedder.as_ref() };
        let (vectors, _) = embedding::embed_cached(
            embedder,
            self.b.cache.as_ref(),
            |t| self.cache_key(space, None, t),
            texts,
        )?;
        Ok(vectors)
    }

    /// Drops from the embedding cache the vectors of `gone` units' text that `kept`
    /// units do not embed too: forgetting removes the text from every derived store. With
    /// a shared cache, another space holding the same text only pays one re-embedding.
    pub(super) fn purge_cached(&self, gone: &[Unit], kept: &[Unit]) -> Result<(), EngineError> {
        if !self.cfg.purge_cache_on_forget {
            return Ok(());
        }
        let key = |u: &Unit| u.embed_text.as_deref().map(|t| self.unit_cache_key(u, t));
        let keep: std::collections::HashSet<[u8; 32]> = kept.iter().filter_map(key).collect();
        let keys: Vec<[u8; 32]> = gone
            .iter()
            .filter_map(key)
            .filter(|k| !keep.contains(k))
            .collect();
        if !keys.is_empty() {
            self.b.cache.remove(self.b.embedder.model_id(), &keys)?;
        }
        Ok(())
    }
}
