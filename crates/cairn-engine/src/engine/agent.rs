//! The agent controller: a model works through a space's trajectories with the
//! inspection verbs (triage the question, shortlist from the manifest, inspect, answer
//! with a note and spans), and the answer is rendered into a context.
//!
//! The model is any [`AgentModel`] (an OpenAI-compatible one is wired in the `cairn`
//! crate); each step is one JSON object naming a tool. A run is bounded: at most
//! `max_steps` model calls (the last is told to answer), a wall-clock budget (a call
//! still running when it is spent is abandoned), a prompt window (older results are
//! dropped first) and sized tool results. When the model fails, times out, or never
//! answers, the run falls back to plain recall (or recall + inspection), and says why.
use super::error::EngineError;
use super::services::Trajectories;
use cairn_core::inspect::{one_line, thousands, ContextRequest, ContextSpan, ManifestForm};
use cairn_core::{
    AgentFallback, AgentMessage, AgentMode, AgentModel, AgentOptions, AgentRun, AgentStep, Format,
    InputError, PatternMode, RecallOptions, SpaceId, UnitKind,
};
use serde_json::{json, Value};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the model is told: the workflow, in brief.
pub const AGENT_WORKFLOW: &str = "You find evidence for a question in a memory of web-agent runs (trajectories). A trajectory is a goal, an outcome and a numbered sequence of states; each state has the page URL, the page text (an accessibility tree), and the agent's thought and action. Work fast: every step costs time.

