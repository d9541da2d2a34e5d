//! What a dataset's protocol hands a retrieval run: its plan, and its questions as the
//! protocol sees them.
use crate::records::retrieval::Evidence;
use cairn::Timestamp;

/// What the dataset protocol hands to [`Run::start`](super::Run::start).
pub struct RunPlan {
    pub dataset: &'static str,
    pub sha256: String,
    pub questions_in_file: usize,
    /// Selected question ids, in run order.
    pub selected: Vec<String>,
    pub load_seconds: f64,
    pub max_questions_per_conv: Option<usize>,
    pub as_of_description: String,
    pub dataset_notes: Vec<String>,
    pub limitations: Vec<String>,
}

/// A question as the protocol sees it.
pub struct QuestionSpec {
    pub id: String,
    pub qtype: String,
    pub question: String,
    pub answer: Option<String>,
    /// The question's own date as the dataset writes it (shown to a reader).
    pub question_date: Option<String>,
    pub as_of: Option<Timestamp>,
    pub as_of_note: Option<String>,
    /// Known before recall (abstention, adversarial).
    pub exclusion: Option<String>,
    pub evidence: Evidence,
    /// The metadata filter of the question's recalls (`--shared-space`: its user).
    pub filter: Option<serde_json::Value>,
}
