//! The entity graph at the engine: built from a space's units once per space generation
//! (like fact chains), listed and shown by `entities` / `entity`, and the recall stage
//! that follows it from the question's names to the units they link.
use crate::graph::EntityGraph;
use crate::rank::Ranked;
use cairn_core::explain::{HitExplanation, Op, Step};
use cairn_core::{
    EntityDetail, EntitySummary, InputError, RecallOptions, Scope, SpaceId, Unit, UnitKind,
    UnitQuery,
};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::cache::{Key, Weigh};
use super::error::EngineError;
use super::scope::View;
use super::services::Knowledge;

impl Weigh for EntityGraph {
    fn weight(&self) -> usize {
        self.approx_bytes()
    }
}

/// Units the graph may add to a recall that neither index found (before their cosines
/// are computed): a name said in every session must not turn recall into a scan.
const MAX_REACHED: usize = 400;
/// Entities of the second hop followed per entity named in the question.
const SECOND_HOP: usize = 3;

/// How the graph linked each hit to the question, by unit id.
pub(super) type Via = HashMap<String, String>;

impl Knowledge<'_> {
    /// The entity graph of what the view sees (its turns and facts), rebuilt when the
    /// space generation moves, by one request at a time per (space, scope) (the others
    /// wait and find it cached, see `flight.rs`): a scoped request's entities, aliases and
    /// links come from its records only.
    pub(super) fn entity_graph(
        &self,
        space: &SpaceId,
        view: &View,
    ) -> Result<Arc<EntityGraph>, EngineError> {
        // The derived cache's key: the space and a hash of the scope (never its text).
        let key = Key::new(space, "graph", &view.scope.fingerprint());
        let generation = self.b.records.generation(space)?;
        self.derived.get_or_build(
            &key,
            generation,
            |_| true,
            || {
                let page = self.b.records.list_units(
                    space,
                    &UnitQuery {
                        kinds: Some(vec![UnitKind::Turn, UnitKind::Fact]),
                        sessions: view.sessions().map(<[String]>::to_vec),
                        limit: 100_000_000,
                        ..Default::default()
                    },
                )?;
                let units: Vec<Unit> = page.units.into_iter().filter(|u| view.sees(u)).collect();
                Ok(EntityGraph::build(&units)?)
            },
        )
    }

    /// The entities of what the scope sees, most linked first; with `search`, those
    /// whose name or an alias contains it (case-insensitive). Each partition's entities
    /// are its own (two users' "Maya" are two entries).
    pub fn entities(
        &self,
        space: &SpaceId,
        search: Option<&str>,
        scope: &Scope,
    ) -> Result<Vec<EntitySummary>, EngineError> {
        self.require_space(space)?;
        let view = self.view(space, scope)?;
        let g = self.entity_graph(space, &view)?;
        let needle = search.map(|s| s.trim().to_lowercase());
        let mut out: Vec<EntitySummary> = (0..g.entities.len())
            .filter(|&i| {
                needle.as_deref().is_none_or(|n| {
                    let e = &g.entities[i];
                    e.name.to_lowercase().contains(n) || e.aliases.iter().any(|a| a.contains(n))
                })
            })
            .filter_map(|i| g.summary(i))
            .collect();
        out.sort_by(|a, b| {
            b.mention_count
                .cmp(&a.mention_count)
                .then(a.name.cmp(&b.name))
        });
        Ok(out)
    }

    /// One entity (by name or alias) of what the scope sees, with its mentions,
    /// relations and timeline; `None` when the scope sees no such entity, an error when
    /// several partitions of it know the name.
    pub fn entity(
        &self,
        space: &SpaceId,
        name: &str,
        scope: &Scope,
    ) -> Result<Option<EntityDetail>, EngineError> {
        self.require_space(space)?;
        if name.trim().is_empty() {
            return Err(InputError::new("entity", "`name` is empty")
                .at("name")
                .into());
        }
        let view = self.view(space, scope)?;
        let g = self.entity_graph(space, &view)?;
        match g.find_all(name) {
            [] => Ok(None),
            [one] => Ok(g.detail(*one)),
            many => {
                let names: Vec<&str> = many
                    .iter()
                    .map(|&i| g.partition_of(i).unwrap_or("(none)"))
                    .collect();
                Err(super::scope::ambiguous(name, &names))
            }
        }
    }

    /// The first half of the graph stage, before the second pass: each fused candidate
    /// gains `graph_boost` times the share of its messages linked to an entity the
    /// question names (spoken by it, naming it, a fact about it). A turn of the person
    /// asked about gains the whole boost, a round where they speak once half of it, so
    /// a round is credited by the part that is about them.
    pub(super) fn graph_lift(
        &self,
        space: &SpaceId,
        query: &str,
        fused: Vec<(String, f32)>,
        units: &HashMap<String, Unit>,
        view: &View,
    ) -> Result<Vec<(String, f32)>, EngineError> {
        let rc = &self.cfg.rank;
        if !rc.graph || rc.graph_boost == 0.0 {
            return Ok(fused);
        }
        let g = self.entity_graph(space, view)?;
        let named = g.named_in(query);
        if named.is_empty() {
            return Ok(fused);
        }
        let mut out: Vec<(String, f32)> = fused
            .into_iter()
            .map(|(id, s)| {
                let share = units.get(&id).map_or(0.0, |u| linked_share(&g, &named, u));
                (id, s * (1.0 + rc.graph_boost * share))
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(out)
    }

    /// The second half of the graph stage, after the second pass: says which ranked
    /// units are linked to an entity the question names, and adds the units those
    /// entities link through one or two hops that neither index found, scored by their
    /// cosine to the question at `graph_weight` (a second hop at half that). Those
    /// graph-only units can rank, but at most `graph_slots` of them inside `top_k`, so
    /// direct evidence is not crowded out. Returns how each linked or added unit was
    /// reached.
    pub(super) fn graph_stage(
        &self,
        space: &SpaceId,
        query: &str,
        query_vector: Option<&[f32]>,
        view: &View,
        opts: &RecallOptions,
        ranked: Vec<Ranked>,
    ) -> Result<(Vec<Ranked>, Via), EngineError> {
        let rc = &self.cfg.rank;
        let mut via = Via::new();
        if !rc.graph {
            return Ok((ranked, via));
        }
        let g = self.entity_graph(space, view)?;
        let named = g.named_in(query);
        if named.is_empty() {
            return Ok((ranked, via));
        }
        let names = |e: usize| g.entities[e].name.clone();
        let mut ranked = ranked;
        for r in &mut ranked {
            let Some(sid) = r.unit.provenance.session_id.clone() else {
                continue;
            };
            let linked: Vec<String> = r
                .unit
                .provenance
                .message_ids
                .iter()
                .flat_map(|m| g.at_message(&sid, m).iter())
                .filter(|(e, _)| named.contains(e))
                .map(|(e, edge)| format!("{} ({})", names(*e), edge_name(*edge)))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if linked.is_empty() {
                continue;
            }
            let share = linked_share(&g, &named, &r.unit);
            let factor = 1.0 + rc.graph_boost * share;
            let said = format!("graph: {}", linked.join(", "));
            r.record(Step::GraphLink, Op::Multiply, factor, || said.clone());
            via.insert(r.unit.id.clone(), said);
        }
        let added = match query_vector {
            Some(v) => {
                self.graph_only(space, &g, &named, v, view, opts.explain, &ranked, &mut via)?
            }
            None => Vec::new(),
        };
        ranked.extend(added);
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.unit.id.cmp(&b.unit.id)));
        Ok((keep_slots(ranked, &via, opts.top_k, rc.graph_slots), via))
    }

    /// Units linked to the named entities (hop 1) and to the entities named with them
    /// in the same messages (hop 2) that no ranked unit covers, as their rounds (or
    /// themselves when they have none), scored by cosine.
    #[allow(clippy::too_many_arguments)]
    fn graph_only(
        &self,
        space: &SpaceId,
        g: &EntityGraph,
        named: &[usize],
        qv: &[f32],
        view: &View,
        explain: bool,
        ranked: &[Ranked],
        via: &mut Via,
    ) -> Result<Vec<Ranked>, EngineError> {
        let rc = &self.cfg.rank;
        let reached = reached_beyond(g, named, &covered_messages(ranked));
        if reached.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = reached.keys().cloned().collect();
        let cosines = self.b.vectors.similarities(space, qv, &ids)?;
        let best = cosines.iter().map(|(_, c)| *c).fold(f32::MIN, f32::max);
        if best <= 0.0 {
            return Ok(Vec::new());
        }
        // Each round once, at its best part's score.
        let mut targets: HashMap<String, (f32, String)> = HashMap::new();
        for (id, cos) in &cosines {
            let Some((hop, how, part_of)) = reached.get(id) else {
                continue;
            };
            let hop_factor = if *hop == 1 { 1.0 } else { 0.5 };
            let score = rc.graph_weight * rc.dense_weight * hop_factor * cos / best;
            let target = part_of.clone().unwrap_or_else(|| id.clone());
            let e = targets.entry(target).or_insert((f32::MIN, String::new()));
            if score > e.0 {
                *e = (score, how.clone());
            }
        }
        let target_ids: Vec<String> = targets.keys().cloned().collect();
        let units: Vec<Unit> = self.b.records.units(space, &target_ids)?;
        let mut out = Vec::new();
        for u in units.into_iter().filter(|u| view.shows(u)) {
            let Some((score, how)) = targets.get(&u.id) else {
                continue;
            };
            let said = format!("graph-only: {how}");
            let mut r = Ranked {
                unit: u,
                score: *score,
                why: explain.then(Box::<HitExplanation>::default),
                parts: Vec::new(),
                more: Vec::new(),
            };
            r.record(Step::GraphLink, Op::Set, *score, || said.clone());
            via.insert(r.unit.id.clone(), said);
            out.push(r);
        }
        Ok(out)
    }
}

