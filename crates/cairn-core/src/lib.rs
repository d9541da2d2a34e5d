//! Core vocabulary of Cairn: spaces, sources (the verbatim record), memory units,
//! recall options and results, and the traits that storage backends and embedders
//! implement.
//!
//! This crate owns *what things are*. It must never do I/O: no files, no network, no
//! clocks other than values handed to it. Every other crate depends on it; it depends on
//! no other Cairn crate.

pub mod error;
pub mod filter;
pub mod ids;
pub mod recall;
pub mod source;
pub mod time;
pub mod traits;
pub mod unit;

pub use error::{CoreError, InputError};
pub use filter::Filter;
pub use ids::SpaceId;
pub use recall::{Format, Hit, Recall, RecallOptions, Timings};
pub use source::{Message, Role, SessionInput, SessionRecord};
pub use time::Timestamp;
pub use traits::{
    EmbedError, Embedder, EmbeddingCache, RecordStore, SpaceStats, StoreError, TextIndex,
    TextQuery, VectorIndex,
};
pub use unit::{Provenance, Unit, UnitKind};
