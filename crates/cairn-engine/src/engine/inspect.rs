//! The inspection verbs on a space (manifest, summary, state, span, match, search), the
//! rendering of a note and spans into a context, and recall + inspection (no LLM): each
//! reads the verbatim record and hands it to the pure functions of `crate::inspect` and
//! `crate::context`.
use crate::context::render_context;
use crate::inspect::{
    concise_entry, full_entry, match_states, overview, search, span_view, state_view,
    state_word_counts, Pattern,
};
use crate::text::content_words;
use cairn_core::bounds::*;
use cairn_core::inspect::*;
use cairn_core::{
    Format, InputError, RecallOptions, SpaceId, StoreError, TrajectoryInput, TrajectoryRecord,
    UnitKind,
};
use std::collections::HashMap;
use std::time::Instant;

use super::error::EngineError;
use super::services::Trajectories;
use super::state::ms;

/// `value` or `default`, refused past `max` or at 0 (naming `field`).
fn bounded(
    value: Option<usize>,
    default: usize,
    max: usize,
    field: &str,
) -> Result<usize, InputError> {
    let v = value.unwrap_or(default);
    if v == 0 || v > max {
        return Err(InputError::field(
            field,
            format!("`{field}` must be 1..={max}, got {v}"),
        ));
    }
    Ok(v)
}