/// The (session, message) pairs the ranked units cite.
fn covered_messages(ranked: &[Ranked]) -> HashSet<(String, String)> {
    ranked
        .iter()
        .filter_map(|r| {
            let sid = r.unit.provenance.session_id.clone()?;
            Some(
                r.unit
                    .provenance
                    .message_ids
                    .iter()
                    .map(move |m| (sid.clone(), m.clone())),
            )
        })
        .flatten()
        .collect()
}

/// The units linked to the named entities (hop 1) and to the entities named with them
/// (hop 2) whose messages are not all `covered`: by unit id, the hop, the path that
/// reached it and the round it is part of. At most `MAX_REACHED`.
fn reached_beyond(
    g: &EntityGraph,
    named: &[usize],
    covered: &HashSet<(String, String)>,
) -> HashMap<String, (u8, String, Option<String>)> {
    let mut reached: HashMap<String, (u8, String, Option<String>)> = HashMap::new();
    let mut hops: Vec<(usize, u8, String)> = named
        .iter()
        .map(|&e| (e, 1, g.entities[e].name.clone()))
        .collect();
    for &e in named {
        for (o, _) in g.co_mentioned(e).into_iter().take(SECOND_HOP) {
            if !named.contains(&o) {
                let path = format!("{} -> {}", g.entities[e].name, g.entities[o].name);
                hops.push((o, 2, path));
            }
        }
    }
    for (e, hop, path) in hops {
        for l in g.entities[e].links.iter() {
            if reached.len() >= MAX_REACHED {
                break;
            }
            let Some(sid) = &l.session_id else { continue };
            if l.message_ids
                .iter()
                .all(|m| covered.contains(&(sid.clone(), m.clone())))
            {
                continue;
            }
            reached.entry(l.unit_id.clone()).or_insert_with(|| {
                (
                    hop,
                    format!("{path} ({})", edge_name(l.edge)),
                    l.part_of.clone(),
                )
            });
        }
    }
    reached
}

