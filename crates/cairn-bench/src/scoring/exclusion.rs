//! Why a question is left out of the retrieval aggregates (counted, not scored).
pub const ABSTENTION: &str = "abstention";
pub const ADVERSARIAL: &str = "adversarial (category 5)";
pub const ERROR: &str = "error";
pub const NO_EVIDENCE: &str = "no evidence";
