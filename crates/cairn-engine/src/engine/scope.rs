//! A request's [`Scope`] resolved against one space: the sessions its metadata filter
//! (and `sessions`, `groups`) admit, read from the space's session headers (cached per
//! space generation), and the rule of what the request sees ([`View::sees`]). Recall's
//! stages and the knowledge reads (facts and their chains, profiles, the card) take a
//! [`View`]; the listings narrow sessions by one but restate the time window in their
//! queries, and the entity graph applies `as_of` per link (issue 55 is to make the view
//! the only way in).
use cairn_core::filter::{session_document, MetadataField};
use cairn_core::{
    Filter, InputError, Scope, SessionHeader, SpaceId, Unit, UnitKind, Warning, UNKNOWN_FILTER_KEY,
};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::mem::size_of;
use std::sync::Arc;

use super::cache::{json_len, Key, Weigh};
use super::error::EngineError;
use super::state::Engine;

/// A space's session headers with the document the metadata filter reads, as of one store
/// generation, and what they weigh (kept as headers are put and removed, so a write that
/// advances the catalog does not weigh every header again).
#[derive(Clone)]
pub(super) struct Catalog {
    headers: Vec<(SessionHeader, Value)>,
    bytes: usize,
}

/// A header and its filter document, by their JSON text (their heap is mostly strings).
fn header_weight((h, doc): &(SessionHeader, Value)) -> usize {
    size_of::<(SessionHeader, Value)>() + json_len(h) + json_len(doc)
}

impl Catalog {
    fn new(headers: Vec<(SessionHeader, Value)>) -> Self {
        let bytes = headers.iter().map(header_weight).sum();
        Self { headers, bytes }
    }

    /// The catalog after a write of the session `h` heads: its header replaced in place,
    /// or added last (the store's order: a session keeps its place, a new one goes last).
    pub(super) fn put(&mut self, h: SessionHeader) {
        let doc = session_document(&h);
        let entry = (h, doc);
        self.bytes += header_weight(&entry);
        match self.headers.iter_mut().find(|(x, _)| x.id == entry.0.id) {
            Some(slot) => {
                self.bytes -= header_weight(slot);
                *slot = entry;
            }
            None => self.headers.push(entry),
        }
    }

    /// The catalog after the session `id` was deleted.
    pub(super) fn remove(&mut self, id: &str) {
        if let Some(at) = self.headers.iter().position(|(h, _)| h.id == id) {
            self.bytes -= header_weight(&self.headers.remove(at));
        }
    }

    /// The headers, in the store's order.
    #[cfg(test)]
    pub(super) fn headers(&self) -> Vec<&SessionHeader> {
        self.headers.iter().map(|(h, _)| h).collect()
    }
}

/// The derived cache's key of a space's session catalog.
pub(super) fn catalog_key(space: &SpaceId) -> Key {
    Key::new(space, "catalog", &())
}

impl Weigh for Catalog {
    fn weight(&self) -> usize {
        self.bytes
    }
}

/// The sessions a scope admits (sorted, and as a set).
#[derive(Clone)]
pub(crate) struct Admitted {
    pub(crate) ids: Arc<Vec<String>>,
    set: Arc<HashSet<String>>,
}

impl Weigh for Admitted {
    /// Each id twice (the list and the set), with a string and a set slot per id.
    fn weight(&self) -> usize {
        let per_id = 2 * size_of::<String>() + size_of::<u64>();
        self.ids.iter().map(|id| per_id + 2 * id.len()).sum()
    }
}

/// The metadata keys carried by the sessions a request may see whatever its filter (those
/// of its partition, `sessions` and `groups`), as paths through objects (`["profile",
/// "tier"]`), for telling a filter that names a key none carries (a misspelling matches
/// nothing, silently). Never those of sessions outside the partition: a key pinned to
/// one end user learns nothing of another's, not even the names of their keys.
pub(super) struct MetadataKeys {
    paths: BTreeSet<Vec<String>>,
}

/// How many keys a warning lists (a space of generated keys could list thousands).
const LISTED_KEYS: usize = 20;

impl Weigh for MetadataKeys {
    /// Each path's segments, with a string slot and a tree slot each.
    fn weight(&self) -> usize {
        self.paths
            .iter()
            .map(|p| {
                size_of::<Vec<String>>()
                    + 2 * size_of::<usize>()
                    + p.iter()
                        .map(|k| size_of::<String>() + k.len())
                        .sum::<usize>()
            })
            .sum()
    }
}