/// The share of `u`'s messages linked to one of the `named` entities.
fn linked_share(g: &EntityGraph, named: &[usize], u: &Unit) -> f32 {
    let Some(sid) = u.provenance.session_id.as_deref() else {
        return 0.0;
    };
    let ms = &u.provenance.message_ids;
    if ms.is_empty() {
        return 0.0;
    }
    let linked = ms
        .iter()
        .filter(|m| g.at_message(sid, m).iter().any(|(e, _)| named.contains(e)))
        .count();
    linked as f32 / ms.len() as f32
}

/// Keeps at most `slots` graph-only units among the first `top_k`; the others move below
/// them, in order.
fn keep_slots(ranked: Vec<Ranked>, via: &Via, top_k: usize, slots: usize) -> Vec<Ranked> {
    let only = |r: &Ranked| {
        via.get(&r.unit.id)
            .is_some_and(|v| v.starts_with("graph-only"))
    };
    let mut head = Vec::with_capacity(ranked.len());
    let mut tail = Vec::new();
    let mut used = 0;
    for r in ranked {
        if head.len() < top_k && only(&r) {
            if used >= slots {
                tail.push(r);
                continue;
            }
            used += 1;
        }
        head.push(r);
    }
    head.extend(tail);
    head
}

fn edge_name(e: cairn_core::EdgeKind) -> &'static str {
    match e {
        cairn_core::EdgeKind::SpeakerOf => "speaker_of",
        cairn_core::EdgeKind::Mention => "mention",
        cairn_core::EdgeKind::FactSubject => "fact_subject",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_core::Provenance;

    fn turn(session: &str, msg: &str, speaker: &str, text: &str) -> Unit {
        Unit {
            id: crate::derive::turn_id(session, msg),
            space: SpaceId::new("t").unwrap(),
            kind: UnitKind::Turn,
            text: text.to_string(),
            key: text.to_string(),
            embed_text: None,
            provenance: Provenance {
                session_id: Some(session.to_string()),
                message_ids: vec![msg.to_string()],
                speakers: vec![speaker.to_string()],
                ..Default::default()
            },
            part_of: None,
            occurred_at: None,
            recorded_at: chrono::Utc::now(),
            detail: None,
        }
    }

    fn ranked(u: Unit, score: f32) -> Ranked {
        Ranked {
            unit: u,
            score,
            why: None,
            parts: Vec::new(),
            more: Vec::new(),
        }
    }

    #[test]
    fn a_units_linked_share_counts_its_messages_about_the_named() {
        let units = vec![
            turn("s", "0", "Ann", "Have you met Bo yet?"),
            turn("s", "1", "Cy", "Not yet."),
        ];
        let g = EntityGraph::build(&units).unwrap();
        let ann = g.named_in("What did Ann ask?");
        assert_eq!(ann.len(), 1);
        let mut round = units[0].clone();
        round.provenance.message_ids = vec!["0".into(), "1".into()];
        assert_eq!(linked_share(&g, &ann, &units[0]), 1.0);
        assert_eq!(linked_share(&g, &ann, &units[1]), 0.0);
        assert_eq!(linked_share(&g, &ann, &round), 0.5);
        // Bo is named in Ann's line: the second hop from Ann.
        let bo = g.find("bo").expect("Bo");
        assert_eq!(g.co_mentioned(ann[0])[0].0, bo);
    }

    #[test]
    fn graph_only_units_take_at_most_their_slots_in_the_top() {
        let units: Vec<Unit> = (0..5)
            .map(|i| turn("s", &i.to_string(), "Ann", "line"))
            .collect();
        let mut via = Via::new();
        for u in &units[..3] {
            via.insert(u.id.clone(), "graph-only: Ann (speaker_of)".into());
        }
        let list: Vec<Ranked> = units
            .iter()
            .enumerate()
            .map(|(i, u)| ranked(u.clone(), 10.0 - i as f32))
            .collect();
        let kept = keep_slots(list, &via, 3, 1);
        let ids: Vec<&str> = kept.iter().map(|r| r.unit.id.as_str()).collect();
        assert_eq!(
            ids,
            ["turn:s:0", "turn:s:3", "turn:s:4", "turn:s:1", "turn:s:2"],
            "one graph-only unit in the top 3, the others below"
        );
    }
}
