//! Experience memory an agent can work in, on the public API: the inspection verbs
//! (manifest, summary, state, span, match, search), spans rendered into a context,
//! recall + inspection, and the agent controller with its optional LLM.
//!
//! The controller's model is an OpenAI-compatible server (`cairn-llm`), wired here the
//! way `enrich.rs` wires the fact reader: the engine runs the loop over the
//! [`AgentModel`] trait and knows no HTTP.
use crate::memory::space;
use crate::{Error, IngestReport, Memory, WriteOptions};
use cairn_core::{
    AgentMessage, AgentModel, AgentModelError, AgentOptions, AgentRun, AgentState, ContextRequest,
    InputError, InspectRecallOptions, InspectedRecall, Manifest, ManifestForm, Matches,
    PatternMode, RenderedContext, SpanView, StateView, TrajectoryInput, TrajectoryOverview,
    TrajectoryRecord, TrajectorySummary, Unit,
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

/// A space's trajectories, from [`Memory::trajectories`]: writing and reading them, the
/// inspection verbs an agent browses them with, and the agent controller.
#[derive(Clone, Copy)]
pub struct Trajectories<'m>(pub(crate) &'m Memory);

impl Memory {
    /// The trajectories of this memory's spaces (see [`Trajectories`]).
    pub fn trajectories(&self) -> Trajectories<'_> {
        Trajectories(self)
    }
}