How to work:
1. Triage the question: a lookup (find one state whose page shows the field, value or button asked about), a comparison (one state per side), a procedure (the steps of one kind of task, taken from a run that did that task), or an error or gotcha (the state where the page said what went wrong).
2. Shortlist from the manifest: the few trajectories whose goal, start URL and outcome fit the question best.
3. Inspect only the shortlisted ones. `summary` lists a trajectory's states (URL, title, thought, action); `match` finds the states of one trajectory holding a pattern; `state` shows one page; `span` shows a few consecutive states. `search` looks for words across all trajectories, for when the manifest points nowhere.
4. Answer with `final`: a short `note` (where the evidence is, the procedure if one was asked, and, when the pages contradict the question's premise, say so plainly so the reader can decline) and `spans`, the states that prove it, most important first, usually one to three states each. Do not guess beyond what the pages show; a near match is not the thing asked about.

Reply with exactly one JSON object per turn, one of:
{\"tool\": \"summary\", \"trajectory_id\": \"...\"}
{\"tool\": \"match\", \"trajectory_id\": \"...\", \"pattern\": \"a regex or words\"}
{\"tool\": \"state\", \"trajectory_id\": \"...\", \"state\": 7}
{\"tool\": \"span\", \"trajectory_id\": \"...\", \"start\": 6, \"end\": 8}
{\"tool\": \"search\", \"pattern\": \"words\"}
{\"tool\": \"final\", \"note\": \"...\", \"spans\": [{\"trajectory_id\": \"...\", \"start_state\": 6, \"end_state\": 8}]}
State indices start at 0 and spans include both ends.";

const TOOLS: [&str; 6] = ["summary", "match", "state", "span", "search", "final"];

/// Most trajectory ids listed in the step schema (past it, any string).
const SCHEMA_IDS: usize = 300;
/// Most state indices listed in the step schema (past it, any integer).
const SCHEMA_STATES: usize = 500;

/// The JSON schema of one step (for servers with structured output): one object per
/// tool with exactly its fields, strings bounded, trajectory ids one of the space's (up
/// to [`SCHEMA_IDS`] of them), so a constrained decoder (a grammar from the schema)
/// cannot wander through fields a tool does not take or name a run that is not there.
/// `final_only` (the last step) leaves only the answer.
/// State indices are listed too (`0..states`, the longest trajectory's), up to
/// [`SCHEMA_STATES`]: a bare integer lets a small model write digits without end.
pub fn step_schema(ids: &[String], states: usize, final_only: bool) -> Value {
    let id = if !ids.is_empty() && ids.len() <= SCHEMA_IDS {
        json!({"enum": ids})
    } else {
        json!({"type": "string", "maxLength": 200})
    };
    let n = if states > 0 && states <= SCHEMA_STATES {
        json!({"enum": (0..states).collect::<Vec<_>>()})
    } else {
        json!({"type": "integer"})
    };
    let step = |tool: &str, fields: Value| {
        let mut props = serde_json::Map::new();
        props.insert("tool".into(), json!({"const": tool}));
        let mut required = vec![json!("tool")];
        for (k, v) in fields.as_object().into_iter().flatten() {
            props.insert(k.clone(), v.clone());
            required.push(json!(k));
        }
        json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
    };
    let last = step(
        "final",
        json!({
            "note": {"type": "string", "maxLength": 300},
            "spans": {"type": "array", "maxItems": 4, "items": {
                "type": "object",
                "properties": {"trajectory_id": id, "start_state": n, "end_state": n},
                "required": ["trajectory_id", "start_state", "end_state"],
                "additionalProperties": false
            }}
        }),
    );
    if final_only {
        return json!({"oneOf": [last]});
    }
    json!({"oneOf": [
        step("summary", json!({"trajectory_id": id})),
        step("match", json!({"trajectory_id": id, "pattern": {"type": "string", "maxLength": 120}})),
        step("state", json!({"trajectory_id": id, "state": n})),
        step("span", json!({"trajectory_id": id, "start": n, "end": n})),
        step("search", json!({"pattern": {"type": "string", "maxLength": 120}})),
        last,
    ]})
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn index(v: &Value, k: &str) -> Option<usize> {
    match v.get(k)? {
        Value::Number(n) => n.as_u64().map(|x| x as usize),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `s` cut to `max` characters, saying how much was left out.
fn clip_result(s: String, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s;
    }
    let kept: String = s.chars().take(max).collect();
    format!(
        "{kept}\n... [truncated: {} more characters; ask for less, e.g. one state or a match]",
        thousands(n - max)
    )
}

/// What a run did before it fell back.
#[derive(Default)]
struct Trace {
    steps: Vec<AgentStep>,
    model_calls: usize,
    model: Option<String>,
}

/// A run in progress: the model, the step schema, the conversation, the trace.
struct Loop {
    model: Arc<dyn AgentModel>,
    schema: Value,
    /// The last step's: the answer only.
    final_schema: Value,
    messages: Vec<AgentMessage>,
    trace: Trace,
    t0: Instant,
}

/// What one step leads to.
enum Next {
    Continue,
    Answer(AgentRun),
    Fallback(String),
}

/// What a model call ended in.
enum Called {
    Step(Value),
    Failed(String),
    TimedOut,
}

/// Calls the model on its own thread and waits at most `wait`: a call past the budget is
/// abandoned (its thread ends when the client's own timeout does).
fn call_model(
    model: &Arc<dyn AgentModel>,
    messages: Vec<AgentMessage>,
    schema: &Value,
    max_tokens: u32,
    wait: Duration,
) -> Called {
    let (tx, rx) = mpsc::channel();
    let m = model.clone();
    let schema = schema.clone();
    let spawned = std::thread::Builder::new()
        .name("cairn-agent-call".into())
        .spawn(move || {
            let _ = tx.send(m.next_step(&messages, &schema, max_tokens));
        });
    if let Err(e) = spawned {
        return Called::Failed(format!("could not start the model call: {e}"));
    }
    match rx.recv_timeout(wait) {
        Ok(Ok(v)) => Called::Step(v),
        Ok(Err(e)) => Called::Failed(e.message),
        Err(mpsc::RecvTimeoutError::Timeout) => Called::TimedOut,
        Err(mpsc::RecvTimeoutError::Disconnected) => Called::Failed("the model call died".into()),
    }
}

/// The conversation sent: the system prompt and the question always, then the newest
/// exchanges that fit in `max_chars`; dropped ones are listed by their tool call.
fn window(messages: &[AgentMessage], max_chars: usize) -> Vec<AgentMessage> {
    let fixed = 2.min(messages.len());
    let mut used: usize = messages[..fixed].iter().map(|m| m.content.len()).sum();
    let mut keep_from = messages.len();
    while keep_from > fixed {
        let c = messages[keep_from - 1].content.len();
        if used + c > max_chars {
            break;
        }
        used += c;
        keep_from -= 1;
    }
    // Keep exchanges whole: start at an assistant message.
    while keep_from < messages.len() && messages[keep_from].role != "assistant" {
        keep_from += 1;
    }
    let mut out = messages[..fixed].to_vec();
    let dropped: Vec<String> = messages[fixed..keep_from]
        .iter()
        .filter(|m| m.role == "assistant")
        .map(|m| one_line(&m.content, 160))
        .collect();
    if !dropped.is_empty() {
        out.push(AgentMessage::new(
            "user",
            format!(
                "(Results of your earlier steps are no longer shown: {})",
                dropped.join("; ")
            ),
        ));
    }
    out.extend_from_slice(&messages[keep_from..]);
    out
}

impl Trajectories<'_> {
    /// Runs the controller on a question over a space. Without a model the run is the
    /// fallback at once (reason "no LLM configured").
    pub fn run_trajectory_agent(
        &self,
        space: &SpaceId,
        question: &str,
        model: Option<Arc<dyn AgentModel>>,
        opts: &AgentOptions,
    ) -> Result<AgentRun, EngineError> {
        opts.validate()?;
        if question.trim().is_empty() {
            return Err(InputError::field("question", "`question` is empty").into());
        }
        let t0 = Instant::now();
        let manifest = self.inspect_manifest(space, ManifestForm::Concise, 0, None)?;
        let Some(model) = model else {
            let trace = Trace::default();
            return self.fallback(space, question, opts, "no LLM configured".into(), trace, t0);
        };
        let summaries = self.trajectory_manifest(space)?;
        let states = summaries.iter().map(|t| t.steps).max().unwrap_or(0);
        let ids: Vec<String> = summaries.into_iter().map(|t| t.id).collect();
        let mut run = Loop {
            schema: step_schema(&ids, states, false),
            final_schema: step_schema(&ids, states, true),
            messages: vec![
                AgentMessage::new("system", AGENT_WORKFLOW),
                AgentMessage::new(
                    "user",
                    format!(
                        "Question: {question}\n\nManifest:\n{}\nAt most {} states in all spans. Reply with one JSON object.",
                        clip_result(manifest.to_string(), opts.max_prompt_chars / 2),
                        opts.max_span_states
                    ),
                ),
            ],
            trace: Trace {
                model: Some(model.name()),
                ..Trace::default()
            },
            model,
            t0,
        };
        for step in 1..=opts.max_steps {
            match self.agent_step(space, question, opts, &mut run, step)? {
                Next::Continue => {}
                Next::Answer(r) => return Ok(r),
                Next::Fallback(why) => {
                    return self.fallback(space, question, opts, why, run.trace, t0);
                }
            }
        }
        let why = format!("{} steps without a final answer", opts.max_steps);
        self.fallback(space, question, opts, why, run.trace, t0)
    }

    /// One model call and what it asked for: a tool (its result joins the conversation),
    /// the final answer, or, when the model fails or time runs out, the fallback.
    fn agent_step(
        &self,
        space: &SpaceId,
        question: &str,
        opts: &AgentOptions,
        run: &mut Loop,
        step: usize,
    ) -> Result<Next, EngineError> {
        let (v, model_ms) = match ask_model(opts, run, step) {
            Ok(asked) => asked,
            Err(why) => return Ok(Next::Fallback(why)),
        };
        let tool = text(&v, "tool").unwrap_or_default();
        let t = Instant::now();
        let mut record = AgentStep {
            step,
            tool: tool.clone(),
            args: v.clone(),
            model_ms,
            tool_ms: 0.0,
            result_chars: 0,
            error: None,
        };
        if tool == "final" {
            let answer = self.finish(space, question, &v, opts)?;
            record.tool_ms = t.elapsed().as_secs_f64() * 1000.0;
            let Some((note, spans, rendered)) = answer else {
                record.error = Some("empty answer".into());
                run.trace.steps.push(record);
                let why = "the model's answer held no note and no valid span";
                return Ok(Next::Fallback(why.into()));
            };
            record.result_chars = rendered.context.len();
            run.trace.steps.push(record);
            return Ok(Next::Answer(AgentRun {
                mode: AgentMode::Agent,
                fallback_reason: None,
                model: run.trace.model.clone(),
                note,
                spans,
                context: rendered.context,
                context_tokens: rendered.tokens,
                steps: std::mem::take(&mut run.trace.steps),
                model_calls: run.trace.model_calls,
                elapsed_ms: run.t0.elapsed().as_secs_f64() * 1000.0,
            }));
        }
        let (result, error) = match self.tool(space, &tool, &v, opts) {
            Ok(r) => (clip_result(r, opts.max_result_chars), None),
            Err(e) => (format!("Error: {e}"), Some(e)),
        };
        record.tool_ms = t.elapsed().as_secs_f64() * 1000.0;
        record.result_chars = result.len();
        record.error = error;
        run.trace.steps.push(record);
        run.messages
            .push(AgentMessage::new("assistant", v.to_string()));
        let label = if tool.is_empty() { "?" } else { &tool };
        run.messages.push(AgentMessage::new(
            "user",
            format!("Result of {label}:\n{result}"),
        ));
        Ok(Next::Continue)
    }

    /// Runs one inspection tool for the model; an error is told to the model, not fatal.
    fn tool(
        &self,
        space: &SpaceId,
        tool: &str,
        v: &Value,
        opts: &AgentOptions,
    ) -> Result<String, String> {
        let id = || text(v, "trajectory_id").ok_or("give `trajectory_id`".to_string());
        let msg = |e: EngineError| e.to_string();
        match tool {
            "summary" => Ok(self
                .trajectory_overview(space, &id()?)
                .map_err(msg)?
                .to_string()),
            "state" => {
                let i = index(v, "state").ok_or("give `state` (a number)")?;
                let view =
                    self.trajectory_state_view(space, &id()?, i, Some(opts.max_result_chars));
                Ok(view.map_err(msg)?.to_string())
            }
            "span" => {
                let a = index(v, "start").ok_or("give `start` and `end`")?;
                let b = index(v, "end").unwrap_or(a);
                let per = (opts.max_result_chars / (b.saturating_sub(a) + 1)).max(200);
                let view = self.trajectory_span_view(space, &id()?, a, b.max(a), Some(per));
                Ok(view.map_err(msg)?.to_string())
            }
            "match" => {
                let p = text(v, "pattern").ok_or("give `pattern`")?;
                let id = id()?;
                // A pattern that is not a valid regex is read as words.
                let m = self
                    .trajectory_match(space, &id, &p, PatternMode::Regex, None)
                    .or_else(|_| self.trajectory_match(space, &id, &p, PatternMode::Words, None));
                Ok(m.map_err(msg)?.to_string())
            }
            "search" => {
                let p = text(v, "pattern").ok_or("give `pattern`")?;
                let m = self.trajectory_search(space, &p, PatternMode::Words, Some(10));
                Ok(m.map_err(msg)?.to_string())
            }
            other => Err(format!(
                "unknown tool {other:?}; use one of: {}",
                TOOLS.join(", ")
            )),
        }
    }

    /// The model's final answer made valid (unknown trajectories dropped, states clamped
    /// to the trajectory, at most `max_span_states` states) and rendered; `None` when
    /// nothing is left.
    #[allow(clippy::type_complexity)]
    fn finish(
        &self,
        space: &SpaceId,
        question: &str,
        v: &Value,
        opts: &AgentOptions,
    ) -> Result<Option<(String, Vec<ContextSpan>, cairn_core::RenderedContext)>, EngineError> {
        let mut note = text(v, "note").unwrap_or_default();
        if note.len() > cairn_core::bounds::MAX_NOTE_BYTES {
            note = one_line(&note, cairn_core::bounds::MAX_NOTE_BYTES / 4);
        }
        let mut spans: Vec<ContextSpan> = Vec::new();
        let mut states = 0;
        for s in v
            .get("spans")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(a)) = (text(s, "trajectory_id"), index(s, "start_state")) else {
                continue;
            };
            let b = index(s, "end_state").unwrap_or(a);
            let (a, b) = (a.min(b), a.max(b));
            let Ok(o) = self.trajectory_overview(space, &id) else {
                continue;
            };
            if a >= o.states {
                continue;
            }
            let b = b.min(o.states - 1);
            let room = opts.max_span_states.saturating_sub(states);
            if room == 0 {
                break;
            }
            let b = b.min(a + room - 1);
            states += b - a + 1;
            spans.push(ContextSpan {
                trajectory_id: id,
                start_state: a,
                end_state: b,
            });
        }
        if note.is_empty() && spans.is_empty() {
            return Ok(None);
        }
        let rendered = self.render_trajectory_context(
            space,
            &ContextRequest {
                note: note.clone(),
                spans: spans.clone(),
                token_budget: opts.token_budget,
                query: Some(question.to_string()),
            },
        )?;
        Ok(Some((note, spans, rendered)))
    }

    fn fallback(
        &self,
        space: &SpaceId,
        question: &str,
        opts: &AgentOptions,
        reason: String,
        trace: Trace,
        t0: Instant,
    ) -> Result<AgentRun, EngineError> {
        tracing::info!(%reason, "trajectory agent falls back");
        let (note, spans, context, tokens) = match opts.fallback {
            AgentFallback::Recall => {
                let r = self.retrieval().recall(
                    space,
                    question,
                    &RecallOptions {
                        top_k: opts.fallback_top_k,
                        token_budget: opts.token_budget,
                        format: Format::Raw, // A fallback never answers with an empty context.
                        min_relevance: -1.0,
                        scope: cairn_core::ScopeOptions {
                            kinds: Some(vec![UnitKind::Slice, UnitKind::Event, UnitKind::Note]),
                            ..Default::default()
                        },
                        ..RecallOptions::default()
                    },
                )?;
                let spans = r
                    .hits
                    .iter()
                    .filter(|h| r.context_unit_ids.contains(&h.unit_id))
                    .filter_map(|h| {
                        Some(ContextSpan::of_states(h.trajectory_id.clone()?, h.states?))
                    })
                    .collect();
                (String::new(), spans, r.context, r.context_tokens)
            }
            AgentFallback::RecallInspection => {
                let r = self.recall_inspect(space, question, &opts.inspect_options())?;
                (r.note, r.spans, r.context.context, r.context.tokens)
            }
        };
        Ok(AgentRun {
            mode: AgentMode::Fallback,
            fallback_reason: Some(reason),
            model: trace.model,
            note,
            spans,
            context,
            context_tokens: tokens,
            steps: trace.steps,
            model_calls: trace.model_calls,
            elapsed_ms: t0.elapsed().as_secs_f64() * 1000.0,
        })
    }
}

/// Step `step`'s call to the model, within what is left of the time budget (on the last
/// step it may only answer): the step it returned and the milliseconds it took, or the
/// reason to fall back when the budget is spent or the model failed.
fn ask_model(opts: &AgentOptions, run: &mut Loop, step: usize) -> Result<(Value, f64), String> {
    let spent = run.t0.elapsed();
    let budget = Duration::from_millis(opts.time_budget_ms);
    if spent >= budget {
        return Err(format!("time budget of {} ms spent", opts.time_budget_ms));
    }
    let mut prompt = window(&run.messages, opts.max_prompt_chars);
    let last = step == opts.max_steps;
    if last {
        prompt.push(AgentMessage::new(
            "user",
            "This is your last step: answer now with {\"tool\": \"final\", ...}.",
        ));
    }
    let t = Instant::now();
    run.trace.model_calls += 1;
    // On the last step a constrained decoder can only answer.
    let schema = if last { &run.final_schema } else { &run.schema };
    let called = call_model(
        &run.model,
        prompt,
        schema,
        opts.max_tokens_per_step,
        budget - spent,
    );
    let v = match called {
        Called::Step(v) => v,
        Called::Failed(e) => return Err(format!("LLM failed: {}", one_line(&e, 300))),
        Called::TimedOut => {
            return Err(format!(
                "LLM timed out (time budget {} ms)",
                opts.time_budget_ms
            ))
        }
    };
    let model_ms = t.elapsed().as_secs_f64() * 1000.0;
    Ok((v, model_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_schema_names_only_the_spaces_runs() {
        let s = step_schema(&["a".into(), "b".into()], 3, false);
        let alts = s["oneOf"].as_array().unwrap();
        assert_eq!(alts.len(), TOOLS.len());
        assert_eq!(
            alts[0]["properties"]["trajectory_id"]["enum"],
            json!(["a", "b"])
        );
        assert_eq!(alts[0]["required"], json!(["tool", "trajectory_id"]));
        assert_eq!(alts[5]["properties"]["tool"]["const"], "final");
        let many: Vec<String> = (0..400).map(|i| i.to_string()).collect();
        assert_eq!(
            step_schema(&many, 3, false)["oneOf"][0]["properties"]["trajectory_id"]["type"],
            "string"
        );
        assert_eq!(
            s["oneOf"][2]["properties"]["state"]["enum"],
            json!([0, 1, 2])
        );
        let last = step_schema(&["a".into()], 3, true);
        assert_eq!(last["oneOf"].as_array().unwrap().len(), 1);
        assert_eq!(last["oneOf"][0]["properties"]["tool"]["const"], "final");
    }

    #[test]
    fn the_window_keeps_the_question_and_the_newest_exchanges() {
        let mut m = vec![
            AgentMessage::new("system", "sys"),
            AgentMessage::new("user", "question"),
        ];
        for i in 0..5 {
            m.push(AgentMessage::new(
                "assistant",
                format!("{{\"tool\":\"state\",\"state\":{i}}}"),
            ));
            m.push(AgentMessage::new("user", "r".repeat(100)));
        }
        let w = window(&m, 400);
        assert_eq!(w[1].content, "question");
        assert!(w[2].content.contains("no longer shown"), "{:?}", w[2]);
        assert_eq!(w.last().unwrap().content.len(), 100);
        assert!(w[3].role == "assistant");
        let total: usize = w.iter().map(|x| x.content.len()).sum();
        assert!(total < 700);
        assert_eq!(window(&m[..2], 10).len(), 2);
    }
}