impl Trajectories<'_> {
    fn stored_trajectory(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<TrajectoryRecord, EngineError> {
        self.require_space(space)?;
        self.b
            .records
            .get_trajectory(space, id)?
            .ok_or_else(|| StoreError::NotFound(format!("trajectory {id:?}")).into())
    }

    /// A page of the manifest, in insert order: concise (from the stored summaries) or
    /// full (with every state's URL, title, thought and action, read from the records).
    pub fn inspect_manifest(
        &self,
        space: &SpaceId,
        form: ManifestForm,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<Manifest, EngineError> {
        self.require_space(space)?;
        let default = match form {
            ManifestForm::Concise => DEFAULT_MANIFEST_CONCISE,
            ManifestForm::Full => DEFAULT_MANIFEST_FULL,
        };
        let limit = bounded(limit, default, MAX_MANIFEST, "limit")?;
        let all = self.b.records.trajectory_summaries(space)?;
        let total = all.len();
        let page = all.iter().skip(offset).take(limit);
        let entries = match form {
            ManifestForm::Concise => page.map(concise_entry).collect(),
            ManifestForm::Full => {
                let mut out = Vec::new();
                for s in page {
                    // A trajectory forgotten since the summaries were read is skipped.
                    if let Some(r) = self.b.records.get_trajectory(space, &s.id)? {
                        out.push(full_entry(&r.trajectory));
                    }
                }
                out
            }
        };
        let end = offset.saturating_add(limit).min(total);
        let next_offset = (end < total).then_some(end);
        Ok(Manifest {
            form,
            total,
            offset,
            entries,
            next_offset,
            truncated: next_offset.map(|n| {
                format!(
                    "... [truncated: {} more trajectories; ask with offset={n}]",
                    total - n
                )
            }),
        })
    }

    /// A compact summary of one trajectory: header and one line per state.
    pub fn trajectory_overview(
        &self,
        space: &SpaceId,
        id: &str,
    ) -> Result<TrajectoryOverview, EngineError> {
        Ok(overview(&self.stored_trajectory(space, id)?.trajectory))
    }

    /// One state in full, its page cut to `max_chars` characters.
    pub fn trajectory_state_view(
        &self,
        space: &SpaceId,
        id: &str,
        index: usize,
        max_chars: Option<usize>,
    ) -> Result<StateView, EngineError> {
        let max = bounded(max_chars, DEFAULT_STATE_CHARS, MAX_STATE_CHARS, "max_chars")?;
        let t = self.stored_trajectory(space, id)?.trajectory;
        let n = t.states.len();
        if index >= n {
            return Err(no_state(id, index, n));
        }
        let ann = crate::inspect::annotate(&t);
        Ok(state_view(&t, &ann, index, max))
    }

    /// States `start..=end` (at most [`MAX_SPAN_STATES`]), each page cut to `max_chars`.
    pub fn trajectory_span_view(
        &self,
        space: &SpaceId,
        id: &str,
        start: usize,
        end: usize,
        max_chars: Option<usize>,
    ) -> Result<SpanView, EngineError> {
        let max = bounded(
            max_chars,
            DEFAULT_SPAN_STATE_CHARS,
            MAX_STATE_CHARS,
            "max_chars",
        )?;
        if end < start {
            return Err(InputError::field(
                "end",
                format!("`end` {end} is before `start` {start} (indices are inclusive)"),
            )
            .into());
        }
        let t = self.stored_trajectory(space, id)?.trajectory;
        let n = t.states.len();
        span_view(&t, start, end, max).ok_or_else(|| no_state(id, start, n))
    }

    /// The states of one trajectory holding a pattern, with the matching lines.
    pub fn trajectory_match(
        &self,
        space: &SpaceId,
        id: &str,
        pattern: &str,
        mode: PatternMode,
        limit: Option<usize>,
    ) -> Result<Matches, EngineError> {
        let p = Pattern::new(pattern, mode)?;
        let limit = bounded(limit, DEFAULT_MATCHES, MAX_INSPECT_RESULTS, "limit")?;
        let t = self.stored_trajectory(space, id)?.trajectory;
        Ok(match_states(&t, &p, limit)?)
    }

    /// (trajectory, state) pairs of the whole space holding a pattern.
    pub fn trajectory_search(
        &self,
        space: &SpaceId,
        pattern: &str,
        mode: PatternMode,
        limit: Option<usize>,
    ) -> Result<Matches, EngineError> {
        let p = Pattern::new(pattern, mode)?;
        let limit = bounded(limit, DEFAULT_SEARCH_HITS, MAX_INSPECT_RESULTS, "limit")?;
        self.require_space(space)?;
        let all = self.b.records.trajectories(space)?;
        Ok(search(&all, &p, limit)?)
    }

    /// A note and spans rendered within the request's token budget. Every span must name
    /// a stored trajectory and states it has (errors name the field: `spans[1].end_state`).
    pub fn render_trajectory_context(
        &self,
        space: &SpaceId,
        req: &ContextRequest,
    ) -> Result<RenderedContext, EngineError> {
        req.validate()?;
        self.require_space(space)?;
        let mut loaded: HashMap<&str, TrajectoryInput> = HashMap::new();
        for (i, s) in req.spans.iter().enumerate() {
            if loaded.contains_key(s.trajectory_id.as_str()) {
                continue;
            }
            let Some(r) = self.b.records.get_trajectory(space, &s.trajectory_id)? else {
                return Err(InputError::field(
                    format!("spans[{i}].trajectory_id"),
                    format!("no trajectory {:?} in this space", s.trajectory_id),
                )
                .into());
            };
            loaded.insert(s.trajectory_id.as_str(), r.trajectory);
        }
        for (i, s) in req.spans.iter().enumerate() {
            let n = loaded[s.trajectory_id.as_str()].states.len();
            for (field, v) in [("start_state", s.start_state), ("end_state", s.end_state)] {
                if v >= n {
                    return Err(InputError::field(
                        format!("spans[{i}].{field}"),
                        format!(
                            "trajectory {:?} has {n} states (0-{}); no state {v}",
                            s.trajectory_id,
                            n - 1
                        ),
                    )
                    .into());
                }
            }
        }
        let spans: Vec<(ContextSpan, &TrajectoryInput)> = req
            .spans
            .iter()
            .map(|s| (s.clone(), &loaded[s.trajectory_id.as_str()]))
            .collect();
        let count = |s: &str| self.b.embedder.count_tokens(s);
        Ok(render_context(
            &req.note,
            &spans,
            req.token_budget,
            req.query.as_deref(),
            &count,
        ))
    }

    /// Recall + inspection, no LLM: recall over the trajectory pools shortlists
    /// trajectories (in hit order); in each, the states that recall cited and that hold
    /// most of the question's words become spans; the best note among the hits is the
    /// note; both are rendered within the budget.
    pub fn recall_inspect(
        &self,
        space: &SpaceId,
        question: &str,
        opts: &InspectRecallOptions,
    ) -> Result<InspectedRecall, EngineError> {
        opts.validate()?;
        let t0 = Instant::now();
        let recall = self.retrieval().recall(
            space,
            question,
            &RecallOptions {
                top_k: opts.top_k, // Only the hits are used; the context is rendered from the spans.
                token_budget: 1,
                format: Format::Raw, // The best runs there are, however weak: inspection reads them.
                min_relevance: -1.0,
                scope: cairn_core::ScopeOptions {
                    kinds: Some(vec![UnitKind::Slice, UnitKind::Event, UnitKind::Note]),
                    ..Default::default()
                },
                ..RecallOptions::default()
            },
        )?;
        let recall_ms = ms(t0);
        let t = Instant::now();
        let mut shortlist: Vec<String> = Vec::new();
        for h in &recall.hits {
            if let Some(id) = &h.trajectory_id {
                if !shortlist.contains(id) && shortlist.len() < opts.trajectories.max(1) {
                    shortlist.push(id.clone());
                }
            }
        }
        let note = recall
            .hits
            .iter()
            .find(|h| {
                h.kind == UnitKind::Note
                    && h.trajectory_id
                        .as_ref()
                        .is_some_and(|t| shortlist.contains(t))
            })
            .map(|h| h.text.clone())
            .unwrap_or_default();
        let words = content_words(question);
        let mut records = Vec::new();
        for id in &shortlist {
            if let Some(r) = self.b.records.get_trajectory(space, id)? {
                records.push(r.trajectory);
            }
        }
        let spans = choose_spans(&records, &recall.hits, &words, opts)?;
        let inspect_ms = ms(t);
        let t = Instant::now();
        let pairs: Vec<(ContextSpan, &TrajectoryInput)> = spans
            .iter()
            .filter_map(|s| {
                records
                    .iter()
                    .find(|r| r.id == s.trajectory_id)
                    .map(|r| (s.clone(), r))
            })
            .collect();
        let count = |s: &str| self.b.embedder.count_tokens(s);
        let context = render_context(&note, &pairs, opts.token_budget, Some(question), &count);
        Ok(InspectedRecall {
            note,
            spans,
            shortlist,
            context,
            recall_ms,
            inspect_ms,
            render_ms: ms(t),
            total_ms: ms(t0),
        })
    }
}

fn no_state(id: &str, index: usize, n: usize) -> EngineError {
    StoreError::NotFound(format!(
        "state {index} of trajectory {id:?} (it has {n} states: 0-{})",
        n.saturating_sub(1)
    ))
    .into()
}

/// The spans of recall + inspection. From the hits in rank order (notes cite whole runs
/// and are skipped), the state each cites best: a slice its state, an event the state
/// it led to (where the change or the error shows), until `max_states`. Then, per
/// shortlisted trajectory, the state holding most of the question's words joins when it
/// holds more of them than any state taken from that trajectory. States next to each
/// other in one trajectory make one span; spans keep the order of their best state.
fn choose_spans(
    records: &[TrajectoryInput],
    hits: &[cairn_core::Hit],
    words: &[String],
    opts: &InspectRecallOptions,
) -> Result<Vec<ContextSpan>, crate::budget::OutOfTime> {
    let mut picked: Vec<(String, usize)> = Vec::new();
    for h in hits {
        if picked.len() >= opts.max_states.max(1) {
            break;
        }
        let (Some(t), Some([a, b])) = (&h.trajectory_id, h.states) else {
            continue;
        };
        let state = match h.kind {
            UnitKind::Slice => a as usize,
            UnitKind::Event => (b as usize).saturating_sub(1),
            _ => continue,
        };
        if !picked.iter().any(|(pt, ps)| pt == t && *ps == state) {
            picked.push((t.clone(), state));
        }
    }
    for t in records {
        let counts = state_word_counts(t, words)?;
        let taken = picked
            .iter()
            .filter(|(pt, _)| *pt == t.id)
            .filter_map(|(_, s)| counts.get(*s).copied())
            .max();
        let best = (0..counts.len()).max_by(|&x, &y| counts[x].cmp(&counts[y]).then(y.cmp(&x)));
        // A state of its own needs a third of the question's words (at least two).
        let enough = (words.len() / 3).max(2);
        let better = |b: usize| match taken {
            Some(k) => counts[b] > k,
            None => counts[b] >= enough,
        };
        if let Some(b) = best.filter(|&b| counts[b] > 0 && better(b)) {
            picked.push((t.id.clone(), b));
        }
    }
    let mut spans: Vec<ContextSpan> = Vec::new();
    for (t, s) in picked {
        if let Some(sp) = spans
            .iter_mut()
            .find(|sp| sp.trajectory_id == t && s + 1 >= sp.start_state && s <= sp.end_state + 1)
        {
            sp.start_state = sp.start_state.min(s);
            sp.end_state = sp.end_state.max(s);
        } else {
            spans.push(ContextSpan {
                trajectory_id: t,
                start_state: s,
                end_state: s,
            });
        }
    }
    // Spans that grew into each other become one (kept where the first was).
    let mut merged: Vec<ContextSpan> = Vec::new();
    for sp in spans {
        match merged.iter_mut().find(|m| {
            m.trajectory_id == sp.trajectory_id
                && sp.start_state <= m.end_state + 1
                && m.start_state <= sp.end_state + 1
        }) {
            Some(m) => {
                m.start_state = m.start_state.min(sp.start_state);
                m.end_state = m.end_state.max(sp.end_state);
            }
            None => merged.push(sp),
        }
    }
    Ok(merged)
}
