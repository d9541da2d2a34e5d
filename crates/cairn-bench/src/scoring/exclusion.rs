//! Why a question is left out of the retrieval aggregates (counted, not scored).
pub const ABSTENTION: &str = "abstention";
pub const ADVERSARIAL: &str = "adversarial (category 5)";
pub const ERROR: &str = "error";
pub const NO_EVIDENCE: &str = "no evidence";
/// A question of another source asked of the space (`--off-topic`): scored apart, by
/// whether recall answered `no_relevant_memory`.
pub const OFF_TOPIC: &str = "off-topic";
