//! The engine's rooms. `Engine` (`state.rs`) holds what every part shares: the backends,
//! the write lock, the watermarks, the cache of derived reads, the writes waiting for the
//! lock; opening, healing, scopes resolved into views, and embedding are its own. Each
//! service below is a borrowed view of it that owns one part of the work, so no type
//! carries every operation and each file names the room it furnishes:
//! `impl Knowledge<'_>` in `knowledge.rs`, and so on. A service reaches the shared state
//! through `Deref` and another service through its accessor (`self.knowledge()`).
use super::state::Engine;

macro_rules! services {
    ($($(#[$doc:meta])* pub struct $name:ident => $accessor:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy)]
        pub struct $name<'e>(pub(super) &'e Engine);

        impl std::ops::Deref for $name<'_> {
            type Target = Engine;
            fn deref(&self) -> &Engine {
                self.0
            }
        }

        impl Engine {
            $(#[$doc])*
            pub fn $accessor(&self) -> $name<'_> {
                $name(self)
            }
        }
    )*};
}

services! {
    /// Writes: ingest of sessions and group messages, appends (group-committed), notes an
    /// agent asks to keep, imports, enrichment's derived facts, and bringing the cached
    /// derived state of a space to each write's generation (`ingest.rs`, `append.rs`,
    /// `staged.rs`, `remember.rs`, `import.rs`, `enrich.rs`, `advance.rs`).
    pub struct Writes => writes;
    /// Forgetting: a space, a partition, a session, a message, a unit, and scrubbing what
    /// was forgotten from the stores' files (`forget.rs`).
    pub struct Forgetting => forgetting;
    /// Recall: a question into ranked, cited hits and a packed context (`recall.rs`,
    /// `candidates.rs`, `relevance.rs`, `versions.rs`, `profiles.rs`, `card.rs`).
    pub struct Retrieval => retrieval;
    /// Knowledge derived from the record and read by scope: facts and their histories,
    /// profiles, the entity graph, session and unit listings, exports (`knowledge.rs`,
    /// `graph.rs`, `browse.rs`).
    pub struct Knowledge => knowledge;
    /// Trajectories: their writes and reads, the inspection verbs, and the agent working
    /// through them (`trajectories.rs`, `inspect.rs`, `agent.rs`).
    pub struct Trajectories => trajectories;
}
