//! The agent controller's vocabulary: a model that picks the next inspection step, the
//! options bounding a run (steps, time, tokens), and what a run did. The controller loop
//! itself is in the engine; a model over an OpenAI-compatible server is wired in the
//! `cairn` crate (the engine knows no HTTP).
use crate::inspect::{ContextSpan, InspectRecallOptions};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of the controller's conversation with its model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    pub content: String,
}

impl AgentMessage {
    pub fn new(role: &str, content: impl Into<String>) -> Self {
        Self {
            role: role.to_string(),
            content: content.into(),
        }
    }
}

/// Why a model gave no step: the server is down, slow, refused, or answered without JSON.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct AgentModelError {
    pub message: String,
}

/// A model that answers the conversation so far with its next step, as a JSON value of
/// the given schema (`{"tool": "...", ...}`).
pub trait AgentModel: Send + Sync {
    /// How reports name the model (`MODEL @ URL`).
    fn name(&self) -> String;
    fn next_step(
        &self,
        messages: &[AgentMessage],
        schema: &Value,
        max_tokens: u32,
    ) -> Result<Value, AgentModelError>;
}

/// What the controller falls back to when its model fails, times out, or runs out of
/// steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum AgentFallback {
    /// Plain recall over the trajectory pools; its packed context is the answer.
    #[default]
    Recall,
    /// Recall + inspection (recall shortlists, the best states become spans).
    RecallInspection,
}

/// Bounds of one controller run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentOptions {
    /// Model calls at most (the last one is asked for the final answer).
    pub max_steps: usize,
    /// Wall-clock budget of the whole run, milliseconds; a model call still running
    /// when it is spent is abandoned.
    pub time_budget_ms: u64,
    /// Tokens of the rendered context.
    pub token_budget: usize,
    /// Tokens a model may write per step (the step schema bounds every string, so a
    /// step fits in this even when every character is a token).
    pub max_tokens_per_step: u32,
    /// Characters of conversation sent per call (older tool results are dropped first).
    pub max_prompt_chars: usize,
    /// Characters of one tool result shown to the model.
    pub max_result_chars: usize,
    /// Most states across all spans of the answer.
    pub max_span_states: usize,
    pub fallback: AgentFallback,
    /// Hits of the fallback recall.
    pub fallback_top_k: usize,
}

pub use crate::bounds::MAX_AGENT_TIME_MS;

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            max_steps: 8,
            time_budget_ms: 120_000,
            token_budget: crate::inspect::DEFAULT_CONTEXT_TOKENS,
            max_tokens_per_step: 600,
            max_prompt_chars: 12_000,
            max_result_chars: 3_000,
            max_span_states: 20,
            fallback: AgentFallback::Recall,
            fallback_top_k: 10,
        }
    }
}

impl AgentOptions {
    /// Options of the recall + inspection fallback, within this run's token budget.
    pub fn inspect_options(&self) -> InspectRecallOptions {
        InspectRecallOptions {
            token_budget: self.token_budget,
            ..InspectRecallOptions::default()
        }
    }

    pub fn validate(&self) -> Result<(), crate::InputError> {
        let bad = |field: &str, what: String| Err(crate::InputError::new(field, what));
        use crate::bounds::{in_range, MAX_AGENT_STEPS, MAX_TOKEN_BUDGET, MAX_TOP_K};
        in_range("max_steps", self.max_steps, MAX_AGENT_STEPS)?;
        if self.time_budget_ms == 0 || self.time_budget_ms > MAX_AGENT_TIME_MS {
            return bad(
                "time_budget_ms",
                format!(
                    "`time_budget_ms` must be 1..={MAX_AGENT_TIME_MS}, got {}",
                    self.time_budget_ms
                ),
            );
        }
        in_range("token_budget", self.token_budget, MAX_TOKEN_BUDGET)?;
        in_range("fallback_top_k", self.fallback_top_k, MAX_TOP_K)
    }
}

/// How a run's answer was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentMode {
    /// The model's note and spans.
    Agent,
    /// The fallback (see `fallback_reason`).
    Fallback,
}

/// One step of a run: the tool the model chose and what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentStep {
    pub step: usize,
    pub tool: String,
    /// The model's step as it gave it.
    pub args: Value,
    /// Wall time of the model call and the tool, milliseconds.
    pub model_ms: f64,
    pub tool_ms: f64,
    /// Characters of the tool result shown to the model.
    pub result_chars: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a controller run produced: the note and spans, their rendered context, and the
/// trace of its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRun {
    pub mode: AgentMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub note: String,
    pub spans: Vec<ContextSpan>,
    pub context: String,
    pub context_tokens: usize,
    pub steps: Vec<AgentStep>,
    pub model_calls: usize,
    pub elapsed_ms: f64,
}