impl Trajectories<'_> {
    /// Inserts an agent trajectory; inserting the same one again changes nothing.
    pub fn insert(
        &self,
        space_name: &str,
        trajectory: TrajectoryInput,
    ) -> Result<IngestReport, Error> {
        self.insert_many(space_name, vec![trajectory])
    }

    /// Inserts trajectories (embedding them in shared batches); all are validated before
    /// any is written.
    pub fn insert_many(
        &self,
        space_name: &str,
        trajectories: Vec<TrajectoryInput>,
    ) -> Result<IngestReport, Error> {
        self.insert_many_with(space_name, trajectories, &WriteOptions::default())
    }

    /// [`Trajectories::insert_many`] with write options (an idempotency key).
    pub fn insert_many_with(
        &self,
        space_name: &str,
        trajectories: Vec<TrajectoryInput>,
        opts: &WriteOptions,
    ) -> Result<IngestReport, Error> {
        Ok(self.0.engine.trajectories().insert_trajectories(
            &space(space_name)?,
            trajectories,
            opts,
        )?)
    }

    /// A trajectory exactly as inserted (every state addressable by index).
    pub fn get(&self, space_name: &str, id: &str) -> Result<Option<TrajectoryRecord>, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .trajectory(&space(space_name)?, id)?)
    }

    /// State `index` (0-based) of a trajectory, exactly as inserted, with the
    /// trajectory's state count: `None` when there is no such trajectory, `(n, None)`
    /// when it has no state `index`. Reads that state's observation only.
    pub fn stored_state(
        &self,
        space_name: &str,
        id: &str,
        index: usize,
    ) -> Result<Option<(usize, Option<AgentState>)>, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .stored_state(&space(space_name)?, id, index)?)
    }

    /// The manifest of a space: goal, outcome, steps and URLs of every trajectory.
    pub fn manifest(&self, space_name: &str) -> Result<Vec<TrajectorySummary>, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .trajectory_manifest(&space(space_name)?)?)
    }

    /// Forgets a trajectory and everything derived from it; returns units removed.
    pub fn forget(&self, space_name: &str, id: &str) -> Result<usize, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .forget_trajectory(&space(space_name)?, id)?)
    }

    /// A page of a space's manifest, in insert order: `Concise` (goal, start URL,
    /// outcome, states) or `Full` (also each state's URL, title, thought and action).
    /// `limit` defaults to 200 (concise) or 25 (full) trajectories.
    pub fn manifest_page(
        &self,
        space_name: &str,
        form: ManifestForm,
        offset: usize,
        limit: Option<usize>,
    ) -> Result<Manifest, Error> {
        Ok(self.0.engine.trajectories().inspect_manifest(
            &space(space_name)?,
            form,
            offset,
            limit,
        )?)
    }

    /// A compact summary of one trajectory: its header and a line per state (URL, page
    /// title, thought, action naming the element it acted on).
    pub fn summary(&self, space_name: &str, id: &str) -> Result<TrajectoryOverview, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .trajectory_overview(&space(space_name)?, id)?)
    }

    /// One state with its page, cut to `max_chars` characters (default 6,000; the cut is
    /// marked and says how to see all).
    pub fn state(
        &self,
        space_name: &str,
        id: &str,
        index: usize,
        max_chars: Option<usize>,
    ) -> Result<StateView, Error> {
        Ok(self.0.engine.trajectories().trajectory_state_view(
            &space(space_name)?,
            id,
            index,
            max_chars,
        )?)
    }

    /// States `start..=end` (at most 10 per call), each page cut to `max_chars`
    /// (default 2,500).
    pub fn span(
        &self,
        space_name: &str,
        id: &str,
        start: usize,
        end: usize,
        max_chars: Option<usize>,
    ) -> Result<SpanView, Error> {
        Ok(self.0.engine.trajectories().trajectory_span_view(
            &space(space_name)?,
            id,
            start,
            end,
            max_chars,
        )?)
    }

    /// The states of one trajectory holding a pattern (regex or words), with the
    /// matching lines.
    pub fn find(
        &self,
        space_name: &str,
        id: &str,
        pattern: &str,
        mode: PatternMode,
        limit: Option<usize>,
    ) -> Result<Matches, Error> {
        Ok(self.0.engine.trajectories().trajectory_match(
            &space(space_name)?,
            id,
            pattern,
            mode,
            limit,
        )?)
    }

    /// (trajectory, state) pairs of a whole space holding a pattern; in words mode the
    /// states holding most of the words first.
    pub fn search(
        &self,
        space_name: &str,
        pattern: &str,
        mode: PatternMode,
        limit: Option<usize>,
    ) -> Result<Matches, Error> {
        Ok(self.0.engine.trajectories().trajectory_search(
            &space(space_name)?,
            pattern,
            mode,
            limit,
        )?)
    }

    /// A note and trajectory spans rendered into a context within the request's token
    /// budget (never over it).
    pub fn context(
        &self,
        space_name: &str,
        request: &ContextRequest,
    ) -> Result<RenderedContext, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .render_trajectory_context(&space(space_name)?, request)?)
    }

    /// Recall + inspection, no LLM: recall shortlists trajectories, their best states
    /// become spans, the best note leads, all within the token budget.
    pub fn recall_inspect(
        &self,
        space_name: &str,
        question: &str,
        options: &InspectRecallOptions,
    ) -> Result<InspectedRecall, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .recall_inspect(&space(space_name)?, question, options)?)
    }

    /// The agent controller on a question: the model (`llm`, else the memory's own
    /// `[llm]`) triages, shortlists from the manifest, inspects and answers with a note
    /// and spans, rendered into a context. Bounded by the options' steps and time; when
    /// the model fails, times out or never answers (or there is none), the answer is the
    /// fallback (plain recall by default) and `fallback_reason` says why.
    pub fn agent(
        &self,
        space_name: &str,
        question: &str,
        options: &AgentOptions,
        llm: Option<Arc<AgentLlm>>,
    ) -> Result<AgentRun, Error> {
        let model: Option<Arc<dyn AgentModel>> = match (llm, &self.0.enricher) {
            (Some(l), _) => Some(l),
            (None, Some(e)) => Some(Arc::new(ConfiguredLlm(e.clone()))),
            (None, None) => None,
        };
        Ok(self.0.engine.trajectories().run_trajectory_agent(
            &space(space_name)?,
            question,
            model,
            options,
        )?)
    }

    /// The controller with any model (a scripted one in tests, another client).
    pub fn agent_with(
        &self,
        space_name: &str,
        question: &str,
        options: &AgentOptions,
        model: Arc<dyn AgentModel>,
    ) -> Result<AgentRun, Error> {
        Ok(self.0.engine.trajectories().run_trajectory_agent(
            &space(space_name)?,
            question,
            Some(model),
            options,
        )?)
    }

    /// The units derived from one trajectory (slices, events, its note), oldest first.
    pub fn units(&self, space_name: &str, id: &str) -> Result<Vec<Unit>, Error> {
        Ok(self
            .0
            .engine
            .trajectories()
            .trajectory_units(&space(space_name)?, id)?)
    }
}
