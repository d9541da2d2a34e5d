//! Experience memory an agent can work in, on the public API: the inspection verbs
//! (manifest, summary, state, span, match, search), spans rendered into a context,
//! recall + inspection, and the agent controller with its optional LLM.
//!
//! The controller's model is an OpenAI-compatible server (`cairn-llm`), wired here the
//! way `enrich.rs` wires the fact reader: the engine runs the loop over the
//! [`AgentModel`] trait and knows no HTTP.
use crate::memory::space;
use crate::{Error, Memory};
use cairn_core::{
    AgentMessage, AgentModel, AgentModelError, AgentOptions, AgentRun, ContextRequest, InputError,
    InspectRecallOptions, InspectedRecall, Manifest, ManifestForm, Matches, PatternMode,
    RenderedContext, SpanView, StateView, TrajectoryOverview,
};
use cairn_llm::{ChatMessage, ChatRequest, LlmClient, LlmConfig};
use serde_json::Value;
use std::sync::Arc;

fn chat_messages(messages: &[AgentMessage]) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| ChatMessage {
            role: m.role.clone(),
            content: m.content.clone(),
        })
        .collect()
}

fn next_step(
    client: &LlmClient,
    messages: &[AgentMessage],
    schema: &Value,
    max_tokens: u32,
) -> Result<Value, AgentModelError> {
    let req =
        ChatRequest::new(chat_messages(messages), max_tokens).with_schema("step", schema.clone());
    client
        .chat_json(&req)
        .map(|(v, _)| v)
        .map_err(|e| AgentModelError {
            message: e.to_string(),
        })
}

/// The controller's model: an OpenAI-compatible chat server, asked for one JSON step at
/// a time (structured output where the server takes it, parsed tolerantly).
pub struct AgentLlm {
    client: LlmClient,
}

impl AgentLlm {
    pub fn new(config: LlmConfig) -> Result<Self, Error> {
        Ok(Self {
            client: LlmClient::new(config).map_err(|e| InputError::new("llm", e.to_string()))?,
        })
    }

    /// Calls and tokens used so far.
    pub fn usage(&self) -> cairn_llm::Usage {
        self.client.usage()
    }
}

impl AgentModel for AgentLlm {
    fn name(&self) -> String {
        self.client.name()
    }

    fn next_step(
        &self,
        messages: &[AgentMessage],
        schema: &Value,
        max_tokens: u32,
    ) -> Result<Value, AgentModelError> {
        next_step(&self.client, messages, schema, max_tokens)
    }
}

/// The memory's own `[llm]` (the enrichment reader's client) as the controller's model.
struct ConfiguredLlm(Arc<crate::enrich::LlmFactReader>);

impl AgentModel for ConfiguredLlm {
    fn name(&self) -> String {
        self.0.client().name()
    }

    fn next_step(
        &self,
        messages: &[AgentMessage],
        schema: &Value,
        max_tokens: u32,
    ) -> Result<Value, AgentModelError> {
        next_step(self.0.client(), messages, schema, max_tokens)
    }
}