impl MetadataKeys {
    /// Adds every key path of one session's metadata (objects only: a filter's path never
    /// reads into an array).
    fn add(&mut self, metadata: &Value) {
        let mut stack: Vec<(Vec<String>, &Value)> = vec![(Vec::new(), metadata)];
        while let Some((at, v)) = stack.pop() {
            let Value::Object(m) = v else { continue };
            for (k, child) in m {
                let mut path = at.clone();
                path.push(k.clone());
                if child.is_object() {
                    stack.push((path.clone(), child));
                }
                self.paths.insert(path);
            }
        }
    }

    fn carries(&self, key: &[String]) -> bool {
        self.paths.contains(key)
    }

    /// The warning for a field none carries: where it is named, and the keys seen beside
    /// it (under its longest carried prefix), at most [`LISTED_KEYS`] of them.
    fn warning(&self, field: &MetadataField, scoped: bool) -> Warning {
        let key = &field.key;
        let under = (0..key.len())
            .rev()
            .map(|n| &key[..n])
            .find(|p| p.is_empty() || self.carries(p))
            .unwrap_or(&[]);
        let seen: Vec<&str> = self
            .paths
            .iter()
            .filter(|p| p.len() == under.len() + 1 && p.starts_with(under))
            .map(|p| p[under.len()].as_str())
            .collect();
        let mut listed = seen
            .iter()
            .take(LISTED_KEYS)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if seen.len() > LISTED_KEYS {
            listed.push_str(&format!(", and {} more", seen.len() - LISTED_KEYS));
        }
        let place = match under.is_empty() {
            true => String::new(),
            false => format!(" under {:?}", under.join(".")),
        };
        let seen = match seen.is_empty() {
            true => format!("no keys seen{place}"),
            false => format!("keys seen{place}: {listed}"),
        };
        let whose = match scoped {
            true => "no session this request may see",
            false => "no session of this space",
        };
        Warning {
            code: UNKNOWN_FILTER_KEY.to_string(),
            field: field.at.clone(),
            message: format!("{whose} carries metadata key {:?} ({seen})", key.join(".")),
        }
    }
}

/// What one request sees of one space.
#[derive(Clone)]
pub(crate) struct View {
    pub(crate) scope: Scope,
    /// The sessions seen when the scope narrows sessions (`None`: every session, and
    /// trajectories).
    admitted: Option<Admitted>,
}

impl View {
    /// The rule: whether the request sees `u` (what knowledge is computed from). See
    /// [`Scope::sees`]; the metadata filter's part is the admitted sessions.
    pub(crate) fn sees(&self, u: &Unit) -> bool {
        self.scope.sees(u) && self.admits(u.provenance.session_id.as_deref())
    }

    /// Whether `u` may be a hit: seen, and of a kind asked for.
    pub(crate) fn shows(&self, u: &Unit) -> bool {
        self.scope.shows_kind(u.kind) && self.sees(u)
    }

    /// Whether a session (by id; `None` for a trajectory's units) is admitted.
    pub(crate) fn admits(&self, session: Option<&str>) -> bool {
        match &self.admitted {
            None => true,
            Some(a) => session.is_some_and(|s| a.set.contains(s)),
        }
    }

    /// The admitted sessions, sorted; `None` when every session is.
    pub(crate) fn sessions(&self) -> Option<&[String]> {
        self.admitted.as_ref().map(|a| a.ids.as_slice())
    }

    /// The kinds a lexical search may return for this scope (a turn credits its round).
    pub(crate) fn searched_kinds(&self) -> Option<Vec<UnitKind>> {
        let mut kinds = self.scope.kinds.clone()?;
        if kinds.contains(&UnitKind::Round) && !kinds.contains(&UnitKind::Turn) {
            kinds.push(UnitKind::Turn);
        }
        Some(kinds)
    }
}

impl Engine {
    /// Resolves a checked scope against a space (which must exist).
    pub(crate) fn view(&self, space: &SpaceId, scope: &Scope) -> Result<View, EngineError> {
        let admitted = if scope.narrows_sessions() {
            Some(self.admitted(space, scope)?)
        } else {
            None
        };
        Ok(View {
            scope: scope.clone(),
            admitted,
        })
    }