impl Memory {
    /// A page of a space's manifest, in insert order: `Concise` (goal, start URL,
    /// outcome, states) or `Full` (also each state's URL, title, thought and action).
    /// `limit` defaults to 200 (concise) or 25 (full) trajectories.
    pub fn trajectory_manifest_page(
        &self,
        space_name: &str,
        form: ManifestForm,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<Manifest, Error> {
        Ok(self
            .engine
            .trajectories()
            .inspect_manifest(&space(space_name)?, form, offset, limit)?)
    }

    /// A compact summary of one trajectory: its header and a line per state (URL, page
    /// title, thought, action naming the element it acted on).
    pub fn trajectory_summary(
        &self,
        space_name: &str,
        id: &str,
    ) -> Result<TrajectoryOverview, Error> {
        Ok(self
            .engine
            .trajectories()
            .trajectory_overview(&space(space_name)?, id)?)
    }

    /// One state with its page, cut to `max_chars` characters (default 6,000; the cut is
    /// marked and says how to see all).
    pub fn trajectory_state(
        &self,
        space_name: &str,
        id: &str,
        index: usize,
        max_chars: Option<usize>,
    ) -> Result<StateView, Error> {
        Ok(self.engine.trajectories().trajectory_state_view(
            &space(space_name)?,
            id,
            index,
            max_chars,
        )?)
    }

    /// States `start..=end` (at most 10 per call), each page cut to `max_chars`
    /// (default 2,500).
    pub fn trajectory_span(
        &self,
        space_name: &str,
        id: &str,
        start: usize,
        end: usize,
        max_chars: Option<usize>,
    ) -> Result<SpanView, Error> {
        Ok(self.engine.trajectories().trajectory_span_view(
            &space(space_name)?,
            id,
            start,
            end,
            max_chars,
        )?)
    }

    /// The states of one trajectory holding a pattern (regex or words), with the
    /// matching lines.
    pub fn trajectory_match(
        &self,
        space_name: &str,
        id: &str,
        pattern: &str,
        mode: PatternMode,
        limit: Option<usize>,
    ) -> Result<Matches, Error> {
        Ok(self.engine.trajectories().trajectory_match(
            &space(space_name)?,
            id,
            pattern,
            mode,
            limit,
        )?)
    }

    /// (trajectory, state) pairs of a whole space holding a pattern; in words mode the
    /// states holding most of the words first.
    pub fn trajectory_search(
        &self,
        space_name: &str,
        pattern: &str,
        mode: PatternMode,
        limit: Option<usize>,
    ) -> Result<Matches, Error> {
        Ok(self.engine.trajectories().trajectory_search(
            &space(space_name)?,
            pattern,
            mode,
            limit,
        )?)
    }

    /// A note and trajectory spans rendered into a context within the request's token
    /// budget (never over it).
    pub fn trajectory_context(
        &self,
        space_name: &str,
        request: &ContextRequest,
    ) -> Result<RenderedContext, Error> {
        Ok(self
            .engine
            .trajectories()
            .render_trajectory_context(&space(space_name)?, request)?)
    }

    /// Recall + inspection, no LLM: recall shortlists trajectories, their best states
    /// become spans, the best note leads, all within the token budget.
    pub fn trajectory_recall_inspect(
        &self,
        space_name: &str,
        question: &str,
        options: &InspectRecallOptions,
    ) -> Result<InspectedRecall, Error> {
        Ok(self
            .engine
            .trajectories()
            .recall_inspect(&space(space_name)?, question, options)?)
    }

    /// The agent controller on a question: the model (`llm`, else the memory's own
    /// `[llm]`) triages, shortlists from the manifest, inspects and answers with a note
    /// and spans, rendered into a context. Bounded by the options' steps and time; when
    /// the model fails, times out or never answers (or there is none), the answer is the
    /// fallback (plain recall by default) and `fallback_reason` says why.
    pub fn trajectory_agent(
        &self,
        space_name: &str,
        question: &str,
        options: &AgentOptions,
        llm: Option<Arc<AgentLlm>>,
    ) -> Result<AgentRun, Error> {
        let model: Option<Arc<dyn AgentModel>> = match (llm, &self.enricher) {
            (Some(l), _) => Some(l),
            (None, Some(e)) => Some(Arc::new(ConfiguredLlm(e.clone()))),
            (None, None) => None,
        };
        Ok(self.engine.trajectories().run_trajectory_agent(
            &space(space_name)?,
            question,
            model,
            options,
        )?)
    }

    /// The controller with any model (a scripted one in tests, another client).
    pub fn trajectory_agent_with(
        &self,
        space_name: &str,
        question: &str,
        options: &AgentOptions,
        model: Arc<dyn AgentModel>,
    ) -> Result<AgentRun, Error> {
        Ok(self.engine.trajectories().run_trajectory_agent(
            &space(space_name)?,
            question,
            Some(model),
            options,
        )?)
    }
}