    /// The sessions `scope` admits, resolved once per space generation and scope (keyed
    /// by a hash of the scope's session part, never its text: see `cache.rs`).
    fn admitted(&self, space: &SpaceId, scope: &Scope) -> Result<Admitted, EngineError> {
        let generation = self.b.records.generation(space)?;
        let key = Key::new(
            space,
            "admitted",
            &(
                &scope.sessions,
                &scope.groups,
                scope.filter.as_ref().map(|(_, v)| v),
                scope
                    .partition
                    .as_ref()
                    .map(cairn_core::Partition::to_value),
            ),
        );
        let admitted = self.derived.get_or_build(
            &key,
            generation,
            |_| true,
            || {
                let catalog = self.catalog(space)?;
                // Checked as it goes: a filter's cost per session grows with the metadata it
                // reads, and this runs before any other stage of a request.
                let mut ticker = crate::budget::Ticker::new("sessions a filter admits");
                let lists = scope.session_lists();
                let mut ids: Vec<String> = Vec::new();
                for (h, doc) in &catalog.headers {
                    ticker.tick()?;
                    if lists.admits(&h.id, h.group.as_deref()) && scope.admits_document(doc) {
                        ids.push(h.id.clone());
                    }
                }
                ids.sort_unstable();
                Ok::<_, EngineError>(Admitted {
                    set: Arc::new(ids.iter().cloned().collect()),
                    ids: Arc::new(ids),
                })
            },
        )?;
        Ok((*admitted).clone())
    }

    /// The warnings of a request's metadata filter: one per key it names that no session
    /// the request may see carries (see [`MetadataKeys`]). A warning, not a refusal: a
    /// filter on a key about to be written is correct (docs/scope.md).
    pub fn filter_warnings(
        &self,
        space: &SpaceId,
        scope: &Scope,
    ) -> Result<Vec<Warning>, EngineError> {
        let Some((_, raw)) = &scope.filter else {
            return Ok(Vec::new());
        };
        let named = Filter::metadata_fields(raw);
        if named.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.metadata_keys(space, scope)?;
        let scoped =
            scope.partition.is_some() || scope.sessions.is_some() || scope.groups.is_some();
        Ok(named
            .iter()
            .filter(|f| !keys.carries(&f.key))
            .map(|f| keys.warning(f, scoped))
            .collect())
    }

    /// The metadata keys of the sessions `scope` may see, its filter aside: computed from
    /// the cached catalog once per space generation and (partition, `sessions`, `groups`).
    fn metadata_keys(
        &self,
        space: &SpaceId,
        scope: &Scope,
    ) -> Result<Arc<MetadataKeys>, EngineError> {
        let generation = self.b.records.generation(space)?;
        let key = Key::new(
            space,
            "metadata_keys",
            &(
                &scope.sessions,
                &scope.groups,
                scope
                    .partition
                    .as_ref()
                    .map(cairn_core::Partition::to_value),
            ),
        );
        self.derived.get_or_build(
            &key,
            generation,
            |_| true,
            || {
                let catalog = self.catalog(space)?;
                let mut ticker = crate::budget::Ticker::new("metadata keys a filter may name");
                let lists = scope.session_lists();
                let mut keys = MetadataKeys {
                    paths: BTreeSet::new(),
                };
                for (h, _) in &catalog.headers {
                    ticker.tick()?;
                    let in_partition = scope
                        .partition
                        .as_ref()
                        .is_none_or(|p| p.holds(&h.metadata));
                    if in_partition && lists.admits(&h.id, h.group.as_deref()) {
                        keys.add(&h.metadata);
                    }
                }
                Ok::<_, EngineError>(keys)
            },
        )
    }

    /// The space's session headers with their filter documents, read once per store
    /// generation (a shared space holds thousands of sessions; every scoped request
    /// reads them).
    pub(super) fn catalog(&self, space: &SpaceId) -> Result<Arc<Catalog>, EngineError> {
        let generation = self.b.records.generation(space)?;
        self.derived.get_or_build(
            &catalog_key(space),
            generation,
            |_| true,
            || {
                let headers = self.b.records.session_headers(space)?;
                let documented = headers.into_iter().map(|h| {
                    let doc = session_document(&h);
                    (h, doc)
                });
                Ok::<_, EngineError>(Catalog::new(documented.collect()))
            },
        )
    }
}

/// The error of a name known in several partitions of a request's scope (`names`: the
/// partitions): a chain, a profile or an entity is one user's, so the request must say
/// whose.
pub(super) fn ambiguous(what: &str, names: &[&str]) -> EngineError {
    InputError::new(
        "scope",
        format!(
            "{what:?} is known in {} partitions of this space ({}); narrow the request with a `filter` on the partition's keys",
            names.len(),
            names.join(", ")
        ),
    )
    .at("filter")
    .into()
}
